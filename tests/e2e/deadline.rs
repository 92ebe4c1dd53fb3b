//! One deadline: a call ends within its time limit and a stated margin, however its
//! steps share the time. The page's link keeps the page busy for four seconds when
//! clicked, and the page it leads to does not answer: a click that gave each step the
//! whole limit would take its limit plus those four seconds.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::{Site, Tabwire};

/// The click's time limit, in seconds.
const LIMIT_S: f64 = 6.0;
/// What a call may run past its limit (`engine::CALL_MARGIN`, two seconds), and what a
/// loaded machine adds to carrying the reply back (one and a half more).
const PAST_THE_LIMIT: Duration = Duration::from_millis(3500);

/// Runs `call` (a click on the slow link of the page opened with `?key=KEY`), lets the
/// held page answer, and holds the call to its limit and margin.
async fn timed<T>(site: &Site, key: &str, what: &str, call: impl Future<Output = T>) -> T {
    let started = Instant::now();
    let reply = call.await;
    let took = started.elapsed();
    site.release(key);
    let bound = Duration::from_secs_f64(LIMIT_S) + PAST_THE_LIMIT;
    assert!(
        took <= bound,
        "{what} took {took:?}, past its limit of {LIMIT_S} s and the margin ({bound:?} in all)"
    );
    reply
}

#[tokio::test]
async fn a_btap_click_that_navigates_slowly_ends_within_its_limit() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("deadline-btap", &[]).await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("slow-link.html?key=deadline-btap") }),
    )
    .await;
    let click = tw.call(
        "page_click",
        json!({ "selector": "#late", "timeout": LIMIT_S }),
    );
    let clicked = timed(&site, "deadline-btap", "page_click", click).await;
    // The press reached the page: the reply says so, whether the call had time to see
    // the rest (a success) or was stopped at its limit (a timeout not safe to repeat).
    let envelope = clicked.envelope.clone();
    if clicked.is_error {
        assert_eq!(clicked.error_code(), "timeout", "{envelope}");
        assert_eq!(envelope["input_dispatched"], true, "{envelope}");
        assert_eq!(envelope["retry_safe"], false, "{envelope}");
    } else {
        clicked.ok();
    }
    // The server goes on serving.
    let ran = tw
        .ok("execute_js", json!({ "script": "return 1 + 1" }))
        .await;
    assert_eq!(ran["js_return"], 2, "{ran}");
}

#[tokio::test]
async fn a_chrome_click_that_navigates_slowly_ends_within_its_limit() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("deadline-chrome", &["--face", "chrome"]).await;
    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("slow-link.html?key=deadline-chrome") }),
    )
    .await;
    let click = tw.chrome(
        "chrome_click_element",
        json!({
            "selector": "#late",
            "waitForNavigation": true,
            "timeout": LIMIT_S * 1000.0,
        }),
    );
    let clicked = timed(&site, "deadline-chrome", "chrome_click_element", click).await;
    // The navigation the click started had not finished when time ran out: either the
    // reply says so, or the call was stopped at its limit and says that.
    if clicked.is_error {
        assert!(clicked.text.contains("time limit"), "{}", clicked.text);
    } else {
        assert_eq!(clicked.payload["success"], true, "{}", clicked.text);
        // Either no navigation was seen yet, or the one seen is on its way, not landed.
        let navigation = &clicked.payload["navigation"];
        assert!(
            navigation.is_null() || navigation["committed"] == false,
            "{}",
            clicked.text
        );
    }
    let ran = tw
        .chrome_ok("chrome_javascript", json!({ "code": "return 1 + 1" }))
        .await;
    assert_eq!(ran["success"], true, "{ran}");
}
