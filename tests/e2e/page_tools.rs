//! A page's own tools (WebMCP): listed, run in the page with their effect on it, offered
//! as MCP tools of the current tab, and announced when they change.

use serde_json::{Value, json};

use crate::support::{DebuggingBrowser, Heard, Site, Tabwire};

async fn cart(tw: &Tabwire) -> String {
    let ran = tw
        .ok(
            "execute_js",
            json!({ "script": "return document.getElementById('cart').textContent" }),
        )
        .await;
    ran["js_return"].as_str().unwrap_or_default().to_owned()
}

fn names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_page_tool_is_listed_and_run_in_the_page_which_shows_its_effect() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("page-tools").await;
    tw.ok("open_url", json!({ "url": site.url("webmcp.html") }))
        .await;
    let listed = tw.ok("list_page_tools", json!({})).await;
    assert_eq!(names(&listed), ["add_to_cart", "broken"], "{listed}");
    let add = &listed["tools"][0];
    assert_eq!(add["description"], "Adds an item to the cart by its SKU.");
    assert_eq!(add["input_schema"]["required"], json!(["sku"]));
    assert_eq!(add["call_as"], "webmcp_add_to_cart");
    assert_eq!(listed["from_page"], true);
    assert_eq!(listed["origin"], site.url("").trim_end_matches('/'));

    let ran = tw
        .ok(
            "call_page_tool",
            json!({ "name": "add_to_cart", "arguments": { "sku": "TEA-1", "quantity": 2 } }),
        )
        .await;
    assert_eq!(
        ran["result"]["content"][0]["text"], "added 2 of TEA-1",
        "{ran}"
    );
    assert_eq!(ran["from_page"], true);
    assert_eq!(cart(&tw).await, "TEA-1 × 2");

    // The page's failure is the call's, in the page's words; nothing was added.
    let failed = tw.call("call_page_tool", json!({ "name": "broken" })).await;
    assert!(
        failed.message().contains("the shop is closed"),
        "{}",
        failed.envelope
    );
    let unknown = tw
        .call("call_page_tool", json!({ "name": "refund" }))
        .await
        .err();
    assert!(
        unknown.to_string().contains("add_to_cart"),
        "an unknown tool's error names those there are: {unknown}"
    );
    assert_eq!(cart(&tw).await, "TEA-1 × 2");
}

#[tokio::test]
async fn the_current_tabs_page_tools_are_mcp_tools_and_changes_are_announced() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("page-tools-mcp").await;
    let before = tw.client.list_all_tools().await.expect("tools/list");
    assert!(!before.iter().any(|t| t.name.starts_with("webmcp_")));
    tw.ok("open_url", json!({ "url": site.url("webmcp.html") }))
        .await;
    let listed = tw.client.list_all_tools().await.expect("tools/list");
    let add = listed
        .iter()
        .find(|t| t.name == "webmcp_add_to_cart")
        .expect("the page's tool is listed");
    let described = add.description.as_deref().unwrap_or_default();
    assert!(described.contains("untrusted"), "{described}");
    assert!(
        described.contains("Adds an item to the cart"),
        "{described}"
    );
    assert_eq!(add.input_schema["properties"]["sku"]["type"], "string");

    // Called as any tool is; it runs in the page.
    tw.ok("webmcp_add_to_cart", json!({ "sku": "JAM-9" })).await;
    assert_eq!(cart(&tw).await, "JAM-9 × 1");

    // The page offers another tool: the client hears the list changed, and it is there.
    tw.ok("page_click", json!({ "selector": "#offer" })).await;
    tw.client
        .service()
        .wait_for("a tool list change", |h| {
            matches!(h, Heard::ToolListChanged)
        })
        .await;
    let listed = tw.client.list_all_tools().await.expect("tools/list");
    assert!(listed.iter().any(|t| t.name == "webmcp_checkout"));
    let paid = tw.ok("webmcp_checkout", json!({})).await;
    assert_eq!(paid["result"], "paid for 1 lines");

    // Another page has none of them: announced again, and gone from the list.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    tw.client
        .service()
        .wait_for_nth("a second tool list change", 2, |h| {
            matches!(h, Heard::ToolListChanged)
        })
        .await;
    let listed = tw.client.list_all_tools().await.expect("tools/list");
    assert!(!listed.iter().any(|t| t.name.starts_with("webmcp_")));
    // Called anyway, it is an unknown tool now, as MCP answers one.
    let gone = tw
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("webmcp_checkout"))
        .await;
    let refused = gone
        .expect_err("a page tool of a page no longer shown")
        .to_string();
    assert!(refused.contains("list the tools again"), "{refused}");
}

#[tokio::test]
async fn a_tab_that_registered_its_tools_before_tabwire_looked_lists_them() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("page-tools-popup").await;
    tw.ok("open_url", json!({ "url": site.url("webmcp.html") }))
        .await;
    // The page opens the shop in a tab of its own; tabwire has not looked into it yet
    // when it loads and registers its tools.
    tw.ok(
        "execute_js",
        json!({ "script": "window.open('webmcp.html?second'); return 1" }),
    )
    .await;
    let second = |listed: &Value| {
        listed["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| {
                t["url"].as_str().is_some_and(|u| u.ends_with("?second"))
                    && t["title"] == "Corner shop"
            })
            .and_then(|t| t["session_id"].as_str().map(str::to_owned))
    };
    crate::support::poll_until("the shop's second tab, loaded", || async {
        second(&tw.ok("list_tabs", json!({})).await).is_some()
    })
    .await;
    let tab = second(&tw.ok("list_tabs", json!({})).await).unwrap();
    tw.ok(
        "wait_for_url",
        json!({ "session_id": tab, "url_pattern": "second" }),
    )
    .await;
    let listed = tw.ok("list_page_tools", json!({ "session_id": tab })).await;
    assert_eq!(names(&listed), ["add_to_cart", "broken"], "{listed}");
}

#[tokio::test]
async fn the_chrome_face_lists_and_runs_a_pages_tools() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("page-tools-chrome", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("webmcp.html") }))
        .await;
    let listed = tw.chrome_ok("chrome_list_page_tools", json!({})).await;
    assert_eq!(names(&listed), ["add_to_cart", "broken"], "{listed}");
    assert_eq!(listed["tools"][0]["inputSchema"]["type"], "object");
    let ran = tw
        .chrome_ok(
            "chrome_call_page_tool",
            json!({ "name": "add_to_cart", "arguments": { "sku": "OAT-3" } }),
        )
        .await;
    assert_eq!(ran["result"]["content"][0]["text"], "added 1 of OAT-3");
    let shown = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return document.getElementById('cart').textContent" }),
        )
        .await;
    assert_eq!(shown["result"], "OAT-3 × 1");
    let failed = tw
        .chrome("chrome_call_page_tool", json!({ "name": "broken" }))
        .await;
    assert!(
        failed.is_error && failed.text.contains("the shop is closed"),
        "{}",
        failed.text
    );
}

#[tokio::test]
async fn a_browser_without_page_tools_says_so() {
    let site = Site::start().await;
    // A browser of the user's, started without the WebMCP feature.
    let browser = DebuggingBrowser::launch("page-tools-none").await;
    let tw = Tabwire::stdio_with("page-tools-none", &["--cdp-endpoint", &browser.http]).await;
    tw.ok("open_url", json!({ "url": site.url("webmcp.html") }))
        .await;
    let refused = tw.call("list_page_tools", json!({})).await;
    assert!(refused.is_error, "{}", refused.envelope);
    assert!(refused.message().contains("WebMCP"), "{}", refused.envelope);
}
