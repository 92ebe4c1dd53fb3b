//! Refs as the model sees them, in the btap face: a ref from a read acts where a selector
//! string goes, written as the read wrote it (`e12` in a lean reply, `ref_12` in an exact
//! one), and as a `ref` argument beside the selector; a stale ref is named in the form it
//! was given. Checked on form.html, whose result line shows what the form submitted.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire};

/// The ref a lean outline gives the line containing `needle` (`checkbox "I agree" e7`).
fn lean_ref(outline: &str, needle: &str) -> String {
    outline
        .lines()
        .filter(|l| l.contains(needle))
        .flat_map(|l| l.split_whitespace())
        .find(|word| {
            word.strip_prefix('e')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .unwrap_or_else(|| panic!("no ref on a line with {needle}:\n{outline}"))
        .to_owned()
}

/// An exact scan's target by role and name.
fn target(scan: &Value, role: &str, name: &str) -> Value {
    scan["observation"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["computed_role"] == role && t["name"] == name)
        .unwrap_or_else(|| panic!("no {role} {name:?} in {scan}"))
        .clone()
}

/// What form.html says it submitted: `name|terms`.
const SUBMITTED: &str = "const r = JSON.parse(document.getElementById('result').textContent || '{}'); \
     return (r.name || '') + '|' + (r.terms || 'off')";

#[tokio::test]
async fn a_lean_reads_ref_is_a_selector_as_it_stands_and_beside_one() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("refs-lean", &["--replies", "lean"]).await;
    tw.text("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let scan = tw.text("scan_page", json!({})).await.text;
    let name = lean_ref(&scan, "\"Full name\"");
    let terms = lean_ref(&scan, "checkbox \"I agree\"");
    let submit = lean_ref(&scan, "button \"Create account\"");

    // `"selector": "e7"` is that element, never CSS for a tag named e7.
    let clicked = tw.text("page_click", json!({ "selector": terms })).await;
    assert!(!clicked.is_error, "{}", clicked.text);
    // A `ref` beside the selector, which BrowserTap does not declare, is taken.
    let typed = tw
        .text("page_type", json!({ "ref": name, "text": "Ada" }))
        .await;
    assert!(!typed.is_error, "{}", typed.text);
    let waited = tw.text("wait_for", json!({ "ref": submit })).await;
    assert!(!waited.is_error, "{}", waited.text);
    let sent = tw.text("page_click", json!({ "ref": submit })).await;
    assert!(!sent.is_error, "{}", sent.text);
    let record = tw.text("execute_js", json!({ "script": SUBMITTED })).await;
    assert!(record.text.contains("Ada|on"), "{}", record.text);

    // A ref and a different selector both: refused, saying where the ref goes.
    let both = tw
        .text("page_click", json!({ "ref": terms, "selector": "#name" }))
        .await;
    assert!(both.is_error, "{}", both.text);
    assert!(
        both.text.contains(&format!("\"selector\": \"{terms}\"")),
        "{}",
        both.text
    );

    // After the page is gone, the ref is named as the read wrote it.
    tw.text("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let stale = tw.text("page_click", json!({ "selector": terms })).await;
    assert!(stale.is_error, "{}", stale.text);
    assert!(stale.text.contains("stale_ref"), "{}", stale.text);
    assert!(stale.text.contains(&format!("{terms} ")), "{}", stale.text);
    assert!(!stale.text.contains("ref_"), "{}", stale.text);
    let record = tw.text("execute_js", json!({ "script": SUBMITTED })).await;
    assert!(record.text.contains("|off"), "{}", record.text);
}

#[tokio::test]
async fn an_exact_reads_ref_is_a_selector_as_it_stands() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("refs-exact").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let scan = tw.ok("scan_page", json!({})).await;
    let terms = target(&scan, "checkbox", "I agree")["ref"].clone();
    let submit = target(&scan, "button", "Create account")["ref"].clone();
    assert!(terms.as_str().unwrap().starts_with("ref_"), "{terms}");

    let clicked = tw.ok("page_click", json!({ "selector": terms })).await;
    assert_eq!(clicked["target"]["selector"], terms, "{clicked}");
    tw.ok(
        "page_type",
        json!({ "selector": { "label": "Full name" }, "text": "Bo" }),
    )
    .await;
    let sent = tw.ok("page_click", json!({ "ref": submit })).await;
    assert_eq!(sent["target"]["selector"], json!({ "ref": submit }));
    let record = tw.ok("execute_js", json!({ "script": SUBMITTED })).await;
    assert_eq!(record["js_return"], "Bo|on");

    // A tool whose selector is required says where a ref given beside it goes.
    let upload = tw
        .call("upload_files", json!({ "ref": terms, "paths": ["x.txt"] }))
        .await;
    assert_eq!(upload.envelope["diagnostics"]["param"], "selector");
    assert!(
        upload.message().contains("\"selector\": \"e12\""),
        "{}",
        upload.envelope
    );

    // A stale ref is named as given: here as the exact read wrote it.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let stale = tw.call("page_click", json!({ "selector": terms })).await;
    assert_eq!(stale.error_code(), "stale_ref", "{}", stale.envelope);
    assert!(
        stale.message().contains(terms.as_str().unwrap()),
        "{}",
        stale.envelope
    );
}

/// A ref a framed read handed out names its element in every tool that takes a locator:
/// the engine places it in its frame, whatever tool passes it on (page_fill, wait_for and
/// scroll_page included, not only clicks and typing).
#[tokio::test]
async fn a_ref_read_inside_a_frame_acts_there_in_every_tool_that_takes_a_locator() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("framed-refs", &[]).await;
    tw.ok("open_url", json!({ "url": site.url("frames.html") }))
        .await;
    tw.ok(
        "wait_for",
        json!({ "selector": { "frame": ["#cross"], "css": "#inner" } }),
    )
    .await;
    let scan = tw.ok("scan_page", json!({ "frame": ["#cross"] })).await;
    let field = target(&scan, "textbox", "Inner field")["ref"].clone();
    let button = target(&scan, "button", "Inner button")["ref"].clone();

    let filled = tw
        .ok(
            "page_fill",
            json!({ "fields": [{ "selector": field, "value": "filled by ref" }] }),
        )
        .await;
    assert_eq!(filled["filled"][0]["value"], "filled by ref", "{filled}");
    let waited = tw.ok("wait_for", json!({ "ref": button })).await;
    assert_eq!(waited["status"], "success", "{waited}");
    let scrolled = tw.ok("scroll_page", json!({ "to": button })).await;
    assert_eq!(scrolled["element"]["name"], "Inner button", "{scrolled}");
    tw.ok("page_click", json!({ "selector": button })).await;

    let read = tw
        .ok(
            "scan_page",
            json!({ "frame": ["#cross"], "text_only": true }),
        )
        .await;
    assert!(
        read["content"]
            .as_str()
            .unwrap_or_default()
            .contains("inner clicked: filled by ref"),
        "{read}"
    );
}
