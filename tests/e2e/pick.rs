//! `chrome_request_element_selection`: a person (here, trusted clicks sent by the test
//! over its own CDP connection) points at each element the panel asks for; the refs
//! answered act on those very elements, in a frame too.

use serde_json::{Value, json};

use crate::fidelity::Cdp;
use crate::support::{DebuggingBrowser, Site, Tabwire, poll_until};

/// A trusted click at a point of the top viewport.
async fn click(cdp: &Cdp, session: &str, x: f64, y: f64) {
    for (kind, button) in [
        ("mouseMoved", "none"),
        ("mousePressed", "left"),
        ("mouseReleased", "left"),
    ] {
        cdp.call(
            Some(session),
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": x, "y": y, "button": button, "clickCount": 1 }),
        )
        .await;
    }
}

/// What the panel says now (empty when it is not shown).
async fn panel(cdp: &Cdp, session: &str) -> String {
    let read = cdp
        .call(
            Some(session),
            "Runtime.evaluate",
            json!({ "expression": "(document.querySelector('tabwire-picker')?.shadowRoot?.textContent) || ''", "returnByValue": true }),
        )
        .await;
    read["result"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_person_picks_elements_and_the_refs_act_on_them_in_a_frame_too() {
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("pick-browser").await;
    let tw = Tabwire::stdio_with(
        "pick",
        &["--cdp-endpoint", &browser.http, "--face", "chrome"],
    )
    .await;
    let url = site.url("pick.html");
    tw.chrome_ok("chrome_navigate", json!({ "url": url })).await;
    let cdp = Cdp::connect(&browser.ws).await;
    let targets = cdp.call(None, "Target.getTargets", json!({})).await;
    let target = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["url"] == url.as_str())
        .and_then(|t| t["targetId"].as_str())
        .expect("the page's target")
        .to_owned();
    let session = cdp.attach(&target).await;

    let asked = tw.chrome(
        "chrome_request_element_selection",
        json!({ "requests": [
            { "id": "submit", "name": "the Submit button", "description": "at the top left" },
            { "id": "save", "name": "Save draft", "description": "inside the frame" },
        ], "timeoutMs": 60_000 }),
    );
    let person = async {
        poll_until("the panel to ask for the first element", || async {
            panel(&cdp, &session)
                .await
                .contains("Click 1 of 2: the Submit button")
        })
        .await;
        click(&cdp, &session, 100.0, 60.0).await;
        poll_until("the panel to ask for the second element", || async {
            panel(&cdp, &session)
                .await
                .contains("Click 2 of 2: Save draft")
        })
        .await;
        // The frame sits at (0, 200); its button at (20, 20) inside it.
        click(&cdp, &session, 70.0, 235.0).await;
    };
    let (reply, ()) = tokio::join!(asked, person);
    assert!(!reply.is_error, "{}", reply.text);
    let answer = reply.payload;
    assert_eq!(answer["success"], true, "{answer}");
    let results = answer["results"].as_array().unwrap();
    let submit = &results[0]["element"];
    assert_eq!(results[0]["id"], "submit");
    assert_eq!(submit["selector"], "#submit", "{answer}");
    assert_eq!(submit["tagName"], "BUTTON");
    assert_eq!(submit["frameId"], 0);
    let save = &results[1]["element"];
    assert_eq!(save["selector"], "#save", "{answer}");
    assert_eq!(save["framePath"], json!(["#frame"]));
    assert!(save["frameId"].is_string(), "{answer}");
    assert_eq!(save["text"], "Save draft");
    let center_y = save["center"]["y"].as_f64().unwrap();
    assert!((center_y - 235.0).abs() < 2.0, "{save}");
    // The panel is gone; the refs act on the elements picked.
    assert_eq!(panel(&cdp, &session).await, "");
    for (element, title) in [(save, "save clicked"), (submit, "submit clicked")] {
        tw.chrome_ok("chrome_click_element", json!({ "ref": element["ref"] }))
            .await;
        let seen = tw
            .chrome_ok(
                "chrome_javascript",
                json!({ "code": "return document.title" }),
            )
            .await;
        assert_eq!(seen["result"], title);
    }
}

#[tokio::test]
async fn nobody_picking_ends_at_the_timeout_with_what_is_missing() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("pick-timeout", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("pick.html") }))
        .await;
    let reply = tw
        .chrome_ok(
            "chrome_request_element_selection",
            json!({ "requests": [{ "id": "a", "name": "anything" }], "timeoutMs": 1500 }),
        )
        .await;
    assert_eq!(reply["timedOut"], true, "{reply}");
    assert_eq!(reply["missingRequestIds"], json!(["a"]));
    assert_eq!(reply["results"][0]["element"], Value::Null);
    // The page is as it was: no panel, and clicks work as before.
    let panel = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return String(!!document.querySelector('tabwire-picker'))" }),
        )
        .await;
    assert_eq!(panel["result"], "false");
    for bad in [json!([]), json!([{ "id": "x" }]), json!("submit")] {
        let refused = tw
            .chrome(
                "chrome_request_element_selection",
                json!({ "requests": bad }),
            )
            .await;
        assert!(
            refused.is_error && refused.text.contains("requests"),
            "{}",
            refused.text
        );
    }
}
