use serde_json::{Value, json};

use crate::support::{Site, Tabwire};

#[tokio::test]
async fn a_long_list_is_collapsed_with_a_selector_that_finds_every_item() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("cutlist").await;
    tw.ok("open_url", json!({ "url": site.url("list/500") }))
        .await;
    let scan = tw.ok("scan_page", json!({})).await;
    let content = scan["content"].as_str().unwrap();
    assert!(
        content.contains("Item 0") && !content.contains("Item 400"),
        "list not collapsed"
    );
    assert!(
        content.contains("End of results"),
        "content after the list was lost"
    );
    let cut = &scan["cutlist"][0];
    assert_eq!(cut["total"], 500, "{}", scan["cutlist"]);
    let selector = cut["selector"].as_str().unwrap();
    let count = tw
        .ok(
            "execute_js",
            json!({ "script": format!("document.querySelectorAll({}).length", json!(selector)) }),
        )
        .await;
    assert_eq!(
        count["js_return"], 500,
        "selector {selector} must match every collapsed item"
    );
    // A short href is shown as written; a long one becomes a ref that resolves to the
    // absolute URL.
    assert!(content.contains("<a href=\"/item/0\">"), "{content}");
    tw.ok(
        "execute_js",
        json!({ "script": "const a = document.createElement('a'); a.href = '/item/0?utm_source=newsletter&utm_campaign=winter'; a.textContent = 'Tracked'; document.body.prepend(a); 0" }),
    )
    .await;
    let again = tw.ok("scan_page", json!({})).await;
    let tracked = again["content"].as_str().unwrap();
    assert!(tracked.contains("<a #r1>Tracked</a>"), "{tracked}");
    let first = again["links"]["r1"].as_str().unwrap();
    assert!(
        first.starts_with("http://127.0.0.1:")
            && first.ends_with("/item/0?utm_source=newsletter&utm_campaign=winter"),
        "{first}"
    );

    let full = tw
        .ok(
            "scan_page",
            json!({ "cutlist": false, "maxchars": 2_000_000 }),
        )
        .await;
    assert!(full["content"].as_str().unwrap().contains("Item 499"));
    let small = tw
        .ok("scan_page", json!({ "cutlist": false, "maxchars": 500 }))
        .await;
    assert_eq!(small["truncated"], true);
}

#[tokio::test]
async fn scan_reports_targets_with_locators_that_act_on_the_same_element() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("targets").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let scan = tw.ok("scan_page", json!({})).await;
    assert_eq!(scan["render_state"], "content");
    assert_eq!(scan["content_ready"], true);
    assert_eq!(scan["render"]["state"], "content", "{}", scan["render"]);
    assert_eq!(scan["status"], "success");
    let targets = scan["observation"]["targets"].as_array().unwrap();
    let name_field = targets
        .iter()
        .find(|t| named(t, "Full name"))
        .expect("Full name target");
    assert_eq!(name_field["recommended_tool"], "page_type");
    assert_eq!(name_field["reason"], "editable_text");
    assert_eq!(name_field["editable"], true);
    // A native select is chosen from, not typed into or clicked: no tool, as BrowserTap.
    let select = targets
        .iter()
        .find(|t| named(t, "Plan"))
        .expect("Plan target");
    assert!(select["recommended_tool"].is_null(), "{select}");
    assert_eq!(select["reason"], "select_existing_option");
    // The locator, passed back unchanged, types into that field.
    tw.ok(
        "page_type",
        json!({ "selector": name_field["locator"], "text": "via locator" }),
    )
    .await;
    let value = tw
        .ok(
            "execute_js",
            json!({ "script": "document.getElementById('name').value" }),
        )
        .await;
    assert_eq!(value["js_return"], "via locator");
}

#[tokio::test]
async fn waits_follow_content_that_appears_and_disappears() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("delayed").await;
    tw.ok("open_url", json!({ "url": site.url("delayed.html") }))
        .await;
    let appeared = tw
        .ok("wait_for", json!({ "text": "Data arrived", "timeout": 30 }))
        .await;
    assert_eq!(appeared["status"], "success", "{appeared}");
    assert_eq!(appeared["condition"], "text", "{appeared}");
    assert!(appeared["waited_ms"].is_u64(), "{appeared}");
    tw.ok("wait_for", json!({ "selector": "#spinner", "gone": true }))
        .await;
    tw.ok(
        "wait_for",
        json!({ "js": "document.querySelectorAll('p').length === 1" }),
    )
    .await;
    let never = tw
        .call("wait_for", json!({ "selector": "#never", "timeout": 0.3 }))
        .await;
    assert_eq!(never.error_code(), "timeout", "{}", never.envelope);
    // As BrowserTap, a wait that timed out reports where the page is.
    let never = never.reported();
    assert_eq!(never["condition"], "selector", "{never}");
    assert!(
        never["url"].as_str().unwrap().ends_with("delayed.html"),
        "{never}"
    );
    let bad = tw
        .call("wait_for", json!({ "selector": "p[[", "timeout": 5 }))
        .await;
    assert_eq!(bad.error_code(), "invalid_selector", "{}", bad.envelope);
}

#[tokio::test]
async fn a_click_that_navigates_is_followed_by_wait_for_url() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("wait-url").await;
    tw.ok("open_url", json!({ "url": site.url("input.html") }))
        .await;
    tw.ok(
        "page_click",
        json!({ "selector": { "role": "link", "name": "Go on" } }),
    )
    .await;
    let landed = tw
        .ok("wait_for_url", json!({ "url_pattern": "echo\\?from=link" }))
        .await;
    assert_eq!(landed["ready_state"], "complete");
    assert_eq!(landed["title"], "echo");
    assert!(landed["url"].as_str().unwrap().ends_with("/echo?from=link"));
}

#[tokio::test]
async fn scroll_page_moves_and_reports_the_position() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("scroll").await;
    tw.ok("open_url", json!({ "url": site.url("fold.html") }))
        .await;
    let bottom = tw.ok("scroll_page", json!({})).await;
    assert_eq!(bottom["at_bottom"], true, "{bottom}");
    let top = tw.ok("scroll_page", json!({ "to": "top" })).await;
    assert_eq!(top["scroll_y"], 0);
    let offset = tw.ok("scroll_page", json!({ "to": "500" })).await;
    assert_eq!(offset["scroll_y"], 500);
    let scrolled = tw
        .ok("execute_js", json!({ "script": "window.scrollY" }))
        .await;
    assert_eq!(scrolled["js_return"], 500);
}

/// A target's control name.
fn named(target: &serde_json::Value, name: &str) -> bool {
    target["name"] == name
}

#[tokio::test]
async fn a_page_that_breaks_built_ins_cannot_break_the_page_tools() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("hostile").await;
    tw.ok("open_url", json!({ "url": site.url("hostile.html") }))
        .await;
    let scan = tw.ok("scan_page", json!({})).await;
    let content = scan["content"].as_str().unwrap();
    assert!(content.contains("Go"), "{scan}");
    assert!(content.contains("Search"), "{scan}");
    tw.ok(
        "page_type",
        json!({ "selector": { "label": "Search" }, "text": "still works" }),
    )
    .await;
    tw.ok(
        "page_click",
        json!({ "selector": { "role": "button", "name": "Go" } }),
    )
    .await;
    let seen = tw
        .ok(
            "execute_js",
            json!({ "script": "[document.getElementById('q').value, document.getElementById('go').dataset.clicks, typeof __tabwire].join('|')" }),
        )
        .await;
    // The page's own world never sees tabwire's script.
    assert_eq!(seen["js_return"], "still works|1|undefined");
}

#[tokio::test]
async fn a_wait_whose_script_throws_fails_at_once_whatever_its_message() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("wait-throws").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    // The page's own error mentions a context and a navigation; it is still the page's
    // error, not a navigation in progress, so the wait does not spin until its deadline.
    let script = "(() => { throw new Error('lost the execution context while navigating') })()";
    let reply = tw
        .call("wait_for", json!({ "js": script, "timeout": 60 }))
        .await;
    assert_eq!(
        reply.error_code(),
        "page_execution_failed",
        "{}",
        reply.envelope
    );
    assert!(
        reply.message().contains("lost the execution context"),
        "{}",
        reply.envelope
    );
}

#[tokio::test]
async fn scan_extra_js_values_convert_as_execute_js_converts_them() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("scan-extra").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let scan = |extra: &str| {
        let extra = extra.to_owned();
        let tw = &tw;
        async move {
            tw.ok("scan_page", json!({ "extra_js": extra, "text_only": true }))
                .await
        }
    };
    // Values JSON cannot carry are described, not refused, and the scan still happens.
    let node = scan("document.querySelector('button')").await;
    assert!(
        node["extra_js_result"]
            .as_str()
            .unwrap_or("")
            .contains("button"),
        "{node}"
    );
    assert!(node["content"].to_string().contains("Account"), "{node}");
    let cycle = scan("const o = {}; o.self = o; o").await;
    assert!(
        cycle["extra_js_result"].to_string().contains("Circular"),
        "{cycle}"
    );
    let big = scan("10n ** 20n").await;
    assert_eq!(big["extra_js_result"], "100000000000000000000n");
    let plain = scan("return document.title").await;
    assert_eq!(plain["extra_js_result"], "Form");
    // A script that throws is reported beside the scan.
    let thrown = scan("throw new Error('boom')").await;
    assert!(
        thrown["extra_js_result"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("boom"),
        "{thrown}"
    );
    assert!(
        thrown["content"].to_string().contains("Account"),
        "{thrown}"
    );
}

#[tokio::test]
async fn a_truncated_scan_names_a_cursor_that_reads_on_to_the_end() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("scan-cursor").await;
    tw.ok("open_url", json!({ "url": site.url("list/300") }))
        .await;
    let mut cursor: Option<String> = None;
    let mut content = String::new();
    let mut names = std::collections::BTreeSet::new();
    let mut pages = 0;
    loop {
        let mut args = json!({ "cutlist": false, "maxchars": 4000, "max_targets": 50 });
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let scan = tw.ok("scan_page", args).await;
        pages += 1;
        content.push_str(scan["content"].as_str().unwrap());
        for target in scan["observation"]["targets"].as_array().unwrap() {
            names.insert(target["name"].as_str().unwrap_or_default().to_owned());
        }
        match scan["continuation"]["cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(pages < 50, "the cursor does not advance");
    }
    assert!(pages > 2, "the page should need several reads: {pages}");
    // Every control and all the text, once the cursor has run out.
    for i in [0, 150, 299] {
        assert!(
            names.contains(&format!("Item {i}")),
            "Item {i} never listed"
        );
        assert!(names.contains(&format!("Add {i}")), "Add {i} never listed");
    }
    assert_eq!(names.iter().filter(|n| n.starts_with("Item ")).count(), 300);
    assert!(
        content.contains("Item 0") && content.contains("Item 299"),
        "the text was not read through"
    );
    assert!(content.contains("End of results"));
    // A target read through the cursor acts on its element.
    let late = tw
        .ok(
            "scan_page",
            json!({ "cutlist": false, "maxchars": 4000, "max_targets": 1, "cursor": "0:599" }),
        )
        .await;
    let locator = late["observation"]["targets"][0]["locator"].clone();
    tw.ok("page_click", json!({ "selector": locator })).await;
    let bad = tw.call("scan_page", json!({ "cursor": "soon" })).await;
    assert_eq!(bad.error_code(), "invalid_request");
    assert_eq!(bad.envelope["diagnostics"]["param"], "cursor");
}

/// The lean encoding of a scan and a click (nothing empty, nothing repeated at the
/// envelope's top that the payload does not need there) keeps every fact an agent acts
/// on: each control's role, name and state, a locator that acts on it, where the page
/// is, and where a click landed.
#[tokio::test]
async fn a_lean_scan_and_click_keep_every_fact_an_agent_acts_on() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("lean-scan").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let reply = tw.call("scan_page", json!({})).await;
    let envelope = reply.envelope.clone();
    let scan = reply.ok();
    // Where the page is: in the observation, as BrowserTap has it.
    let observation = &scan["observation"];
    assert!(observation["url"].as_str().unwrap().ends_with("/form.html"));
    assert_eq!(observation["title"], "Form");
    assert_eq!(observation["ready_state"], "complete");
    assert!(observation["viewport"]["width"].as_u64().unwrap() > 0);
    assert_eq!(observation["truncated"], false);
    // Nothing said that carries no news: no empty lists, no zero counts.
    for absent in [
        "links",
        "cutlist",
        "offscreen",
        "truncated",
        "chars",
        "total_chars",
    ] {
        assert!(scan.get(absent).is_none(), "{absent} in {scan}");
    }
    // The envelope names the tab without repeating its URL.
    assert!(envelope["target"].get("url").is_none(), "{envelope}");

    let targets = observation["targets"].as_array().unwrap();
    // Every target says all BrowserTap says of it (the role as the page wrote it), and the
    // role Chromium computes.
    for target in targets {
        for key in [
            "locator",
            "tag",
            "type",
            "name",
            "role",
            "visible",
            "editable",
            "disabled",
            "readonly",
            "inert",
            "rect",
            "hit_test",
            "recommended_tool",
            "reason",
        ] {
            assert!(target.get(key).is_some(), "{key} missing in {target}");
        }
    }
    let named = |role: &str, name: &str| {
        targets
            .iter()
            .find(|t| t["computed_role"] == role && t["name"] == name)
            .unwrap_or_else(|| panic!("no {role} {name:?} in {targets:?}"))
            .clone()
    };
    let field = named("textbox", "Full name");
    assert_eq!(field["editable"], true);
    assert_eq!(field["recommended_tool"], "page_type");
    let locked = named("textbox", "Locked field");
    assert_eq!(locked["readonly"], true);
    assert!(locked["recommended_tool"].is_null(), "{locked}");
    let terms = named("checkbox", "I agree");
    let submit = named("button", "Create account");
    for side in ["x", "y", "width", "height"] {
        assert!(submit["rect"][side].is_number(), "{submit}");
    }

    // The locators act on those very elements, and the replies say so.
    let typed = tw
        .ok(
            "page_type",
            json!({ "selector": field["locator"], "text": "Ada" }),
        )
        .await;
    assert_eq!(typed["status"], "success", "{typed}");
    assert_eq!(typed["target_kind"], "element", "{typed}");
    assert_eq!(typed["focus_confirmed"], true, "{typed}");
    assert_eq!(typed["typed_chars"], 3, "{typed}");
    assert_eq!(typed["active_element"]["label"], "Full name", "{typed}");
    assert!(
        typed.get("submitted").is_none(),
        "no key was pressed: {typed}"
    );
    assert_eq!(
        js_value(&tw, "document.getElementById('name').value").await,
        "Ada"
    );
    let clicked = tw
        .ok("page_click", json!({ "selector": terms["locator"] }))
        .await;
    assert_eq!(clicked["target"]["hit_verified"], true, "{clicked}");
    assert!(clicked["target"]["x"].as_f64().is_some(), "{clicked}");
    assert_eq!(clicked["element"]["role"], "checkbox");
    assert_eq!(
        js_value(&tw, "document.getElementById('terms').checked").await,
        true
    );
}

async fn js_value(tw: &Tabwire, script: &str) -> Value {
    tw.ok("execute_js", json!({ "script": script })).await["js_return"].clone()
}

/// A scan observes as BrowserTap's does: the observation's own facts and the page's
/// readiness; frames with the paths that scan them; a framed scan's locators and refs
/// carrying that path, so either, passed back unchanged, acts in the frame; a hidden file
/// input listed for upload_files; and what `max_targets: 0` and `extra_js` say.
#[tokio::test]
async fn a_scan_observes_as_browsertap_does_frames_included() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("scan-observation").await;
    tw.ok("open_url", json!({ "url": site.url("frames.html") }))
        .await;
    tw.ok(
        "wait_for",
        json!({ "selector": { "frame": ["#cross"], "css": "#inner" } }),
    )
    .await;
    let reply = tw.call("scan_page", json!({})).await;
    let tab = reply.envelope["target"]["session_id"].clone();
    let top = reply.ok();
    assert_eq!(top["status"], "success");
    assert_eq!(top["active_session_id"], tab);
    assert!(
        top["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["session_id"] == tab),
        "{}",
        top["tabs"]
    );
    assert_eq!(top["render_state"], "content");
    assert_eq!(top["content_ready"], true);
    assert_eq!(top["render"]["has_body"], true, "{}", top["render"]);
    let observation = &top["observation"];
    assert_eq!(observation["status"], "success");
    assert_eq!(observation["limit"], 80);
    assert_eq!(observation["coordinate_space"], "viewport_css");
    assert_eq!(observation["frame"], json!([]));
    let frames = observation["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2, "{frames:?}");
    for frame in frames {
        assert_eq!(frame["frame"], json!([frame["locator"]]), "{frame}");
        assert_eq!(frame["inspected"], false, "{frame}");
    }
    let cross = frames
        .iter()
        .find(|f| f["url"].as_str().unwrap().contains("://localhost:"))
        .expect("the cross-site frame");

    // The frame's scan: its targets' locators and refs carry the frame path.
    let inner = tw.ok("scan_page", json!({ "frame": cross["frame"] })).await;
    assert_eq!(inner["observation"]["frame"], cross["frame"]);
    assert!(inner.get("render_state").is_none(), "{inner}");
    let targets = inner["observation"]["targets"].as_array().unwrap();
    let field = targets
        .iter()
        .find(|t| named(t, "Inner field"))
        .expect("the inner field");
    let button = targets
        .iter()
        .find(|t| named(t, "Inner button"))
        .expect("the inner button");
    assert_eq!(field["locator"]["frame"], cross["frame"], "{field}");
    tw.ok(
        "page_type",
        json!({ "selector": field["locator"], "text": "by locator" }),
    )
    .await;
    tw.ok(
        "page_click",
        json!({ "selector": { "ref": button["ref"] } }),
    )
    .await;
    // A path written as CSS strings is answered as locator objects.
    let read = tw
        .ok(
            "scan_page",
            json!({ "frame": ["#cross"], "text_only": true }),
        )
        .await;
    assert_eq!(read["observation"]["frame"], json!([{ "css": "#cross" }]));
    assert!(
        read["content"]
            .as_str()
            .unwrap()
            .contains("inner clicked: by locator"),
        "{}",
        read["content"]
    );

    let none = tw.ok("scan_page", json!({ "max_targets": 0 })).await;
    assert_eq!(none["observation"]["status"], "disabled");
    assert_eq!(none["observation"]["targets"], json!([]));
    let scripted = tw.ok("scan_page", json!({ "extra_js": "return 1" })).await;
    assert_eq!(scripted["observation"]["status"], "unavailable");
    assert_eq!(
        scripted["observation"]["reason"],
        "extra_js_preserves_legacy_execution"
    );
    assert!(
        scripted["observation"].get("targets").is_none(),
        "{scripted}"
    );

    // A file input upload_files can fill, however it is hidden.
    tw.ok("open_url", json!({ "url": site.url("upload.html") }))
        .await;
    tw.ok(
        "execute_js",
        json!({ "script": "document.getElementById('file').style.display = 'none'; 0" }),
    )
    .await;
    let upload = tw.ok("scan_page", json!({})).await;
    let file = upload["observation"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "file")
        .cloned()
        .expect("the hidden file input");
    assert_eq!(file["visible"], false, "{file}");
    assert_eq!(file["recommended_tool"], "upload_files", "{file}");
    assert_eq!(file["reason"], "file_input", "{file}");
    assert_eq!(file["locator"], json!({ "css": "#file" }), "{file}");
}
