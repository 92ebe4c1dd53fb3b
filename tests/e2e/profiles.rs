//! Tool profiles (`--tools`): `core` serves each face's everyday tools and nothing else,
//! a list serves exactly the tools it names, and a name no face serves refuses to start.

use std::collections::BTreeSet;

use serde_json::json;

use crate::support::{BINARY, Site, Tabwire};

async fn listed(tw: &Tabwire) -> BTreeSet<String> {
    let tools = tw.client.list_all_tools().await.expect("tools/list");
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn core_serves_the_everyday_tools_of_each_face_and_they_work() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("tools-core", &["--face", "btap,chrome", "--tools", "core"]).await;
    let names = listed(&tw).await;
    for everyday in [
        "open_url",
        "scan_page",
        "page_click",
        "page_type",
        "page_press",
        "page_select",
        "wait_for",
        "capture_page_screenshot",
        "list_tabs",
        "execute_js",
        "chrome_navigate",
        "chrome_read_page",
        "chrome_click_element",
        "chrome_fill_or_select",
        "chrome_keyboard",
        "chrome_screenshot",
        "get_windows_and_tabs",
        "chrome_javascript",
    ] {
        assert!(
            names.contains(everyday),
            "{everyday} missing from {names:?}"
        );
    }
    assert!(names.len() <= 20, "{names:?}");
    assert!(!names.contains("gif_recorder") && !names.contains("chrome_bookmark_add"));

    // They work as in the full list; a tool left out is not there to call.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let read = tw.ok("scan_page", json!({})).await;
    assert!(
        read["observation"]["targets"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{read}"
    );
    let refused = tw
        .client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("get_cookies")
                .with_arguments(serde_json::Map::new()),
        )
        .await;
    let error = refused
        .expect_err("get_cookies is not served under core")
        .to_string();
    assert!(error.contains("get_cookies"), "{error}");

    // Declared compactly: no null default, no annotation that repeats MCP's default.
    let tools = tw.client.list_all_tools().await.expect("tools/list");
    let click = tools
        .iter()
        .find(|t| t.name == "page_click")
        .expect("page_click");
    let schema = serde_json::to_string(&click.input_schema).unwrap();
    assert!(!schema.contains("null"), "{schema}");
    assert!(
        schema.contains("a ref from a read"),
        "a ref is still said to go in the selector: {schema}"
    );
    assert!(click.annotations.is_none(), "{:?}", click.annotations);
}

#[tokio::test]
async fn a_list_serves_exactly_the_tools_it_names() {
    let tw = Tabwire::stdio_with("tools-named", &["--tools", "core,get_cookies"]).await;
    let names = listed(&tw).await;
    assert!(
        names.contains("get_cookies") && names.contains("scan_page"),
        "{names:?}"
    );
    assert!(!names.contains("gif_recorder"), "{names:?}");

    let only = Tabwire::stdio_with("tools-only", &["--tools", "list_tabs, open_url"]).await;
    assert_eq!(
        listed(&only).await,
        BTreeSet::from(["list_tabs".to_owned(), "open_url".to_owned()])
    );
}

#[tokio::test]
async fn a_tool_no_face_serves_refuses_to_start_and_is_named() {
    let output = tokio::process::Command::new(BINARY)
        .args(["--isolated", "--headless", "--tools", "core,scan_pages"])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run tabwire");
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("names scan_pages that"), "{said}");
    // The environment names the tools as the flag does.
    let from_env = tokio::process::Command::new(BINARY)
        .args(["--isolated", "--headless"])
        .env("TABWIRE_TOOLS", "chrome_navigate")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run tabwire");
    assert!(!from_env.status.success());
    let said = String::from_utf8_lossy(&from_env.stderr);
    assert!(
        said.contains("chrome_navigate") && said.contains("btap"),
        "{said}"
    );
}
