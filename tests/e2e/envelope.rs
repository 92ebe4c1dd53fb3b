//! The btap.result.v1 envelope as BrowserTap's clients read it: a success, a raised
//! failure, a failure the tool reports in its own result, a screenshot, and the default
//! tab's rules after new tabs and closed ones. (`support::call_on` also checks, for every
//! call of the suite, that structuredContent equals the text and that `diagnostics.tool`
//! names the tool.)

use serde_json::{Value, json};

use crate::support::{Site, Tabwire};

/// The keys every envelope has, and none it must not.
fn assert_header(envelope: &Value, ok: bool) {
    for key in [
        "ok",
        "result_contract",
        "version",
        "error",
        "error_code",
        "retryable",
        "target",
        "diagnostics",
    ] {
        assert!(envelope.get(key).is_some(), "{key} missing: {envelope}");
    }
    assert_eq!(envelope["ok"], ok, "{envelope}");
    assert!(envelope.get("schema").is_none(), "{envelope}");
}

#[tokio::test]
async fn a_success_carries_data_target_and_projections() {
    let site = Site::start().await;
    let tw = Tabwire::managed("envelope-success").await;
    let reply = tw
        .call("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let envelope = &reply.envelope;
    assert_header(envelope, true);
    assert_eq!(envelope["error"], Value::Null);
    assert_eq!(envelope["error_code"], Value::Null);
    assert_eq!(envelope["retryable"], false);
    assert!(envelope.get("legacy").is_none(), "{envelope}");
    // Small scalars of the payload are repeated at the top; the payload stays whole.
    assert_eq!(envelope["url"], envelope["data"]["url"], "{envelope}");
    assert_eq!(envelope["title"], "Form");
    let target = &envelope["target"];
    let session = target["session_id"].as_str().unwrap();
    assert_eq!(
        session,
        format!(
            "{}:{}",
            target["client_id"].as_str().unwrap(),
            target["tab_id"]
        )
    );
    // The URL the navigation landed on, not the one the tab showed before it.
    assert_eq!(target["url"], envelope["data"]["url"], "{target}");
    assert!(
        target["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/form.html")),
        "{target}"
    );
    assert_eq!(envelope["diagnostics"]["tool"], "open_url");
    reply.ok();
    // A new tab's reply says its generation, and so does its target.
    let opened = tw
        .call(
            "open_new_tab",
            json!({ "url": site.url("form.html"), "owner_id": "envelope" }),
        )
        .await;
    let target = &opened.envelope["target"];
    assert!(target["generation"].is_string(), "{target}");
    assert_eq!(target["session_id"], opened.envelope["data"]["session_id"]);
}

#[tokio::test]
async fn a_raised_failure_has_an_error_object_and_no_data() {
    let tw = Tabwire::managed("envelope-raised").await;
    let reply = tw
        .call("open_url", json!({ "url": "file:///etc/passwd" }))
        .await;
    let envelope = &reply.envelope;
    assert_header(envelope, false);
    assert_eq!(envelope["error"]["code"], "permission_denied", "{envelope}");
    assert_eq!(envelope["error_code"], envelope["error"]["code"]);
    assert_eq!(envelope["error"]["retryable"], envelope["retryable"]);
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("url")
    );
    assert!(
        envelope.get("data").is_none() && envelope.get("legacy").is_none(),
        "{envelope}"
    );
    assert_eq!(envelope["diagnostics"]["reason"], "url_scheme_refused");
    // A bad argument names its parameter.
    let bad = tw.call("scan_page", json!({ "maxchars": "lots" })).await;
    assert_eq!(bad.error_code(), "invalid_request");
    assert_eq!(bad.envelope["diagnostics"]["param"], "maxchars");
    // A session that is not there is BrowserTap's session_not_connected, and the
    // envelope names the target the caller gave.
    let stale = tw
        .call("scan_page", json!({ "session_id": "managed:999" }))
        .await;
    assert_eq!(
        stale.error_code(),
        "session_not_connected",
        "{}",
        stale.envelope
    );
    assert_eq!(stale.envelope["target"]["session_id"], "managed:999");
    assert_eq!(stale.envelope["target"]["tab_id"], 999);
    assert_eq!(stale.envelope["retryable"], false);
    assert_eq!(
        stale.envelope["diagnostics"]["stale_session_id"],
        "managed:999"
    );
}

#[tokio::test]
async fn a_failure_the_tool_reports_keeps_its_payload_as_legacy() {
    let site = Site::start().await;
    let tw = Tabwire::managed("envelope-reported").await;
    tw.ok("open_url", json!({ "url": site.url("overlay.html") }))
        .await;
    let reply = tw.call("page_click", json!({ "selector": "#under" })).await;
    let envelope = reply.envelope.clone();
    assert_header(&envelope, false);
    assert_eq!(envelope["error_code"], "obscured", "{envelope}");
    assert_eq!(envelope["status"], "obscured", "projected: {envelope}");
    assert_eq!(envelope["diagnostics"]["status"], "obscured");
    // Nothing was sent to the page, and the same click would meet the same cover: as in
    // BrowserTap, not retryable, with the cover named and what to do next.
    assert_eq!(envelope["retryable"], false, "{envelope}");
    let legacy = reply.reported();
    assert_eq!(legacy["status"], "obscured");
    assert_eq!(legacy["input_dispatched"], false, "{legacy}");
    assert_eq!(legacy["occluded_by"], "div#banner", "{legacy}");
    assert_eq!(legacy["occluded_by_element"]["id"], "banner", "{legacy}");
    assert!(legacy["next_action"].is_string(), "{legacy}");
}

#[tokio::test]
async fn a_screenshot_is_image_content_beside_the_envelope() {
    let site = Site::start().await;
    let tw = Tabwire::managed("envelope-shot").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let reply = tw.call("capture_page_screenshot", json!({})).await;
    assert_eq!(reply.images.len(), 1);
    assert_eq!(reply.images[0].1, "image/png");
    let data = reply.ok();
    assert!(data["image_width"].as_u64().unwrap() > 0, "{data}");
    assert!(
        data.get("base64").is_none(),
        "no base64 in the text unless asked"
    );
}

#[tokio::test]
async fn the_desktop_pair_answers_opt_in_first_then_unsupported() {
    let tw = Tabwire::managed("envelope-desktop").await;
    for tool in ["inspect_native_file_dialog", "cancel_native_file_dialog"] {
        let args = |opt_in: bool| json!({ "desktop_opt_in": opt_in, "ticket": "t-1" });
        let refused = tw.call(tool, args(false)).await;
        assert_eq!(
            refused.error_code(),
            "desktop_opt_in_required",
            "{}",
            refused.envelope
        );
        assert_eq!(refused.reported()["status"], "refused");
        let unsupported = tw.call(tool, args(true)).await;
        assert_eq!(
            unsupported.error_code(),
            "native_dialog_unsupported",
            "{}",
            unsupported.envelope
        );
        let legacy = unsupported.reported();
        assert_eq!(legacy["status"], "unsupported");
        assert_eq!(legacy["desktop"]["platform"], std::env::consts::OS);
    }
    let status = tw.ok("get_setup_status", json!({})).await;
    let registry = &status["capability_registry"];
    let declared = mcp::faces::btap::FACE
        .tools
        .iter()
        .filter(|t| t.listed)
        .count();
    assert_eq!(registry["tool_count"], declared, "{registry}");
    // BrowserTap's 15 page tools and tabwire's page_select, page_fill, and the page's own
    // tools (list_page_tools, call_page_tool).
    assert_eq!(registry["groups"]["page"].as_array().unwrap().len(), 19);
    assert_eq!(registry["groups"]["desktop"].as_array().unwrap().len(), 2);
    assert!(
        registry["unsupported_groups"]["desktop"].is_string(),
        "{registry}"
    );
}

#[tokio::test]
async fn a_new_tab_leaves_the_default_and_a_closed_default_is_replaced_and_said() {
    let site = Site::start().await;
    let tw = Tabwire::managed("envelope-default").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let first = tw.ok("list_tabs", json!({})).await["default_session_id"].clone();
    // As in BrowserTap, opening a tab (even in front) does not move the default.
    let opened = tw
        .ok(
            "open_new_tab",
            json!({ "url": site.url("fold.html"), "active": true, "owner_id": "task" }),
        )
        .await;
    assert_eq!(opened["default_session_id"], first, "{opened}");
    let scan = tw.ok("scan_page", json!({})).await;
    assert!(
        scan["observation"]["url"]
            .as_str()
            .unwrap()
            .ends_with("form.html"),
        "{scan}"
    );
    // The default closes: the next implicit call says which tab replaced it.
    tw.ok(
        "close_tabs",
        json!({ "tab_id": first, "only_if_agent_owned": false }),
    )
    .await;
    let after = tw.call("scan_page", json!({})).await;
    let diagnostics = after.envelope["diagnostics"].clone();
    assert_eq!(diagnostics["switched_from"], first, "{}", after.envelope);
    let now = diagnostics["switched_session"].as_str().unwrap().to_owned();
    assert_ne!(json!(now), first);
    assert_eq!(after.envelope["target"]["session_id"], json!(now));
    after.ok();

    // A session with no default yet takes the tab it brought to the front.
    let fresh = Tabwire::managed("envelope-fresh").await;
    let front = fresh
        .ok(
            "open_new_tab",
            json!({ "url": site.url("fold.html"), "active": true }),
        )
        .await;
    let read = fresh.call("scan_page", json!({})).await;
    assert_eq!(
        read.envelope["target"]["session_id"], front["session_id"],
        "{}",
        read.envelope
    );
}
