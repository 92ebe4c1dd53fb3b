//! `chrome_request_element_selection`: a person (here, trusted clicks sent by the test
//! over its own CDP connection) points at each element the panel asks for; the refs
//! answered act on those very elements, in a frame too.

use serde_json::{Value, json};

use crate::fidelity::Cdp;
use crate::support::{
    DebuggingBrowser, Site, Tabwire, devtools_endpoint, over_extension, poll_until, scratch,
    start_linked_browser,
};

/// tabwire's chrome face on the suite's link, and the test's own CDP connection to the
/// same browser, for the person's trusted clicks: a browser of the test's own behind
/// `--cdp-endpoint`, or the extension's browser opened with a DevTools port too.
struct Picking {
    tw: Tabwire,
    ws: String,
    _browser: Option<DebuggingBrowser>,
}

impl Picking {
    async fn start(name: &str) -> Picking {
        if over_extension() {
            let work = scratch(name);
            let mut tw = Tabwire::stdio_in(
                work.clone(),
                &["--extension", "--broker-grace", "0", "--face", "chrome"],
            )
            .await;
            let mut chromium =
                start_linked_browser(&work, "browser-profile", &["--remote-debugging-port=0"])
                    .await;
            let ws = devtools_endpoint(&mut chromium).await;
            tw.linked_browser = Some(chromium);
            return Picking {
                tw,
                ws,
                _browser: None,
            };
        }
        let browser = DebuggingBrowser::launch(&format!("{name}-browser")).await;
        let tw =
            Tabwire::stdio_with(name, &["--cdp-endpoint", &browser.http, "--face", "chrome"]).await;
        Picking {
            tw,
            ws: browser.ws.clone(),
            _browser: Some(browser),
        }
    }

    /// Opens `url` once its frames have said they are loaded; the test's own session
    /// on its tab.
    async fn open(&self, url: &str, frames: u32) -> (Cdp, String) {
        self.tw
            .chrome_ok("chrome_navigate", json!({ "url": url }))
            .await;
        poll_until("the frames to load", || async {
            self.tw
                .chrome_ok(
                    "chrome_javascript",
                    json!({ "code": "return String(window.framesReady)" }),
                )
                .await["result"]
                .as_str()
                == Some(frames.to_string().as_str())
        })
        .await;
        let cdp = Cdp::connect(&self.ws).await;
        let targets = cdp.call(None, "Target.getTargets", json!({})).await;
        let target = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page" && t["url"] == url)
            .and_then(|t| t["targetId"].as_str())
            .expect("the page's target")
            .to_owned();
        let session = cdp.attach(&target).await;
        (cdp, session)
    }

    /// Clicks the trusted points given, each once the panel asks for its element, while
    /// `chrome_request_element_selection` asks for them; its answer.
    async fn pick(
        &self,
        cdp: &Cdp,
        session: &str,
        requests: Value,
        points: &[(f64, f64)],
    ) -> Value {
        let asked = self.tw.chrome(
            "chrome_request_element_selection",
            json!({ "requests": requests, "timeoutMs": 60_000 }),
        );
        let person = async {
            for (i, (x, y)) in points.iter().enumerate() {
                let asking = format!("Click {} of {}", i + 1, points.len());
                poll_until("the panel to ask for the next element", || async {
                    panel(cdp, session).await.contains(&asking)
                })
                .await;
                click(cdp, session, *x, *y).await;
            }
        };
        let (reply, ()) = tokio::join!(asked, person);
        assert!(!reply.is_error, "{}", reply.text);
        assert_eq!(reply.payload["success"], true, "{}", reply.payload);
        reply.payload
    }

    /// Clicks each picked element by its ref; what the page's title says after each.
    async fn click_refs(&self, elements: &[&Value]) -> Vec<String> {
        let mut titles = Vec::new();
        for element in elements {
            self.tw
                .chrome_ok("chrome_click_element", json!({ "ref": element["ref"] }))
                .await;
            let title = || async {
                let seen = self
                    .tw
                    .chrome_ok(
                        "chrome_javascript",
                        json!({ "code": "return document.title" }),
                    )
                    .await;
                seen["result"].as_str().unwrap_or_default().to_owned()
            };
            // A frame's click reaches the page by message, a moment later.
            poll_until("the click to be told", || async {
                title().await.contains("clicked")
            })
            .await;
            titles.push(title().await);
            self.tw
                .chrome_ok(
                    "chrome_javascript",
                    json!({ "code": "document.title = 'Pick'; return 1" }),
                )
                .await;
        }
        titles
    }
}

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
    let picking = Picking::start("pick").await;
    let (cdp, session) = picking.open(&site.url("pick.html"), 1).await;
    // The Submit button at (40, 40); the frame at (0, 200), its button at (20, 20) in it.
    let answer = picking
        .pick(
            &cdp,
            &session,
            json!([
                { "id": "submit", "name": "the Submit button", "description": "at the top left" },
                { "id": "save", "name": "Save draft", "description": "inside the frame" },
            ]),
            &[(100.0, 60.0), (70.0, 235.0)],
        )
        .await;
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
    let here = format!("127.0.0.1:{}", site.port);
    let titles = picking.click_refs(&[save, submit]).await;
    assert_eq!(
        titles,
        [
            format!("save clicked at {here}"),
            "submit clicked".to_owned()
        ]
    );
}

/// An element inside a component's shadow root: named within its root, with the host
/// that holds it, and its ref acts on that very button.
#[tokio::test]
async fn an_element_in_a_shadow_root_is_picked_and_acted_on() {
    let site = Site::start().await;
    let picking = Picking::start("pick-shadow").await;
    let (cdp, session) = picking.open(&site.url("pick.html"), 1).await;
    // The component's button is at (200, 40), 120 x 40.
    let answer = picking
        .pick(
            &cdp,
            &session,
            json!([{ "id": "inside", "name": "the button in the card" }]),
            &[(260.0, 60.0)],
        )
        .await;
    let inside = &answer["results"][0]["element"];
    assert_eq!(inside["selector"], "button", "{answer}");
    assert_eq!(inside["shadowHosts"], json!(["#card"]), "{answer}");
    assert_eq!(inside["text"], "Inside");
    let titles = picking.click_refs(&[inside]).await;
    assert_eq!(titles, ["inside clicked"]);
}

/// Frames a page's script cannot see into: another site's (in its own renderer, so the
/// click lands in another CDP session) and the same site's on another port (the same
/// renderer, but `frameElement` hidden).
#[tokio::test]
async fn elements_in_cross_origin_frames_are_picked_and_acted_on() {
    let site = Site::start().await;
    let other_port = Site::start().await;
    let far = format!("localhost:{}", site.port);
    let near = format!("127.0.0.1:{}", other_port.port);
    let picking = Picking::start("pick-cross").await;
    let url = site.url(&format!(
        "pick-cross.html?far=http://{far}&near=http://{near}"
    ));
    let (cdp, session) = picking.open(&url, 2).await;
    // Each frame's button is at (20, 20) inside a 4 px border: #far at (0, 200), #near
    // at (400, 200); the buttons are 100 x 30.
    let answer = picking
        .pick(
            &cdp,
            &session,
            json!([
                { "id": "far", "name": "Save draft, left" },
                { "id": "near", "name": "Save draft, right" },
            ]),
            &[(74.0, 239.0), (474.0, 239.0)],
        )
        .await;
    let results = answer["results"].as_array().unwrap();
    let (left, right) = (&results[0]["element"], &results[1]["element"]);
    for (element, frame, x) in [(left, "#far", 74.0), (right, "#near", 474.0)] {
        assert_eq!(element["selector"], "#save", "{answer}");
        assert_eq!(element["framePath"], json!([frame]), "{answer}");
        assert!(element["frameId"].is_string(), "{answer}");
        let center = &element["center"];
        assert!(
            (center["x"].as_f64().unwrap() - x).abs() < 2.0
                && (center["y"].as_f64().unwrap() - 239.0).abs() < 2.0,
            "{element}"
        );
    }
    assert_ne!(left["frameId"], right["frameId"]);
    let titles = picking.click_refs(&[left, right]).await;
    assert_eq!(
        titles,
        [
            format!("save clicked at {far}"),
            format!("save clicked at {near}")
        ]
    );
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

/// A frame inside another site's frame: the walk up crosses a same-process frame inside
/// the out-of-process one, then the process line, and the ref acts through both.
#[tokio::test]
async fn an_element_in_a_frame_inside_a_cross_origin_frame_is_picked() {
    let site = Site::start().await;
    let other_port = Site::start().await;
    let far = format!("localhost:{}", site.port);
    let near = format!("127.0.0.1:{}", other_port.port);
    let picking = Picking::start("pick-nested").await;
    let url = site.url(&format!(
        "pick-cross.html?far=http://{far}&near=http://{near}&farPage=pick-nest.html"
    ));
    let (cdp, session) = picking.open(&url, 2).await;
    // #far's document starts at (4, 204); its #inner frame at (20, 20) in it; the
    // button at (20, 20) in that, 100 x 30.
    let answer = picking
        .pick(
            &cdp,
            &session,
            json!([{ "id": "nested", "name": "Save draft, two frames down" }]),
            &[(94.0, 259.0)],
        )
        .await;
    let nested = &answer["results"][0]["element"];
    assert_eq!(nested["selector"], "#save", "{answer}");
    assert_eq!(nested["framePath"], json!(["#far", "#inner"]), "{answer}");
    let center = &nested["center"];
    assert!(
        (center["x"].as_f64().unwrap() - 94.0).abs() < 2.0
            && (center["y"].as_f64().unwrap() - 259.0).abs() < 2.0,
        "{nested}"
    );
    let titles = picking.click_refs(&[nested]).await;
    assert_eq!(titles, [format!("save clicked at {far}")]);
}

/// The page going to a new document while a person is being asked: the panel comes back
/// on the new document, and a click there is taken.
#[tokio::test]
async fn a_pick_goes_on_after_the_page_navigates() {
    let site = Site::start().await;
    let picking = Picking::start("pick-navigate").await;
    let url = site.url("pick.html");
    let (cdp, session) = picking.open(&url, 1).await;
    let asked = picking.tw.chrome(
        "chrome_request_element_selection",
        json!({ "requests": [{ "id": "submit", "name": "the Submit button" }], "timeoutMs": 60_000 }),
    );
    let fresh_document = || async {
        let read = cdp
            .call(
                Some(&session),
                "Runtime.evaluate",
                json!({ "expression": "window.before === undefined", "returnByValue": true }),
            )
            .await;
        read["result"]["value"] == true
    };
    let person = async {
        poll_until("the panel to ask", || async {
            panel(&cdp, &session).await.contains("Click 1 of 1")
        })
        .await;
        cdp.call(
            Some(&session),
            "Runtime.evaluate",
            json!({ "expression": "window.before = true" }),
        )
        .await;
        cdp.call(Some(&session), "Page.navigate", json!({ "url": url }))
            .await;
        poll_until("the panel to ask again on the new document", || async {
            fresh_document().await && panel(&cdp, &session).await.contains("Click 1 of 1")
        })
        .await;
        click(&cdp, &session, 100.0, 60.0).await;
    };
    let (reply, ()) = tokio::join!(asked, person);
    assert!(!reply.is_error, "{}", reply.text);
    let submit = &reply.payload["results"][0]["element"];
    assert_eq!(submit["selector"], "#submit", "{}", reply.payload);
    assert_eq!(panel(&cdp, &session).await, "");
}

/// The person can call it off: the panel's Cancel ends the picking with what was
/// picked so far, and the page is left as it was.
#[tokio::test]
async fn the_panels_cancel_ends_the_picking() {
    let site = Site::start().await;
    let picking = Picking::start("pick-cancel").await;
    let (cdp, session) = picking.open(&site.url("pick.html"), 1).await;
    let asked = picking.tw.chrome(
        "chrome_request_element_selection",
        json!({ "requests": [
            { "id": "submit", "name": "the Submit button" },
            { "id": "save", "name": "Save draft" },
        ], "timeoutMs": 60_000 }),
    );
    let person = async {
        poll_until("the panel to ask", || async {
            panel(&cdp, &session).await.contains("Click 1 of 2")
        })
        .await;
        click(&cdp, &session, 100.0, 60.0).await;
        poll_until("the panel to ask for the second", || async {
            panel(&cdp, &session).await.contains("Click 2 of 2")
        })
        .await;
        let button = cdp
            .call(
                Some(&session),
                "Runtime.evaluate",
                json!({ "expression": "(() => { const r = document.querySelector('tabwire-picker').shadowRoot.querySelector('button').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()", "returnByValue": true }),
            )
            .await;
        let at = &button["result"]["value"];
        click(
            &cdp,
            &session,
            at[0].as_f64().unwrap(),
            at[1].as_f64().unwrap(),
        )
        .await;
    };
    let (reply, ()) = tokio::join!(asked, person);
    assert!(!reply.is_error, "{}", reply.text);
    let answer = reply.payload;
    assert_eq!(answer["cancelled"], true, "{answer}");
    assert_eq!(answer["success"], false);
    assert_eq!(
        answer["results"][0]["element"]["selector"], "#submit",
        "{answer}"
    );
    assert_eq!(answer["results"][1]["element"], Value::Null);
    assert_eq!(answer["missingRequestIds"], json!(["save"]));
    assert_eq!(panel(&cdp, &session).await, "");
}
