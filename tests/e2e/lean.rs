//! Lean replies (`--replies lean`): the same tools and parameters as exact mode, their
//! facts written as plain text for a model. Each check reads what an agent reads: the
//! reply's text.

use serde_json::json;

use crate::support::{Site, Tabwire};

#[tokio::test]
async fn lean_mode_lists_the_same_tools_without_output_schemas() {
    let lean = Tabwire::stdio_with(
        "lean-tools",
        &["--face", "btap,chrome", "--replies", "lean"],
    )
    .await;
    let exact = Tabwire::stdio_with("exact-tools", &["--face", "btap,chrome"]).await;
    let lean_tools = lean.client.list_all_tools().await.expect("tools/list");
    let exact_tools = exact.client.list_all_tools().await.expect("tools/list");
    assert_eq!(lean_tools.len(), exact_tools.len());
    for (a, b) in lean_tools.iter().zip(&exact_tools) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.input_schema, b.input_schema, "{}", a.name);
        assert!(
            a.output_schema.is_none(),
            "{} declares an output schema in lean mode",
            a.name
        );
    }
}

#[tokio::test]
async fn a_lean_read_names_each_control_on_one_line_and_its_ref_acts_on_that_element() {
    let site = Site::start().await;
    let tw =
        Tabwire::stdio_with("lean-read", &["--face", "btap,chrome", "--replies", "lean"]).await;
    let opened = tw
        .text("open_url", json!({ "url": site.url("form.html") }))
        .await;
    assert!(!opened.is_error && !opened.structured, "{opened:?}");
    assert!(
        opened.text.starts_with("opened http://127.0.0.1:"),
        "{}",
        opened.text
    );
    let scan = tw.text("scan_page", json!({})).await;
    assert!(
        !scan.structured,
        "a lean reply repeats nothing as structured content"
    );
    let first = scan.text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("Form · http://127.0.0.1:"),
        "{}",
        scan.text
    );
    // One line a control: role, name, state, ref.
    let line = |needle: &str| {
        scan.text
            .lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {}", scan.text))
            .trim()
            .to_owned()
    };
    let button = line("button \"Create account\"");
    let reference = button.rsplit(' ').next().unwrap().to_owned();
    assert!(reference.starts_with('e'), "{button}");
    assert!(line("checkbox \"I agree\"").ends_with(|c: char| c.is_ascii_digit()));
    assert!(
        line("\"Locked field\"").contains("readonly"),
        "{}",
        scan.text
    );
    let plan = line("combobox \"Plan\"");
    assert!(plan.contains("options=[Free|Pro]"), "{plan}");
    assert!(
        !scan.text.contains("null") && !scan.text.contains("ref_"),
        "{}",
        scan.text
    );

    // The name field's ref types into that field, the button's ref submits the form.
    let name = line("textbox \"Full name\"");
    let name_ref = name.rsplit(' ').next().unwrap();
    let typed = tw
        .text(
            "page_type",
            json!({ "selector": { "ref": name_ref }, "text": "Ada" }),
        )
        .await;
    assert_eq!(typed.text, "typed 3 chars into textbox \"Full name\"");
    let clicked = tw
        .text("page_click", json!({ "selector": { "ref": reference } }))
        .await;
    assert_eq!(clicked.text, "clicked button \"Create account\"");
    let shown = tw
        .text(
            "execute_js",
            json!({ "script": "document.getElementById('result').textContent" }),
        )
        .await;
    assert!(shown.text.contains("\"name\":\"Ada\""), "{}", shown.text);
    // The chrome face takes the same ref.
    let read = tw.text("chrome_read_page", json!({})).await;
    assert!(
        read.text
            .contains(&format!("button \"Create account\" {reference}")),
        "{}",
        read.text
    );
    let again = tw
        .text("chrome_click_element", json!({ "ref": reference }))
        .await;
    assert!(
        again.text.starts_with("clicked button \"Create account\""),
        "{}",
        again.text
    );
}

#[tokio::test]
async fn a_lean_error_is_one_line_with_its_code_verdict_and_facts() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with(
        "lean-errors",
        &["--face", "btap,chrome", "--replies", "lean"],
    )
    .await;
    tw.text("open_url", json!({ "url": site.url("overlay.html") }))
        .await;
    let missing = tw
        .text(
            "page_click",
            json!({ "selector": "#no-such-thing", "timeout": 1 }),
        )
        .await;
    assert!(missing.is_error);
    assert_eq!(missing.text.lines().count(), 1, "{}", missing.text);
    assert!(
        missing
            .text
            .starts_with("error not_found (not retryable): "),
        "{}",
        missing.text
    );
    let bad = tw.text("scan_page", json!({ "maxchars": "many" })).await;
    assert!(bad.is_error);
    assert!(
        bad.text
            .starts_with("error invalid_request (not retryable): maxchars"),
        "{}",
        bad.text
    );
    // What the exact reply's diagnostics say that decides the next call is in the line:
    // the arguments set aside.
    let ignored = tw
        .text(
            "page_click",
            json!({ "selector": "#no-such-thing", "timeout": 1, "wobble": true }),
        )
        .await;
    assert!(
        ignored.text.contains("ignored arguments: [wobble]")
            || ignored.text.contains("ignored arguments: wobble"),
        "{}",
        ignored.text
    );
    let stale = tw
        .text("chrome_click_element", json!({ "ref": "e999999" }))
        .await;
    assert!(
        stale.is_error && stale.text.starts_with("error"),
        "{}",
        stale.text
    );
    assert_eq!(stale.text.lines().count(), 1, "{}", stale.text);
    assert_eq!(stale.images, 0);
}

#[tokio::test]
async fn a_cut_lean_read_names_a_cursor_that_reads_on_to_the_end() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("lean-cursor", &["--replies", "lean"]).await;
    tw.text("open_url", json!({ "url": site.url("list/1500") }))
        .await;
    let first = tw.text("scan_page", json!({ "maxchars": 4000 })).await;
    assert!(first.text.contains("[cut: "), "{}", first.text);
    assert!(
        first.text.chars().count() < 4300,
        "{} chars",
        first.text.chars().count()
    );
    let (outline, _) = tw.read_all("scan_page", json!({ "maxchars": 4000 })).await;
    for i in [0, 749, 1499] {
        assert!(
            outline.contains(&format!("link \"Item {i}\" e")),
            "item {i} missing"
        );
        assert!(
            outline.contains(&format!("button \"Add {i}\" e")),
            "button {i} missing"
        );
    }
    assert_eq!(outline.matches("button \"Add ").count(), 1500);
    assert!(outline.contains("End of results"));
}

/// What a lean reply must not lose: a script's value as the script returned it (its nulls
/// and empty objects too), a raw CDP command's result, a text-only read's text, an
/// untitled `data:` page's header without its whole URL, and a read that fits `maxchars`
/// header included.
#[tokio::test]
async fn a_lean_reply_keeps_the_values_an_agent_asked_for() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("lean-values", &["--replies", "lean"]).await;
    tw.text("open_url", json!({ "url": site.url("form.html") }))
        .await;

    let script = tw
        .text(
            "execute_js",
            json!({ "script": "return {a: null, b: [1, 'x'], c: {}}" }),
        )
        .await;
    assert!(!script.is_error, "{}", script.text);
    assert!(
        script.text.contains(r#"{"a":null,"b":[1,"x"],"c":{}}"#),
        "{}",
        script.text
    );

    let raw = tw
        .text(
            "cdp_command",
            json!({
                "method": "Runtime.evaluate",
                "params_json": json!({ "expression": "6 * 7", "returnByValue": true }).to_string(),
            }),
        )
        .await;
    assert!(raw.text.contains("\"value\":42"), "{}", raw.text);

    let text = tw.text("scan_page", json!({ "text_only": true })).await;
    assert!(!text.is_error, "{}", text.text);
    assert!(text.text.lines().count() > 1, "{}", text.text);
    assert!(!text.text.contains('<'), "text, not HTML: {}", text.text);

    let long = format!("data:text/html,{}", "<p>filler</p>".repeat(40));
    tw.text("open_url", json!({ "url": long })).await;
    let read = tw.text("scan_page", json!({})).await;
    let header = read.text.lines().next().unwrap();
    assert!(header.len() < 120, "{header}");
    assert!(header.contains("chars)"), "{header}");

    tw.text("open_url", json!({ "url": site.url("list/300") }))
        .await;
    let cut = tw.text("scan_page", json!({ "maxchars": 600 })).await;
    let body: String = cut
        .text
        .lines()
        .filter(|l| !l.starts_with("[cut:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(
        body.chars().count() <= 600,
        "{} chars: {}",
        body.chars().count(),
        cut.text
    );
}

/// Words laid out side by side as boxes of their own (flex items) read as separate words,
/// while inline markup inside a sentence stays joined as it reads.
#[tokio::test]
async fn text_in_boxes_side_by_side_does_not_run_together() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("lean-boxed", &["--replies", "lean"]).await;
    tw.text("open_url", json!({ "url": site.url("boxed-text.html") }))
        .await;
    let read = tw.text("scan_page", json!({})).await;
    assert!(
        read.text.contains("File Path Untitled.ipynb"),
        "{}",
        read.text
    );
    assert!(!read.text.contains("PathUntitled"), "{}", read.text);
    assert!(read.text.contains("Plain bold words"), "{}", read.text);
}
mod facts;

#[tokio::test]
async fn a_table_row_reads_as_one_line_under_its_named_region() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with(
        "lean-table",
        &["--face", "btap,chrome", "--replies", "lean"],
    )
    .await;
    tw.text("open_url", json!({ "url": site.url("table.html") }))
        .await;
    for tool in ["scan_page", "chrome_read_page"] {
        let read = tw.text(tool, json!({})).await.text;
        let has_line = |wanted: &str| read.lines().any(|l| l.trim() == wanted);
        assert!(
            read.lines()
                .any(|l| l.trim().starts_with("region \"Filters\"")),
            "{tool}: {read}"
        );
        assert!(has_line("Name | Email | Age"), "{tool}: {read}");
        assert!(has_line("Alice | alice@acme.test | 34"), "{tool}: {read}");
        assert!(
            read.lines().any(|l| l.contains("checkbox \"Select Bob\"")),
            "{tool}: {read}"
        );
        // The clickable's words are its name, said once; so are a live region's.
        assert_eq!(read.matches("Refresh").count(), 1, "{tool}: {read}");
        assert_eq!(read.matches("Deleted 2 rows").count(), 1, "{tool}: {read}");
        assert!(read.contains("status \"Deleted 2 rows\""), "{tool}: {read}");
    }
}
