use serde_json::json;

use crate::support::{Site, Tabwire};

#[tokio::test]
async fn tools_are_listed_with_schemas_and_honest_annotations() {
    let tw = Tabwire::stdio("tools-list").await;
    let tools = tw.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for expected in [
        "list_tabs",
        "list_all_tabs",
        "switch_tab",
        "activate_tab",
        "open_url",
        "open_new_tab",
        "close_tabs",
        "get_setup_status",
        "get_automation_profile",
        "set_automation_profile",
        "scan_page",
        "scroll_page",
        "wait_for",
        "wait_for_url",
        "page_click",
        "page_type",
        "page_press",
        "page_drag",
        "execute_js",
        "get_execute_js_result",
        "handle_dialog",
        "capture_page_screenshot",
        "save_pdf",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let hints = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.annotations.clone())
            .expect(name)
    };
    // As BrowserTap marks them: a scan may run extra_js, so it is not read-only.
    assert_eq!(hints("scan_page").read_only_hint, Some(false));
    assert_eq!(hints("list_tabs").read_only_hint, Some(true));
    assert_eq!(hints("execute_js").read_only_hint, Some(false));
    assert_eq!(hints("close_tabs").destructive_hint, Some(true));
    let open_url = tools.iter().find(|t| t.name == "open_url").unwrap();
    assert_eq!(open_url.input_schema["required"], json!(["url"]));
}

#[tokio::test]
async fn setup_status_does_not_launch_the_browser_and_the_first_page_call_does() {
    let site = Site::start().await;
    let tw = Tabwire::managed("setup").await;
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["link_state"], "not_started");
    assert_eq!(status["extension_build_verdict"], "unverifiable");
    // Nothing to do: the first call that needs a browser launches it.
    assert_eq!(
        (status["status"].as_str(), status["action"].as_str()),
        (Some("healthy"), Some("none"))
    );
    // This process runs the executable installed at its path; it serves MCP and holds the
    // browser itself (no broker with --isolated).
    assert_eq!(status["mcp_build_verdict"], "matches_tree", "{status}");
    assert_eq!(status["mcp_build_enforced"], true);
    assert_eq!(
        status["mcp_source_identity"],
        status["expected_python_source_identity"]
    );
    assert_eq!(status["restart_mcp_session_required"], false);
    assert_eq!(status["remote_mode"], false);
    assert!(status["protocol_version"].is_u64(), "{status}");
    assert_eq!(status["connected_tabs"], 0);
    assert!(
        status["state_paths"]["token_file"]
            .as_str()
            .is_some_and(|p| p.ends_with("link-secret"))
    );
    assert_eq!(status["diagnosis"]["bridge_build_verdict"], "matches_tree");
    assert!(
        status["capability_registry"]["tool_count"]
            .as_u64()
            .unwrap()
            >= 23
    );
    assert!(
        crate::support::browser_children(tw.pid()).is_empty(),
        "a browser started before any page call"
    );

    let opened = tw
        .ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    assert_eq!(opened["title"], "Form");
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["link_state"], "connected");
    let tab = &status["tabs"][0];
    assert_eq!(
        (tab["title"].as_str(), tab["browser"].as_str()),
        (Some("Form"), Some("chrome")),
        "{status}"
    );
    assert_eq!(
        status["connected_tabs"],
        status["tabs"].as_array().map(Vec::len).unwrap_or(0)
    );
    assert!(
        status["browser_version"]
            .as_str()
            .unwrap()
            .contains("Chrom"),
        "{status}"
    );
}

#[tokio::test]
async fn bad_input_is_named_and_the_server_keeps_serving() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("bad-input").await;
    let cases = [
        ("open_url", json!({}), "invalid_request", "url"),
        ("open_url", json!({ "url": 42 }), "invalid_request", "url"),
        (
            "open_url",
            json!({ "url": "file:///etc/passwd" }),
            "url_scheme_refused",
            "url",
        ),
        (
            "open_url",
            json!({ "url": "javascript:alert(1)" }),
            "url_scheme_refused",
            "url",
        ),
        (
            "scan_page",
            json!({ "maxchars": -5 }),
            "invalid_request",
            "maxchars",
        ),
        ("page_click", json!({ "x": 10 }), "invalid_request", "y"),
        (
            "page_press",
            json!({ "keys_csv": "ctrl,nosuchkey" }),
            "invalid_request",
            "nosuchkey",
        ),
        (
            "scan_page",
            json!({ "session_id": "999" }),
            "tab_not_found",
            "999",
        ),
        (
            "save_pdf",
            json!({ "save_path": "../escape.pdf" }),
            "path_outside_output_dir",
            "save_path",
        ),
        (
            "capture_page_screenshot",
            json!({ "save_path": "/tmp/abs.png" }),
            "path_outside_output_dir",
            "save_path",
        ),
        (
            "capture_page_screenshot",
            json!({ "format": "png", "quality": 50 }),
            "invalid_request",
            "quality",
        ),
        (
            "wait_for",
            json!({ "text": "a", "selector": "b" }),
            "invalid_request",
            "exactly one",
        ),
    ];
    for (tool, args, code, named) in cases {
        let reply = tw.call(tool, args.clone()).await;
        assert_eq!(reply.reason(), code, "{tool} {args}: {}", reply.envelope);
        let envelope = reply.err();
        assert!(
            envelope["error"]["message"]
                .as_str()
                .unwrap()
                .contains(named),
            "{tool} {args}: message should name {named}: {envelope}"
        );
    }
    // Selector problems come back from the page, still as structured errors.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let reply = tw
        .call("page_click", json!({ "selector": "button[[" }))
        .await;
    assert_eq!(reply.error_code(), "invalid_selector", "{}", reply.envelope);
    let reply = tw
        .call("page_click", json!({ "selector": "#does-not-exist" }))
        .await;
    assert_eq!(reply.error_code(), "not_found", "{}", reply.envelope);
    let reply = tw.call("page_click", json!({ "selector": "input" })).await;
    assert_eq!(reply.error_code(), "ambiguous", "{}", reply.envelope);
    // An argument the tool does not know is set aside, as BrowserTap does, and said so.
    let ignored = tw.call("scan_page", json!({ "bogus": true })).await;
    assert_eq!(
        ignored.envelope["diagnostics"]["ignored_arguments"],
        json!(["bogus"]),
        "{}",
        ignored.envelope
    );
    ignored.ok();
    // And it still serves.
    let scan = tw.ok("scan_page", json!({})).await;
    assert!(scan["content"].as_str().unwrap().contains("Account"));
}

/// A navigation's reply names the page it landed on with the title the page ends up
/// with: one its script sets while loading, none when it has none, and the new one after
/// a same-document move.
#[tokio::test]
async fn open_url_reports_the_url_and_title_the_page_landed_with() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("landed-title").await;
    let scripted = site.url("titled-by-script.html");
    let landed = tw.ok("open_url", json!({ "url": scripted })).await;
    assert_eq!(landed["title"], "Set by script", "{landed}");
    assert_eq!(landed["url"], scripted);

    let untitled = tw
        .ok("open_url", json!({ "url": site.url("untitled.html") }))
        .await;
    assert_eq!(untitled["title"], "", "{untitled}");

    let form = site.url("form.html");
    let first = tw.ok("open_url", json!({ "url": form })).await;
    assert_eq!(first["title"], "Form");
    let moved = tw
        .ok("open_url", json!({ "url": format!("{form}#section") }))
        .await;
    assert_eq!(moved["title"], "Form");
    assert!(
        moved["url"]
            .as_str()
            .unwrap()
            .ends_with("form.html#section"),
        "{moved}"
    );
}
