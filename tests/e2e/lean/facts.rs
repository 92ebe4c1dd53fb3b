//! Lean and exact replies say the same facts: every tool of both faces is called the same
//! way on two servers, one writing exact replies and one lean, and whatever the exact reply
//! says that decides an agent's next call must be in the lean text too. Every tool once
//! with no arguments (its failure, or its plain answer), then inputs that set things off.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire, TextReply};

/// Tools left out of the no-argument pass: with no arguments it closes the tab the rest of
/// the pass works in (btap's `close_tabs` refuses an empty call, and is called).
const NOT_CALLED_BARE: &[&str] = &["chrome_close_tabs"];

#[tokio::test]
async fn lean_and_exact_say_the_same_facts_for_every_tool() {
    let site = Site::start().await;
    let flags = ["--face", "btap,chrome"];
    let exact = Tabwire::stdio_with("facts-exact", &flags).await;
    let lean =
        Tabwire::stdio_with("facts-lean", &[&flags[..], &["--replies", "lean"]].concat()).await;
    let tools = exact.client.list_all_tools().await.expect("tools/list");
    assert!(tools.len() > 60, "both faces' tools: {}", tools.len());

    let both = |tool: &str, args: Value| {
        let (exact, lean) = (&exact, &lean);
        let tool = tool.to_owned();
        async move {
            let said_exactly = exact.text(&tool, args.clone()).await;
            let said_leanly = lean.text(&tool, args.clone()).await;
            same_facts(&tool, &args, &said_exactly, &said_leanly)
        }
    };

    both("open_url", json!({ "url": site.url("form.html") })).await;
    let mut called = 0;
    for tool in &tools {
        if NOT_CALLED_BARE.contains(&tool.name.as_ref()) {
            continue;
        }
        both(&tool.name, bare_arguments(&tool.name)).await;
        called += 1;
    }
    assert!(called > 60, "{called} tools called");

    let mut told = Vec::new();
    // What inputs set off: a box's new state, an error the page threw, a landing, a tab
    // opened; a choice; a read of a page that is still rendering.
    for (tool, args) in [
        ("open_url", json!({ "url": site.url("effects.html") })),
        ("page_click", json!({ "selector": "#agree" })),
        ("chrome_click_element", json!({ "selector": "#agree" })),
        ("page_click", json!({ "selector": "#notify" })),
        ("page_click", json!({ "selector": "#broken" })),
        ("chrome_click_element", json!({ "selector": "#broken" })),
        ("page_click", json!({ "selector": "#popup" })),
        ("page_click", json!({ "selector": "#away" })),
        ("open_url", json!({ "url": site.url("effects.html") })),
        ("chrome_click_element", json!({ "selector": "#away" })),
        ("open_url", json!({ "url": site.url("selects.html") })),
        (
            "page_select",
            json!({ "selector": "#color", "options": "Green" }),
        ),
        (
            "chrome_fill_or_select",
            json!({ "selector": "#color", "value": "Blue" }),
        ),
        (
            "page_select",
            json!({ "selector": "#color", "options": "Mauve" }),
        ),
        ("page_type", json!({ "selector": "#color", "text": "x" })),
        ("open_url", json!({ "url": site.url("sliders.html") })),
        ("page_type", json!({ "selector": "#volume", "text": "99" })),
        (
            "chrome_javascript",
            json!({ "code": "return document.title + '!'" }),
        ),
        ("page_drag", json!({ "x1": 5, "y1": 5, "x2": 40, "y2": 5 })),
        ("open_url", json!({ "url": site.url("dialogs.html") })),
        ("execute_js", json!({ "script": "alert('Saved!'); 1" })),
        (
            "execute_js",
            json!({ "script": "confirm('Leave?')", "dialog_policy": "manual", "wait": false }),
        ),
        ("handle_dialog", json!({ "action": "accept" })),
        (
            "open_url",
            json!({ "url": format!("data:text/html,{}", BUSY_PAGE) }),
        ),
        ("scan_page", json!({})),
        ("chrome_read_page", json!({})),
        ("page_click", json!({ "selector": { "ref": "e999" } })),
        (
            "page_click",
            json!({ "selector": "#nothing-here", "timeout": 1 }),
        ),
    ] {
        let checked = both(tool, args.clone()).await;
        told.push((tool, format!("{checked:?}")));
    }
    // Each kind of fact was there to be checked, in both faces (the pages did what
    // they are for).
    for (tool, wanted) in [
        ("page_click", "now checked"),
        ("chrome_click_element", "now unchecked"),
        ("page_click", "now unchecked"),
        ("page_click", "ReferenceError: undefinedFunc"),
        ("chrome_click_element", "ReferenceError: undefinedFunc"),
        ("page_click", "from=popup"),
        ("page_click", "from=link"),
        ("chrome_click_element", "from=link"),
        ("page_select", "Green"),
        ("page_select", "Mauve"),
        ("page_type", "page_select"),
        ("execute_js", "Saved!"),
        ("handle_dialog", "Leave?"),
        ("scan_page", "hydrating"),
        ("page_click", "stale_ref"),
        ("page_type", "50"),
        ("chrome_javascript", "Sliders!"),
    ] {
        assert!(
            told.iter()
                .any(|(t, facts)| *t == tool && facts.contains(wanted)),
            "no exact reply of {tool} said {wanted}: {told:?}"
        );
    }
}

/// No arguments, but a short wait for tools that wait on something to happen.
fn bare_arguments(tool: &str) -> Value {
    match tool {
        "chrome_handle_download" => json!({ "timeoutMs": 500 }),
        _ => json!({}),
    }
}

/// A page whose content says it is still loading (`aria-busy`).
const BUSY_PAGE: &str =
    "<title>Busy</title><main aria-busy=%22true%22><p>Loading the report%E2%80%A6</p></main>";

/// Holds the lean reply to every fact of the exact one that decides the next call.
fn same_facts(tool: &str, args: &Value, exact: &TextReply, lean: &TextReply) -> Vec<Said> {
    let context = || format!("{tool} {args}\nexact: {}\nlean: {}", exact.text, lean.text);
    assert_eq!(exact.is_error, lean.is_error, "{}", context());
    assert_eq!(exact.images, lean.images, "{}", context());
    assert!(!lean.structured, "{}", context());
    let facts = telling(tool, exact);
    for fact in &facts {
        let found = match fact {
            Said::Text(text) => lean.text.contains(text.as_str()),
            Said::OneOf(texts) => texts.iter().any(|t| lean.text.contains(t.as_str())),
        };
        assert!(found, "lean leaves out {fact:?}\n{}", context());
    }
    facts
}

#[derive(Debug)]
enum Said {
    Text(String),
    OneOf(Vec<String>),
}

/// What an exact reply says that decides the next call, as text.
fn telling(tool: &str, exact: &TextReply) -> Vec<Said> {
    let mut said = Vec::new();
    let parsed: Option<Value> = serde_json::from_str(&exact.text).ok();
    let chrome = tool.starts_with("chrome_")
        || parsed
            .as_ref()
            .is_none_or(|v| v.get("result_contract").is_none());
    if chrome {
        if exact.is_error {
            // The original's failure is one line of text: all of it is said.
            match &parsed {
                Some(payload) => payload_facts(payload, &mut said),
                None => said.push(Said::Text(exact.text.clone())),
            }
        } else if let Some(payload) = &parsed {
            payload_facts(payload, &mut said);
        }
        return said;
    }
    let Some(envelope) = parsed else {
        return said;
    };
    if envelope["ok"] == true {
        payload_facts(&envelope["data"], &mut said);
        return said;
    }
    let code = envelope["error_code"].as_str().unwrap_or_default();
    let verdict = if envelope["retryable"] == true {
        "(retryable)"
    } else {
        "(not retryable)"
    };
    said.push(Said::Text(format!("error {code} {verdict}")));
    if let Some(message) = envelope["error"]["message"].as_str() {
        said.push(Said::Text(message.to_owned()));
    }
    let diagnostics = &envelope["diagnostics"];
    for key in ["param", "reason", "next_action", "stale_session_id"] {
        if let Some(value) = diagnostics[key].as_str() {
            said.push(Said::Text(value.to_owned()));
        }
    }
    if let Some(ignored) = diagnostics["ignored_arguments"].as_array() {
        for name in ignored.iter().filter_map(Value::as_str) {
            said.push(Said::Text(name.to_owned()));
        }
    }
    payload_facts(&envelope["legacy"], &mut said);
    said
}

/// The facts of a payload that decide the next call: where an input landed and what it
/// opened, what the page threw, a box's state, what is chosen, a dialog's text, whether
/// the page has rendered, and what to do next.
fn payload_facts(payload: &Value, said: &mut Vec<Said>) {
    // The chrome face's own keys for the same facts.
    let landing = payload
        .get("navigated")
        .or_else(|| payload.get("navigation"));
    let opened = payload.get("new_tabs").or_else(|| payload.get("newTabs"));
    let thrown = payload
        .get("page_errors")
        .or_else(|| payload.get("pageErrors"));
    let checked = payload
        .get("checked")
        .or_else(|| payload["elementInfo"].get("checked"));
    if let Some(landing) = landing.filter(|v| v.is_object()) {
        for key in ["url", "title"] {
            if let Some(text) = landing[key].as_str().filter(|t| !t.is_empty()) {
                said.push(Said::Text(text.to_owned()));
            }
        }
    }
    for tab in opened.and_then(Value::as_array).into_iter().flatten() {
        if let Some(url) = tab["url"].as_str() {
            said.push(Said::Text(url.to_owned()));
        }
    }
    for thrown in thrown.and_then(Value::as_array).into_iter().flatten() {
        let text = thrown
            .as_str()
            .map_or_else(|| thrown.to_string(), str::to_owned);
        // The first words suffice: a long stack may be cut.
        said.push(Said::Text(text.chars().take(40).collect()));
    }
    if let Some(checked) = checked.and_then(Value::as_bool) {
        let words = if checked {
            ["now checked", "checked: true"]
        } else {
            ["now unchecked", "checked: false"]
        };
        said.push(Said::OneOf(words.iter().map(|w| (*w).to_owned()).collect()));
    }
    for chosen in payload["selected"].as_array().into_iter().flatten() {
        if let Some(label) = chosen.as_str() {
            said.push(Said::Text(label.to_owned()));
        }
    }
    for dialog in payload["dialogs"].as_array().into_iter().flatten() {
        if let Some(message) = dialog["message"].as_str() {
            said.push(Said::Text(message.to_owned()));
        }
    }
    if let Some(message) = payload["dialog"]["message"].as_str() {
        said.push(Said::Text(message.to_owned()));
    }
    for read in [payload, &payload["observation"]] {
        if read["content_ready"] == false
            && let Some(state) = read["render_state"].as_str()
        {
            said.push(Said::Text(state.to_owned()));
        }
    }
    // A value set whole that the control changed (a slider stops at its range's end).
    if payload["clamped"] == true
        && let Some(value) = payload["value"].as_str()
    {
        said.push(Said::Text(value.to_owned()));
    }
    // What a script returned (the chrome face's `result` is the value, as text).
    if let Some(value) = payload["result"].as_str() {
        said.push(Said::Text(value.to_owned()));
    }
    for key in ["next_action", "recommended_tool"] {
        if let Some(text) = payload[key].as_str() {
            said.push(Said::Text(text.to_owned()));
        }
    }
}
