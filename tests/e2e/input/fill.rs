//! page_fill: a form in one call, each field taking its value as a user gives it, refs
//! from a lean read included; a field that cannot take its value stops the call and is
//! named, with what was filled before it.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire};

async fn js(tw: &Tabwire, script: &str) -> Value {
    tw.ok("execute_js", json!({ "script": script })).await["js_return"].clone()
}

#[tokio::test]
async fn a_form_is_filled_in_one_call_and_a_field_that_refuses_is_named() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("fill", &[]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let filled = tw
        .ok(
            "page_fill",
            json!({ "fields": [
                { "selector": "#name", "value": "Ada" },
                { "selector": { "label": "Password" }, "value": "s3cret" },
                { "selector": "#plan", "value": "Pro" },
                { "selector": "#terms", "value": true },
            ] }),
        )
        .await;
    let kinds: Vec<&str> = filled["filled"]
        .as_array()
        .expect("what was filled")
        .iter()
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "text", "select", "checkbox"], "{filled}");
    assert_eq!(filled["filled"][2]["option"], "Pro", "{filled}");
    assert_eq!(
        js(
            &tw,
            "['name', 'password', 'plan'].map(id => document.getElementById(id).value).concat(document.getElementById('terms').checked)"
        ).await,
        json!(["Ada", "s3cret", "Pro", true])
    );

    // The read-only field refuses; the fields before it are filled and said.
    let refused = tw
        .call(
            "page_fill",
            json!({ "fields": [
                { "selector": "#email", "value": "ada@example.com" },
                { "selector": "#locked", "value": "changed" },
                { "selector": "#name", "value": "never" },
            ] }),
        )
        .await
        .reported();
    assert_eq!(refused["failed_field"], 1, "{refused}");
    assert_eq!(
        refused["filled"].as_array().map(Vec::len),
        Some(1),
        "{refused}"
    );
    assert_eq!(
        js(
            &tw,
            "['email', 'locked', 'name'].map(id => document.getElementById(id).value)"
        )
        .await,
        json!(["ada@example.com", "fixed", "Ada"])
    );
}

#[tokio::test]
async fn a_lean_fill_takes_refs_and_says_each_field_in_a_line() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("fill-lean", &["--replies", "lean"]).await;
    tw.text("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let read = tw.text("scan_page", json!({})).await.text;
    let ref_of = |needle: &str| {
        let line = read
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {read}"));
        line.rsplit(' ').next().unwrap_or_default().to_owned()
    };
    let said = tw
        .text(
            "page_fill",
            json!({ "fields": [
                { "selector": ref_of("textbox \"Full name\""), "value": "Ada" },
                { "selector": ref_of("textbox \"Password\""), "value": "s3cret" },
                { "selector": ref_of("combobox \"Plan\""), "value": "Pro" },
                { "selector": ref_of("checkbox \"I agree\""), "value": "true" },
            ] }),
        )
        .await;
    assert_eq!(
        said.text,
        "filled textbox \"Full name\" = \"Ada\"; textbox \"Password\" = \"•••\"; combobox \"Plan\" = \"Pro\"; checkbox \"I agree\" checked"
    );
}

#[tokio::test]
async fn chrome_computer_fills_a_form_by_refs_through_the_same_engine_path() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("fill-chrome", &["--face", "btap,chrome"]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let read = tw.chrome_ok("chrome_read_page", json!({})).await;
    let outline = read["pageContent"].as_str().unwrap_or_default().to_owned();
    let ref_of = |needle: &str| {
        let line = outline
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle}: {outline}"));
        line.split("[ref=")
            .nth(1)
            .and_then(|r| r.split(']').next())
            .unwrap_or_default()
            .to_owned()
    };
    let filled = tw
        .chrome_ok(
            "chrome_computer",
            json!({ "action": "fill_form", "elements": [
                { "ref": ref_of("textbox \"Full name\""), "value": "Ada" },
                { "ref": ref_of("combobox \"Plan\""), "value": "Pro" },
                { "ref": ref_of("checkbox \"I agree\""), "value": true },
            ] }),
        )
        .await;
    assert_eq!(filled["filled"][1]["option"], "Pro", "{filled}");
    assert_eq!(
        js(
            &tw,
            "[document.getElementById('name').value, document.getElementById('plan').value, document.getElementById('terms').checked]"
        )
        .await,
        json!(["Ada", "Pro", true])
    );
}
