//! The chrome face, tool by tool, as an agent written for the Chrome MCP Server would
//! use it: replies are the payload JSON as text (errors a plain message with isError),
//! ids are integers, and what each tool did is checked on the page, on disk or in the
//! browser. Runs over the managed link and the extension link.

use serde_json::{Value, json};

use crate::support::{REPORT, Site, Tabwire, over_extension, scratch};

async fn chrome(name: &str) -> Tabwire {
    Tabwire::on_link(name, &["--face", "chrome"]).await
}

/// Opens a page in the session's tab; its tab id.
async fn open(tw: &Tabwire, url: &str) -> u64 {
    let opened = tw.chrome_ok("chrome_navigate", json!({ "url": url })).await;
    assert_eq!(opened["success"], true, "{opened}");
    opened["tabId"]
        .as_u64()
        .or(opened["tabs"][0]["tabId"].as_u64())
        .unwrap_or_else(|| panic!("no tabId in {opened}"))
}

async fn js(tw: &Tabwire, code: &str) -> String {
    let ran = tw
        .chrome_ok("chrome_javascript", json!({ "code": code }))
        .await;
    assert_eq!(ran["success"], true, "{ran}");
    ran["result"].as_str().unwrap_or_default().to_owned()
}

/// The ref the outline gives the line containing `needle`.
fn ref_of(outline: &str, needle: &str) -> String {
    let line = outline
        .lines()
        .find(|l| l.contains(needle) && l.contains("[ref="))
        .unwrap_or_else(|| panic!("no line with {needle} and a ref in:\n{outline}"));
    let start = line.find("[ref=").unwrap() + 5;
    let end = line[start..].find(']').unwrap() + start;
    line[start..end].to_owned()
}

async fn outline(tw: &Tabwire, args: Value) -> String {
    let read = tw.chrome_ok("chrome_read_page", args).await;
    read["pageContent"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn tools_list_is_the_chrome_servers() {
    let tw = chrome("chrome-list").await;
    let tools = tw.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for name in [
        "get_windows_and_tabs",
        "chrome_navigate",
        "chrome_close_tabs",
        "chrome_switch_tab",
        "chrome_go_back_or_forward",
        "chrome_screenshot",
        "chrome_network_capture_start",
        "chrome_network_capture_stop",
        "chrome_network_debugger_start",
        "chrome_network_debugger_stop",
        "chrome_network_capture",
        "chrome_network_request",
        "chrome_read_page",
        "chrome_get_web_content",
        "search_tabs_content",
        "chrome_computer",
        "chrome_click_element",
        "chrome_fill_or_select",
        "chrome_keyboard",
        "chrome_upload_file",
        "chrome_history",
        "chrome_bookmark_search",
        "chrome_bookmark_add",
        "chrome_bookmark_delete",
        "chrome_handle_download",
        "chrome_javascript",
        "chrome_console",
        "chrome_handle_dialog",
    ] {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }
    for hidden in [
        "chrome_get_interactive_elements",
        "chrome_inject_script",
        "chrome_send_command_to_inject_script",
    ] {
        assert!(!names.contains(&hidden), "{hidden} is listed");
    }
    // Not listed, but callable, as in the original.
    let elements = tw
        .chrome("chrome_get_interactive_elements", json!({}))
        .await;
    assert!(!elements.is_error, "{}", elements.text);
    let navigate = tools.iter().find(|t| t.name == "chrome_navigate").unwrap();
    let properties = navigate.input_schema["properties"].as_object().unwrap();
    for param in [
        "url",
        "newWindow",
        "tabId",
        "background",
        "width",
        "height",
        "refresh",
    ] {
        assert!(
            properties.contains_key(param),
            "chrome_navigate lacks {param}"
        );
    }
    assert_eq!(properties["newWindow"]["default"], false);
    // Listed, and answering in the reference's shape (tests/e2e/search.rs tries it).
    let search = tw
        .chrome_ok("search_tabs_content", json!({ "query": "tide pools" }))
        .await;
    for field in [
        "success",
        "totalTabsSearched",
        "matchedTabsCount",
        "vectorSearchEnabled",
        "indexStats",
        "matchedTabs",
    ] {
        assert!(search.get(field).is_some(), "{field} in {search}");
    }
}

#[tokio::test]
async fn navigate_opens_reports_and_moves_through_history() {
    let site = Site::start().await;
    let tw = chrome("chrome-navigate").await;
    let form = site.url("form.html");
    let first = tw
        .chrome_ok("chrome_navigate", json!({ "url": form }))
        .await;
    assert_eq!(
        first["url"],
        form.as_str(),
        "it waits and says where it landed: {first}"
    );
    assert_eq!(first["title"], "Form");
    let tab = first["tabId"].as_u64().unwrap();
    assert!(first["windowId"].is_u64(), "{first}");

    // A second URL opens a new tab, which becomes the session's.
    let second = tw
        .chrome_ok("chrome_navigate", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(
        second["message"],
        "Opened URL in new tab in existing window"
    );
    assert_ne!(second["tabId"].as_u64(), Some(tab));
    assert_eq!(js(&tw, "return document.title").await, "Below the fold");

    // The URL already open in this session's tab is brought forward, not opened again.
    let again = tw
        .chrome_ok("chrome_navigate", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(again["message"], "Activated existing tab", "{again}");
    assert_eq!(again["tabId"], second["tabId"]);

    // In the first tab: to another page, back, forward, refresh.
    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("input.html"), "tabId": tab }),
    )
    .await;
    let back = tw
        .chrome_ok("chrome_navigate", json!({ "url": "back", "tabId": tab }))
        .await;
    assert_eq!(back["url"], form.as_str(), "{back}");
    let forward = tw
        .chrome_ok(
            "chrome_go_back_or_forward",
            json!({ "direction": "forward", "tabId": tab }),
        )
        .await;
    assert_eq!(forward["url"], site.url("input.html").as_str(), "{forward}");
    tw.chrome_ok("chrome_switch_tab", json!({ "tabId": tab }))
        .await;
    js(&tw, "window.marker = 1; return 1").await;
    let refreshed = tw
        .chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    assert_eq!(refreshed["message"], "Successfully refreshed current tab");
    assert_eq!(js(&tw, "return String(window.marker)").await, "undefined");

    // background: the session's tab stays where it was.
    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("shadow.html"), "background": true }),
    )
    .await;
    assert_eq!(js(&tw, "return document.title").await, "Input");

    let nothing = tw.chrome("chrome_navigate", json!({})).await;
    assert!(nothing.is_error);
    assert!(nothing.text.contains("url"), "{}", nothing.text);
    let refused = tw
        .chrome("chrome_navigate", json!({ "url": "file:///etc/passwd" }))
        .await;
    assert!(refused.is_error);
    assert!(refused.text.contains("url"), "{}", refused.text);
    let no_history = tw
        .chrome(
            "chrome_go_back_or_forward",
            json!({ "direction": "forward", "tabId": second["tabId"] }),
        )
        .await;
    assert!(no_history.is_error, "{}", no_history.text);
    assert!(no_history.text.contains("forward"), "{}", no_history.text);
}

#[tokio::test]
async fn a_read_by_url_opens_the_page_once_and_reads_the_open_tab_after() {
    let site = Site::start().await;
    let tw = chrome("chrome-content-url").await;
    let tab_count = |listed: &Value| listed["tabCount"].as_u64().unwrap();
    let before = tab_count(&tw.chrome_ok("get_windows_and_tabs", json!({})).await);
    let url = site.url("article.html");
    let first = tw
        .chrome_ok(
            "chrome_get_web_content",
            json!({ "url": url, "background": true }),
        )
        .await;
    assert!(
        first["textContent"]
            .as_str()
            .unwrap()
            .contains("When the tide goes out"),
        "{first}"
    );
    let opened = tab_count(&tw.chrome_ok("get_windows_and_tabs", json!({})).await);
    assert_eq!(opened, before + 1, "the page was opened in one new tab");
    // The same page named again (a fragment is a place on it, not another page) is read
    // from the tab that shows it: no tab is opened.
    let again = tw
        .chrome_ok(
            "chrome_get_web_content",
            json!({ "url": format!("{url}#top") }),
        )
        .await;
    assert_eq!(again["textContent"], first["textContent"]);
    let after = tab_count(&tw.chrome_ok("get_windows_and_tabs", json!({})).await);
    assert_eq!(after, opened, "no tab was opened for a page already open");
}

#[tokio::test]
async fn windows_and_tabs_are_listed_switched_and_closed() {
    let site = Site::start().await;
    let tw = chrome("chrome-tabs").await;
    let a = open(&tw, &site.url("form.html")).await;
    let b = open(&tw, &site.url("fold.html")).await;
    let listed = tw.chrome_ok("get_windows_and_tabs", json!({})).await;
    let tabs: Vec<&Value> = listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w["tabs"].as_array().unwrap())
        .collect();
    assert_eq!(listed["tabCount"].as_u64(), Some(tabs.len() as u64));
    let form = tabs.iter().find(|t| t["tabId"] == a).expect("the form tab");
    assert_eq!(form["url"], site.url("form.html").as_str());
    assert_eq!(form["title"], "Form");
    assert!(
        tabs.iter().any(|t| t["tabId"] == b && t["active"] == true),
        "{listed}"
    );

    let switched = tw
        .chrome_ok("chrome_switch_tab", json!({ "tabId": a }))
        .await;
    assert_eq!(switched["tabId"], a);
    assert_eq!(js(&tw, "return document.title").await, "Form");

    let closed = tw
        .chrome_ok("chrome_close_tabs", json!({ "tabIds": [b, 999_999] }))
        .await;
    assert_eq!(closed["closedTabIds"], json!([b]), "{closed}");
    assert_eq!(closed["invalidTabIds"], json!([999_999]), "{closed}");
    let none = tw
        .chrome_ok("chrome_close_tabs", json!({ "url": "no-such-page" }))
        .await;
    assert_eq!(none["success"], false);
    let by_url = tw
        .chrome_ok("chrome_close_tabs", json!({ "url": "form.html" }))
        .await;
    assert_eq!(by_url["closedTabIds"], json!([a]), "{by_url}");
    let listed = tw.chrome_ok("get_windows_and_tabs", json!({})).await;
    assert!(!listed.to_string().contains("form.html"), "{listed}");

    let unknown = tw
        .chrome("chrome_switch_tab", json!({ "tabId": 424_242 }))
        .await;
    assert!(unknown.is_error);
    let wrong = tw
        .chrome("chrome_switch_tab", json!({ "tabId": "soon" }))
        .await;
    assert!(wrong.is_error, "{}", wrong.text);
    let missing = tw.chrome("chrome_switch_tab", json!({})).await;
    assert!(missing.text.contains("tabId"), "{}", missing.text);
    // The server serves on.
    open(&tw, &site.url("input.html")).await;
}

#[tokio::test]
async fn read_page_refs_act_on_the_elements_they_name() {
    let site = Site::start().await;
    let tw = chrome("chrome-read").await;
    open(&tw, &site.url("form.html")).await;
    let read = tw.chrome_ok("chrome_read_page", json!({})).await;
    let text = read["pageContent"].as_str().unwrap();
    assert!(text.contains("- heading \"Account\""), "{text}");
    assert!(read["refMapCount"].as_u64().unwrap() >= 6, "{read}");
    assert!(read["viewport"]["width"].as_f64().unwrap() > 0.0);
    let name = ref_of(text, "textbox \"Full name\"");
    let terms = ref_of(text, "checkbox \"I agree\"");
    let plan = ref_of(text, "combobox \"Plan\"");
    assert!(text.contains("options=[Free|Pro]"), "{text}");

    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "ref": name, "value": "Ada Lovelace" }),
    )
    .await;
    tw.chrome_ok("chrome_click_element", json!({ "ref": terms }))
        .await;
    let chosen = tw
        .chrome_ok(
            "chrome_fill_or_select",
            json!({ "ref": plan, "value": "Pro" }),
        )
        .await;
    assert_eq!(chosen["elementInfo"]["value"], "Pro", "{chosen}");
    let state = js(
        &tw,
        "return [document.getElementById('name').value, document.getElementById('terms').checked, document.getElementById('plan').value].join('|')",
    )
    .await;
    assert_eq!(state, "Ada Lovelace|true|Pro");
    // The outline says so on the next read, and the same element keeps its ref.
    let again = outline(&tw, json!({})).await;
    assert!(again.contains(&format!("[ref={name}]")), "{again}");
    assert!(again.contains("value=\"Ada Lovelace\""), "{again}");
    assert!(again.contains("checked"), "{again}");

    let interactive = outline(&tw, json!({ "filter": "interactive" })).await;
    assert!(!interactive.contains("heading"), "{interactive}");
    assert!(interactive.contains(&name));

    // A ref from a page that has since gone is refused, clearly; the server serves on.
    let tab = tw.chrome_ok("chrome_read_page", json!({})).await["tabId"].clone();
    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("input.html"), "tabId": tab }),
    )
    .await;
    let stale = tw
        .chrome("chrome_click_element", json!({ "ref": terms }))
        .await;
    assert!(stale.is_error);
    assert!(stale.text.contains("read the page again"), "{}", stale.text);
    assert!(stale.text.contains(&terms), "{}", stale.text);
    let typo = tw
        .chrome("chrome_click_element", json!({ "ref": "ref_999999" }))
        .await;
    assert!(typo.is_error);
    assert!(typo.text.contains("never handed out"), "{}", typo.text);
    let neither = tw.chrome("chrome_click_element", json!({})).await;
    assert!(neither.is_error);
    assert!(neither.text.contains("selector"), "{}", neither.text);
    assert_eq!(js(&tw, "return document.title").await, "Input");
}

#[tokio::test]
async fn read_page_reaches_into_frames_and_shadow_roots_and_its_refs_act_there() {
    let site = Site::start().await;
    let tw = chrome("chrome-frames").await;
    open(&tw, &site.url("frames.html")).await;
    let text = outline(&tw, json!({ "viewportOnly": false })).await;
    assert!(text.contains("- iframe"), "{text}");
    // One frame of this site, one of another (out of process): a button in each.
    let buttons: Vec<String> = text
        .lines()
        .filter(|l| l.contains("Inner button"))
        .map(|l| ref_of(l, "Inner button"))
        .collect();
    assert_eq!(buttons.len(), 2, "{text}");
    for button in &buttons {
        tw.chrome_ok("chrome_click_element", json!({ "ref": button }))
            .await;
    }
    let after = outline(&tw, json!({ "viewportOnly": false })).await;
    assert_eq!(after.matches("inner clicked").count(), 2, "{after}");

    open(&tw, &site.url("shadow.html")).await;
    let text = outline(&tw, json!({ "viewportOnly": false })).await;
    let deep = ref_of(&text, "Shadow action");
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "left_click", "ref": deep }),
    )
    .await;
}

#[tokio::test]
async fn web_content_is_the_article_not_the_page_around_it() {
    let site = Site::start().await;
    let tw = chrome("chrome-content").await;
    open(&tw, &site.url("article.html")).await;
    let content = tw.chrome_ok("chrome_get_web_content", json!({})).await;
    let text = content["textContent"].as_str().unwrap();
    assert!(text.contains("When the tide goes out"), "{text}");
    assert!(text.contains("Never pull an anemone"), "{text}");
    for chrome_text in ["Sign in", "Ten best beaches", "Subscribe to our newsletter"] {
        assert!(
            !text.contains(chrome_text),
            "{chrome_text} is not content: {text}"
        );
    }
    assert_eq!(content["article"]["title"], "Life in a tide pool");
    assert_eq!(content["article"]["byline"], "Mira Okafor");
    assert_eq!(content["article"]["siteName"], "Coastal Notes");
    assert_eq!(content["article"]["lang"], "en");
    assert_eq!(content["metadata"]["published"], "2026-05-14T09:00:00Z");

    let html = tw
        .chrome_ok("chrome_get_web_content", json!({ "format": "html" }))
        .await;
    let html = html["htmlContent"].as_str().unwrap();
    assert!(html.contains("<h1>Life in a tide pool</h1>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<style"), "{html}");

    let narrowed = tw
        .chrome_ok("chrome_get_web_content", json!({ "selector": "footer" }))
        .await;
    assert!(
        narrowed["textContent"]
            .as_str()
            .unwrap()
            .contains("Subscribe"),
        "{narrowed}"
    );
    let missing = tw
        .chrome("chrome_get_web_content", json!({ "selector": "#nope" }))
        .await;
    assert!(missing.is_error);
}

#[tokio::test]
async fn computer_clicks_types_keys_scrolls_hovers_drags_and_waits() {
    let site = Site::start().await;
    let tw = chrome("chrome-computer").await;
    open(&tw, &site.url("form.html")).await;
    let text = outline(&tw, json!({})).await;
    let email = ref_of(&text, "textbox \"Email address\"");
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "left_click", "ref": email }),
    )
    .await;
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "type", "text": "ada@example.com" }),
    )
    .await;
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "key", "text": "ctrl+a Backspace" }),
    )
    .await;
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "type", "text": "x@y.z" }),
    )
    .await;
    assert_eq!(
        js(&tw, "return document.getElementById('email').value").await,
        "x@y.z"
    );
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "fill", "ref": email, "value": "filled@example.com" }),
    )
    .await;
    assert_eq!(
        js(&tw, "return document.getElementById('email').value").await,
        "filled@example.com"
    );
    let shot = tw
        .chrome("chrome_computer", json!({ "action": "screenshot" }))
        .await;
    assert!(!shot.is_error, "{}", shot.text);
    assert_eq!(shot.images.len(), 1);

    open(&tw, &site.url("fold.html")).await;
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "scroll", "scrollDirection": "down", "scrollAmount": 5 }),
    )
    .await;
    let scrolled: f64 = js(&tw, "return String(window.scrollY)")
        .await
        .parse()
        .unwrap();
    assert!(scrolled > 0.0, "scrollY {scrolled}");

    open(&tw, &site.url("input.html")).await;
    js(&tw, "document.getElementById('pad').addEventListener('mouseover', () => window.hovered = true); return 1").await;
    let pad = tw
        .chrome_ok("chrome_get_interactive_elements", json!({}))
        .await;
    assert!(pad["count"].as_u64().unwrap() >= 1, "{pad}");
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "hover", "coordinates": { "x": 100, "y": 100 } }),
    )
    .await;
    assert_eq!(js(&tw, "return String(window.hovered)").await, "true");
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "left_click_drag", "startCoordinates": { "x": 50, "y": 50 }, "coordinates": { "x": 250, "y": 150 } }),
    )
    .await;
    let drag = js(&tw, "return document.getElementById('drag').textContent").await;
    assert!(drag.contains("\"first\":[\"down\",50,50]"), "{drag}");
    assert!(drag.contains("\"last\":[\"up\",250,150]"), "{drag}");

    js(
        &tw,
        "setTimeout(() => document.body.append('arrived later'), 200); return 1",
    )
    .await;
    tw.chrome_ok(
        "chrome_computer",
        json!({ "action": "wait", "text": "arrived later", "timeout": 10000 }),
    )
    .await;
    let unknown = tw
        .chrome("chrome_computer", json!({ "action": "teleport" }))
        .await;
    assert!(unknown.is_error);
    assert!(unknown.text.contains("action"), "{}", unknown.text);
    let no_point = tw
        .chrome("chrome_computer", json!({ "action": "left_click" }))
        .await;
    assert!(no_point.is_error);
}

#[tokio::test]
async fn click_fill_and_keyboard_by_selector_and_xpath() {
    let site = Site::start().await;
    let tw = chrome("chrome-input").await;
    open(&tw, &site.url("form.html")).await;
    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "selector": "#notes", "value": "new note" }),
    )
    .await;
    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "selector": "//select[@id='plan']", "selectorType": "xpath", "value": "pro" }),
    )
    .await;
    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "selector": "#terms", "value": true }),
    )
    .await;
    let bad_option = tw
        .chrome(
            "chrome_fill_or_select",
            json!({ "selector": "#plan", "value": "Gold" }),
        )
        .await;
    assert!(bad_option.is_error);
    assert!(
        bad_option.text.contains("Free"),
        "the options are said: {}",
        bad_option.text
    );
    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "selector": "#name", "value": "Ada" }),
    )
    .await;
    let clicked = tw
        .chrome_ok(
            "chrome_click_element",
            json!({ "selector": "button[type=submit]" }),
        )
        .await;
    assert_eq!(clicked["clickMethod"], "selector");
    let submitted = js(&tw, "return document.getElementById('result').textContent").await;
    let submitted: Value = serde_json::from_str(&submitted).unwrap();
    assert_eq!(submitted["notes"], "new note");
    assert_eq!(submitted["plan"], "Pro");
    assert_eq!(submitted["terms"], "on");
    assert_eq!(submitted["name"], "Ada");

    open(&tw, &site.url("input.html")).await;
    js(
        &tw,
        "document.body.insertAdjacentHTML('beforeend', '<input id=box>'); return 1",
    )
    .await;
    let keys = tw
        .chrome_ok(
            "chrome_keyboard",
            json!({ "keys": "Hello,Ctrl+A,Backspace,Bye", "selector": "#box" }),
        )
        .await;
    assert_eq!(keys["results"].as_array().unwrap().len(), 4, "{keys}");
    assert_eq!(
        js(&tw, "return document.getElementById('box').value").await,
        "Bye"
    );
    let pressed = js(&tw, "return document.getElementById('keys').textContent").await;
    assert!(pressed.contains("Control+a"), "{pressed}");
    let missing = tw
        .chrome("chrome_click_element", json!({ "selector": "#nope" }))
        .await;
    assert!(missing.is_error);
    assert!(missing.text.contains("#nope"), "{}", missing.text);
}

#[tokio::test]
async fn a_dialog_a_click_opens_waits_for_handle_dialog() {
    let site = Site::start().await;
    let tw = chrome("chrome-dialog").await;
    open(&tw, &site.url("dialogs.html")).await;
    let clicked = tw
        .chrome_ok("chrome_click_element", json!({ "selector": "#alert" }))
        .await;
    assert_eq!(clicked["dialog"]["message"], "Hello there", "{clicked}");
    let handled = tw
        .chrome_ok("chrome_handle_dialog", json!({ "action": "accept" }))
        .await;
    assert_eq!(handled["success"], true);
    assert_eq!(
        js(&tw, "return document.getElementById('out').textContent").await,
        "alert closed"
    );
    let none = tw
        .chrome("chrome_handle_dialog", json!({ "action": "dismiss" }))
        .await;
    assert!(none.is_error);
    assert!(none.text.contains("No JavaScript dialog"), "{}", none.text);
    // A prompt a script opens: answered with text.
    let waiting = tw
        .chrome(
            "chrome_javascript",
            json!({ "code": "return prompt('Your name?')" }),
        )
        .await;
    assert_eq!(waiting.payload["success"], false, "{}", waiting.text);
    let answered = tw
        .chrome_ok(
            "chrome_handle_dialog",
            json!({ "action": "accept", "promptText": "Ada" }),
        )
        .await;
    assert_eq!(answered["promptText"], "Ada", "{answered}");
}

#[tokio::test]
async fn screenshots_are_saved_and_sent_as_images_with_their_real_size() {
    let site = Site::start().await;
    let tw = chrome("chrome-shot").await;
    open(&tw, &site.url("form.html")).await;
    let saved = tw
        .chrome_ok("chrome_screenshot", json!({ "name": "form page" }))
        .await;
    let path = std::path::PathBuf::from(saved["fullPath"].as_str().unwrap());
    assert!(path.starts_with(&tw.output_dir), "{path:?}");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[1..4], b"PNG");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    assert_eq!(saved["dimensions"]["width"], width);

    let sent = tw
        .chrome(
            "chrome_screenshot",
            json!({ "storeBase64": true, "savePng": false, "fullPage": false }),
        )
        .await;
    assert!(!sent.is_error, "{}", sent.text);
    assert_eq!(sent.images.len(), 1);
    assert_eq!(sent.images[0].1, "image/png");
    assert!(sent.payload.get("fullPath").is_none());

    let element = tw
        .chrome_ok(
            "chrome_screenshot",
            json!({ "selector": "button[type=submit]", "savePng": false }),
        )
        .await;
    let dpr = element["devicePixelRatio"].as_f64().unwrap();
    let button_width: f64 = js(
        &tw,
        "return String(document.querySelector('button').getBoundingClientRect().width)",
    )
    .await
    .parse()
    .unwrap();
    let shot_width = element["dimensions"]["width"].as_f64().unwrap();
    assert!(
        (shot_width - button_width * dpr).abs() <= 2.0,
        "{shot_width} vs {button_width}×{dpr}"
    );
}

#[tokio::test]
async fn network_captures_have_the_requests_with_headers_and_bodies() {
    let site = Site::start().await;
    let tw = chrome("chrome-network").await;
    open(&tw, &site.url("form.html")).await;
    let started = tw
        .chrome_ok("chrome_network_capture_start", json!({}))
        .await;
    assert_eq!(started["success"], true, "{started}");
    let twice = tw.chrome("chrome_network_capture_start", json!({})).await;
    assert!(twice.is_error, "one capture at a time: {}", twice.text);
    js(
        &tw,
        "await fetch('/echo-request', { method: 'POST', body: 'a=1', headers: { 'x-test': 'yes' } }); await fetch('/json'); return 1",
    )
    .await;
    let stopped = tw.chrome_ok("chrome_network_capture_stop", json!({})).await;
    let requests = stopped["requests"].as_array().unwrap();
    let post = requests
        .iter()
        .find(|r| r["url"].as_str().unwrap().ends_with("/echo-request"))
        .unwrap_or_else(|| panic!("{stopped}"));
    assert_eq!(post["method"], "POST");
    assert_eq!(post["requestBody"], "a=1");
    assert_eq!(post["status"], 200);
    let sent_header = post["specificRequestHeaders"]["x-test"].clone();
    let common_header = stopped["commonRequestHeaders"]["x-test"].clone();
    assert!(sent_header == "yes" || common_header == "yes", "{post}");
    assert!(post.get("responseBody").is_none());
    assert!(
        requests
            .iter()
            .any(|r| r["url"].as_str().unwrap().ends_with("/json"))
    );

    // With bodies, through the unified tool.
    tw.chrome_ok(
        "chrome_network_capture",
        json!({ "action": "start", "needResponseBody": true }),
    )
    .await;
    js(&tw, "await (await fetch('/json')).text(); return 1").await;
    let stopped = tw
        .chrome_ok(
            "chrome_network_capture",
            json!({ "action": "stop", "needResponseBody": true }),
        )
        .await;
    assert_eq!(stopped["backend"], "debugger");
    let json_request = stopped["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["url"].as_str().unwrap().ends_with("/json"))
        .unwrap_or_else(|| panic!("{stopped}"))
        .clone();
    assert!(
        json_request["responseBody"]
            .as_str()
            .unwrap()
            .contains("items"),
        "{json_request}"
    );

    // The debugger pair, opening a page itself, with static files left out.
    tw.chrome_ok(
        "chrome_network_debugger_start",
        json!({ "url": site.url("fetcher.html") }),
    )
    .await;
    let stopped = tw
        .chrome_ok("chrome_network_debugger_stop", json!({}))
        .await;
    assert!(stopped["requestCount"].as_u64().unwrap() >= 1, "{stopped}");
    let stop_again = tw.chrome("chrome_network_capture_stop", json!({})).await;
    assert!(stop_again.is_error, "{}", stop_again.text);
}

#[tokio::test]
async fn a_network_request_goes_from_the_page_with_its_cookies() {
    let site = Site::start().await;
    let tw = chrome("chrome-request").await;
    open(&tw, &site.url("form.html")).await;
    js(&tw, "document.cookie = 'flavour=oat'; return 1").await;
    let answer = tw
        .chrome_ok(
            "chrome_network_request",
            json!({ "url": "/echo-request", "method": "PUT", "body": "hello", "headers": { "x-test": "sent" } }),
        )
        .await;
    assert_eq!(answer["response"]["status"], 200, "{answer}");
    let echoed = &answer["response"]["body"];
    assert_eq!(echoed["method"], "PUT", "the JSON body is parsed: {answer}");
    assert_eq!(echoed["body"], "hello");
    assert_eq!(echoed["x_test"], "sent");
    assert!(
        echoed["cookie"].as_str().unwrap().contains("flavour=oat"),
        "{answer}"
    );
    let image = tw
        .chrome_ok(
            "chrome_network_request",
            json!({ "url": site.url("pixel.png") }),
        )
        .await;
    assert!(
        image["response"]["body"]
            .as_str()
            .unwrap()
            .starts_with("[Binary data not displayed"),
        "{image}"
    );
    let failed = tw
        .chrome(
            "chrome_network_request",
            json!({ "url": "http://127.0.0.1:9/" }),
        )
        .await;
    assert!(failed.is_error);
    assert_eq!(failed.payload["success"], false, "{}", failed.text);
    let refused = tw
        .chrome(
            "chrome_network_request",
            json!({ "url": "file:///etc/passwd" }),
        )
        .await;
    assert!(refused.is_error);
}

#[tokio::test]
async fn javascript_console_and_injected_scripts() {
    let site = Site::start().await;
    let tw = chrome("chrome-script").await;
    open(&tw, &site.url("console.html")).await;
    assert_eq!(js(&tw, "return 6 * 7").await, "42");
    assert_eq!(
        js(&tw, "await null; return {a: [1, 2]}").await,
        "{\"a\":[1,2]}"
    );
    let cut = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return 'x'.repeat(1000)", "maxOutputBytes": 10 }),
        )
        .await;
    assert_eq!(cut["result"], "xxxxxxxxxx");
    assert_eq!(cut["truncated"], true);
    let thrown = tw
        .chrome(
            "chrome_javascript",
            json!({ "code": "throw new Error('boom')" }),
        )
        .await;
    assert!(thrown.is_error);
    assert!(thrown.text.contains("boom"), "{}", thrown.text);
    let slow = tw
        .chrome(
            "chrome_javascript",
            json!({ "code": "await new Promise(() => {})", "timeoutMs": 200 }),
        )
        .await;
    assert!(slow.is_error);
    assert_eq!(slow.payload["error"]["kind"], "timeout", "{}", slow.text);

    // What the page logged while loading, at once.
    let console = tw.chrome_ok("chrome_console", json!({})).await;
    let messages = console["messages"].to_string();
    assert!(messages.contains("page ready 42"), "{console}");
    assert!(messages.contains("bad thing happened"), "{console}");
    assert!(
        console["exceptions"].to_string().contains("late failure"),
        "{console}"
    );
    let errors = tw
        .chrome_ok(
            "chrome_console",
            json!({ "onlyErrors": true, "includeExceptions": false }),
        )
        .await;
    assert!(
        !errors["messages"].to_string().contains("page ready"),
        "{errors}"
    );
    let matching = tw
        .chrome_ok("chrome_console", json!({ "pattern": "/READY/i" }))
        .await;
    assert_eq!(matching["messageCount"], 1, "{matching}");
    // A buffer from now on.
    tw.chrome_ok("chrome_console", json!({ "mode": "buffer", "clear": true }))
        .await;
    tw.chrome_ok("chrome_click_element", json!({ "selector": "#log" }))
        .await;
    let buffered = tw
        .chrome_ok(
            "chrome_console",
            json!({ "mode": "buffer", "clearAfterRead": true }),
        )
        .await;
    assert!(
        buffered["messages"].to_string().contains("clicked 7"),
        "{buffered}"
    );
    let emptied = tw
        .chrome_ok("chrome_console", json!({ "buffer": true }))
        .await;
    assert_eq!(emptied["messageCount"], 0, "{emptied}");

    // A script left in the tab answers commands, in its own world and on later pages.
    let none = tw
        .chrome(
            "chrome_send_command_to_inject_script",
            json!({ "eventName": "ping" }),
        )
        .await;
    assert!(none.is_error);
    tw.chrome_ok(
        "chrome_inject_script",
        json!({ "type": "ISOLATED", "jsScript": "window.addEventListener('ping', e => e.detail.respond({ pong: e.detail.payload.n + 1, title: document.title }))" }),
    )
    .await;
    let answer = tw
        .chrome_ok(
            "chrome_send_command_to_inject_script",
            json!({ "eventName": "ping", "payload": "{\"n\": 41}" }),
        )
        .await;
    assert_eq!(answer, json!({ "pong": 42, "title": "Console" }));
    assert_eq!(
        js(&tw, "return String(typeof window.__pinged)").await,
        "undefined"
    );
    tw.chrome_ok("chrome_navigate", json!({ "url": "back" }))
        .await;
}

#[tokio::test]
async fn uploads_come_only_from_the_upload_roots() {
    let site = Site::start().await;
    let work = scratch("chrome-upload-files");
    let root = work.join("uploads");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("notes.txt"), b"tide tables").unwrap();
    let root_arg = root.display().to_string();
    let tw = Tabwire::on_link(
        "chrome-upload",
        &["--face", "chrome", "--upload-root", &root_arg],
    )
    .await;
    open(&tw, &site.url("upload.html")).await;
    let file = root.join("notes.txt").display().to_string();
    let uploaded = tw
        .chrome_ok(
            "chrome_upload_file",
            json!({ "selector": "input[type=file]", "filePath": file }),
        )
        .await;
    assert_eq!(uploaded["fileCount"], 1);
    let seen = js(&tw, "const f = document.querySelector('input[type=file]').files[0]; return f.name + ':' + await f.text()").await;
    assert_eq!(seen, "notes.txt:tide tables");
    let outside = tw
        .chrome(
            "chrome_upload_file",
            json!({ "selector": "input[type=file]", "filePath": "/etc/hostname" }),
        )
        .await;
    assert!(outside.is_error);
    let by_data = tw
        .chrome(
            "chrome_upload_file",
            json!({ "selector": "input[type=file]", "base64Data": "aGk=" }),
        )
        .await;
    assert!(by_data.is_error);
    assert!(by_data.text.contains("upload root"), "{}", by_data.text);
}

#[tokio::test]
async fn downloads_a_page_starts_are_waited_for_and_kept() {
    let site = Site::start().await;
    let tw = chrome("chrome-download").await;
    open(&tw, &site.url("downloads.html")).await;
    // The download begins before the wait does: it is found all the same.
    tw.chrome_ok("chrome_click_element", json!({ "selector": "#report" }))
        .await;
    let found = tw
        .chrome_ok(
            "chrome_handle_download",
            json!({ "filenameContains": "report" }),
        )
        .await;
    let download = &found["download"];
    assert_eq!(download["state"], "complete", "{found}");
    let path = std::path::PathBuf::from(download["filename"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), REPORT, "{found}");
    if !over_extension() {
        assert!(path.starts_with(&tw.output_dir), "{path:?}");
    }
    let nothing = tw
        .chrome("chrome_handle_download", json!({ "timeoutMs": 300 }))
        .await;
    assert!(nothing.is_error);
    assert!(nothing.text.contains("no download"), "{}", nothing.text);
}

#[tokio::test]
async fn history_and_bookmarks_through_the_extension() {
    let site = Site::start().await;
    let tw = chrome("chrome-data").await;
    open(&tw, &site.url("article.html")).await;
    let found = tw
        .chrome_ok(
            "chrome_history",
            json!({ "text": "article", "startTime": "1 hour ago" }),
        )
        .await;
    assert!(
        found["items"].to_string().contains("article.html"),
        "{found}"
    );
    let later = tw
        .chrome_ok(
            "chrome_history",
            json!({ "text": "article", "startTime": "3 days ago", "endTime": "yesterday" }),
        )
        .await;
    assert_eq!(later["totalCount"], 0, "{later}");
    let bad = tw
        .chrome("chrome_history", json!({ "startTime": "soon" }))
        .await;
    assert!(bad.is_error);
    assert!(bad.text.contains("startTime"), "{}", bad.text);

    let added = tw
        .chrome_ok(
            "chrome_bookmark_add",
            json!({ "parentId": "Work/Resources", "createFolder": true }),
        )
        .await;
    assert_eq!(
        added["bookmark"]["url"],
        site.url("article.html").as_str(),
        "{added}"
    );
    assert!(
        added["bookmark"]["folderPath"]
            .as_str()
            .unwrap()
            .ends_with("Work > Resources"),
        "{added}"
    );
    let no_folder = tw
        .chrome(
            "chrome_bookmark_add",
            json!({ "url": site.url("form.html"), "parentId": "Nope/Missing" }),
        )
        .await;
    assert!(no_folder.is_error);
    assert!(
        no_folder.text.contains("createFolder"),
        "{}",
        no_folder.text
    );
    let searched = tw
        .chrome_ok(
            "chrome_bookmark_search",
            json!({ "query": "tide", "folderPath": "Work/Resources" }),
        )
        .await;
    assert_eq!(searched["totalResults"], 1, "{searched}");
    let deleted = tw
        .chrome_ok(
            "chrome_bookmark_delete",
            json!({ "url": site.url("article.html") }),
        )
        .await;
    let backup = deleted["backups"][0].as_str().unwrap();
    assert!(
        std::fs::read_to_string(backup)
            .unwrap()
            .contains("article.html")
    );
    let searched = tw
        .chrome_ok("chrome_bookmark_search", json!({ "query": "tide" }))
        .await;
    assert_eq!(searched["totalResults"], 0, "{searched}");
}

#[tokio::test]
async fn two_agents_on_one_browser_keep_to_their_own_tabs() {
    let site = Site::start().await;
    let server = crate::support::HttpServer::start("chrome-agents", &["--face", "chrome"]).await;
    let (a, b) = (server.client().await, server.client().await);
    use crate::support::chrome_call;
    chrome_call(
        &a,
        "chrome_navigate",
        json!({ "url": site.url("form.html") }),
    )
    .await;
    chrome_call(
        &b,
        "chrome_navigate",
        json!({ "url": site.url("fold.html") }),
    )
    .await;
    let code = json!({ "code": "return document.title" });
    let title_a = chrome_call(&a, "chrome_javascript", code.clone()).await;
    let title_b = chrome_call(&b, "chrome_javascript", code).await;
    assert_eq!(title_a.payload["result"], "Form", "{}", title_a.text);
    assert_eq!(
        title_b.payload["result"], "Below the fold",
        "{}",
        title_b.text
    );
}

#[tokio::test]
async fn both_faces_serve_at_once_on_one_engine() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("chrome-both", &["--face", "btap,chrome"]).await;
    let tools = tw.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"scan_page") && names.contains(&"chrome_read_page"),
        "{names:?}"
    );
    let listed = |face: &mcp::Face| face.tools.iter().filter(|t| t.listed).count();
    let unique: std::collections::BTreeSet<&&str> = names.iter().collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "no name is served twice: {names:?}"
    );
    assert_eq!(
        names.len(),
        listed(&mcp::faces::btap::FACE) + listed(&mcp::faces::chrome::FACE),
        "{names:?}"
    );
    // One session, one current tab, whichever face names it.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let read = tw.chrome_ok("chrome_read_page", json!({})).await;
    assert_eq!(read["title"], "Form", "{read}");

    // The client configuration carries the face.
    let printed = tokio::process::Command::new(crate::support::BINARY)
        .args(["--face", "chrome", "print-config", "codex"])
        .output()
        .await
        .unwrap();
    let printed = String::from_utf8_lossy(&printed.stdout);
    assert!(
        printed.contains("args = [\"--face\",\"chrome\"]"),
        "{printed}"
    );
    // The face named after the command too, and where the configuration goes said apart.
    let printed = tokio::process::Command::new(crate::support::BINARY)
        .args(["print-config", "cursor", "--face", "btap,chrome"])
        .output()
        .await
        .unwrap();
    assert!(printed.status.success());
    let config: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(
        config["mcpServers"]["tabwire"]["args"],
        json!(["--face", "btap,chrome"])
    );
    assert!(String::from_utf8_lossy(&printed.stderr).contains(".cursor/mcp.json"));
    let bad = tokio::process::Command::new(crate::support::BINARY)
        .args(["--face", "nope", "print-config", "codex"])
        .output()
        .await
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown face 'nope'"));
}

/// A plausible value for a required parameter, so a call fails only on what a test breaks.
fn plausible(name: &str, schema: &Value, site: &Site, tab: u64) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match name {
        "url" => json!(site.url("form.html")),
        "tabId" => json!(tab),
        "value" | "query" | "eventName" | "code" | "jsScript" => json!("1"),
        "keys" => json!("Enter"),
        "selector" => json!("#name"),
        _ => json!("1"),
    }
}

/// A value of the wrong type for a schema.
fn wrong_type(schema: &Value) -> Option<Value> {
    let kind = match &schema["type"] {
        Value::String(kind) => kind.clone(),
        Value::Array(kinds) if kinds.len() == 1 => kinds[0].as_str()?.to_owned(),
        _ => return None,
    };
    Some(match kind.as_str() {
        "string" => json!(12345),
        "integer" | "number" => json!("not a number"),
        "boolean" => json!("yes"),
        "array" => json!("not a list"),
        "object" => json!(7),
        _ => return None,
    })
}

#[tokio::test]
async fn every_tool_names_the_argument_it_refuses_and_the_server_serves_on() {
    let site = Site::start().await;
    let tw = chrome("chrome-bad-input").await;
    let tab = open(&tw, &site.url("form.html")).await;
    let tools = tw.client.list_all_tools().await.unwrap();
    let mut checked = 0;
    for tool in &tools {
        let properties = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<String> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        // Each required argument missing: refused, and named.
        for missing in &required {
            let mut args = serde_json::Map::new();
            for other in required.iter().filter(|r| *r != missing) {
                args.insert(
                    other.clone(),
                    plausible(other, &properties[other], &site, tab),
                );
            }
            let reply = tw.chrome(&tool.name, Value::Object(args)).await;
            assert!(
                reply.is_error,
                "{} without {missing} was not refused: {}",
                tool.name, reply.text
            );
            assert!(
                reply.text.contains(missing.as_str()),
                "{} without {missing}: {}",
                tool.name,
                reply.text
            );
            checked += 1;
        }
        // Each argument of the wrong type: refused, and named.
        for (name, schema) in &properties {
            let Some(bad) = wrong_type(schema) else {
                continue;
            };
            let mut args = serde_json::Map::new();
            for r in &required {
                args.insert(r.clone(), plausible(r, &properties[r], &site, tab));
            }
            args.insert(name.clone(), bad.clone());
            let reply = tw.chrome(&tool.name, Value::Object(args)).await;
            assert!(
                reply.is_error,
                "{} with {name}: {bad} was not refused: {}",
                tool.name, reply.text
            );
            assert!(
                reply.text.contains(name.as_str()),
                "{} with {name}: {bad}: {}",
                tool.name,
                reply.text
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} cases");
    // Unknown tab ids are refused the same way, and the server serves on.
    for tool in ["chrome_read_page", "chrome_screenshot", "chrome_javascript"] {
        let reply = tw
            .chrome(tool, json!({ "tabId": 987_654, "code": "1" }))
            .await;
        assert!(reply.is_error, "{tool}: {}", reply.text);
        assert!(reply.text.contains("987654"), "{tool}: {}", reply.text);
    }
    assert_eq!(js(&tw, "return document.title").await, "Form");
}

/// The window a tab is listed in.
async fn window_of(tw: &Tabwire, tab: u64) -> u64 {
    let listed = tw.chrome_ok("get_windows_and_tabs", json!({})).await;
    listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            w["tabs"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["tabId"] == tab)
        })
        .and_then(|w| w["windowId"].as_u64())
        .unwrap_or_else(|| panic!("tab {tab} is in no window: {listed}"))
}

#[tokio::test]
async fn a_moved_tab_keeps_its_page_in_its_new_window() {
    let site = Site::start().await;
    let tw = chrome("chrome-move").await;
    let a = open(&tw, &site.url("form.html")).await;
    let b = open(&tw, &site.url("fold.html")).await;
    let home = window_of(&tw, b).await;
    tw.chrome_ok(
        "chrome_javascript",
        json!({ "code": "window.marker = 42; return 1", "tabId": a }),
    )
    .await;

    let moved = tw
        .chrome_ok("chrome_move_tab", json!({ "tabId": a, "newWindow": true }))
        .await;
    let away = moved["windowId"].as_u64().expect("windowId");
    assert_eq!(window_of(&tw, a).await, away, "{moved}");
    assert_ne!(away, home);
    assert_eq!(window_of(&tw, b).await, home);
    // Not reloaded: what the page held is still there.
    let marker = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return window.marker", "tabId": a }),
        )
        .await;
    assert_eq!(marker["result"], "42", "{marker}");

    let back = tw
        .chrome_ok(
            "chrome_move_tab",
            json!({ "tabId": a, "windowId": home, "index": 0 }),
        )
        .await;
    assert_eq!(back["windowId"].as_u64(), Some(home));
    assert_eq!(back["index"], 0);
    assert_eq!(window_of(&tw, a).await, home);

    for args in [
        json!({ "tabId": a }),
        json!({ "tabId": a, "windowId": home, "newWindow": true }),
    ] {
        let refused = tw.chrome("chrome_move_tab", args.clone()).await;
        assert!(refused.is_error, "{args}: {}", refused.text);
        assert!(
            refused.text.contains("windowId") || refused.text.contains("newWindow"),
            "{}",
            refused.text
        );
    }
    let unknown = tw
        .chrome(
            "chrome_move_tab",
            json!({ "tabId": 424_242, "newWindow": true }),
        )
        .await;
    assert!(unknown.is_error, "{}", unknown.text);
}

/// A ref given where a selector string goes is that ref, in either form (`ref_12` as the
/// exact read writes it, `e12` as a lean one does); `chrome_keyboard`, which declares no
/// ref, takes one beside its selector; a stale ref is named as it was given.
#[tokio::test]
async fn a_ref_in_the_selector_acts_on_its_element_in_either_form() {
    let site = Site::start().await;
    let tw = chrome("chrome-ref-selector").await;
    let tab = open(&tw, &site.url("form.html")).await;
    let text = outline(&tw, json!({})).await;
    let lean_form = |r: &str| r.replacen("ref_", "e", 1);
    let name = ref_of(&text, "textbox \"Full name\"");
    let terms = lean_form(&ref_of(&text, "checkbox \"I agree\""));
    let notes = ref_of(&text, "textbox \"Notes\"");
    let submit = ref_of(&text, "button \"Create account\"");

    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "selector": name, "value": "Ada" }),
    )
    .await;
    tw.chrome_ok("chrome_click_element", json!({ "selector": terms }))
        .await;
    tw.chrome_ok(
        "chrome_keyboard",
        json!({ "ref": notes, "keys": "Ctrl+A,Backspace,keyed" }),
    )
    .await;
    tw.chrome_ok("chrome_click_element", json!({ "selector": submit }))
        .await;
    let submitted = js(&tw, "return document.getElementById('result').textContent").await;
    let submitted: Value = serde_json::from_str(&submitted).unwrap();
    assert_eq!(submitted["name"], "Ada", "{submitted}");
    assert_eq!(submitted["terms"], "on", "{submitted}");
    assert_eq!(submitted["notes"], "keyed", "{submitted}");

    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("input.html"), "tabId": tab }),
    )
    .await;
    let stale = tw
        .chrome("chrome_click_element", json!({ "selector": terms }))
        .await;
    assert!(stale.is_error, "{}", stale.text);
    assert!(stale.text.contains(&format!("{terms} ")), "{}", stale.text);
    assert!(!stale.text.contains("ref_"), "{}", stale.text);
}
