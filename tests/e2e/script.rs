use serde_json::json;

use crate::support::{Site, Tabwire, over_extension, sha256_hex};

#[tokio::test]
async fn values_convert_and_errors_are_reported_once() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("js-values").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let cases = [
        ("1 + 1", json!(2)),
        ("return document.title", json!("Form")),
        (
            "(async () => { await null; return [1, 'a', null]; })()",
            json!([1, "a", null]),
        ),
        ("await Promise.resolve(7)", json!(7)),
        ("undefined", json!(null)),
        ("NaN", json!(null)),
        ("10n ** 20n", json!("100000000000000000000n")),
        ("({ a: { b: 1 } })", json!({ "a": { "b": 1 } })),
    ];
    for (script, expected) in cases {
        let data = tw.ok("execute_js", json!({ "script": script })).await;
        assert_eq!(data["js_return"], expected, "{script}");
        assert_eq!(data["status"], "success");
    }
    let cycle = tw
        .ok(
            "execute_js",
            json!({ "script": "const o = {}; o.self = o; o" }),
        )
        .await;
    assert!(
        cycle["js_return"].to_string().contains("Circular"),
        "{cycle}"
    );
    let node = tw
        .ok(
            "execute_js",
            json!({ "script": "document.querySelector('button')" }),
        )
        .await;
    assert!(
        node["js_return"].as_str().unwrap().contains("button"),
        "{node}"
    );

    // A throwing script reports its error and ran exactly once.
    let thrown = tw
        .call(
            "execute_js",
            json!({ "script": "window.runs = (window.runs || 0) + 1; throw new Error('boom')" }),
        )
        .await;
    assert_eq!(thrown.error_code(), "page_execution_failed");
    assert!(thrown.message().contains("boom"));
    let runs = tw
        .ok("execute_js", json!({ "script": "window.runs" }))
        .await;
    assert_eq!(runs["js_return"], 1);
    // A SyntaxError thrown while running (not a script that failed to compile) is not a
    // reason to try the script again as a function body.
    let parsed = tw
        .call(
            "execute_js",
            json!({ "script": "window.parses = (window.parses || 0) + 1; JSON.parse('not json')" }),
        )
        .await;
    assert_eq!(
        parsed.error_code(),
        "page_execution_failed",
        "{}",
        parsed.envelope
    );
    let parses = tw
        .ok("execute_js", json!({ "script": "window.parses" }))
        .await;
    assert_eq!(parses["js_return"], 1);
    // A script that compiles in neither form says why.
    let broken = tw
        .call("execute_js", json!({ "script": "let a = ;" }))
        .await;
    assert_eq!(broken.error_code(), "page_execution_failed");
    assert!(
        broken.message().contains("SyntaxError"),
        "{}",
        broken.envelope
    );
}

#[tokio::test]
async fn alert_confirm_and_prompt_follow_the_dialog_policy() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("dialogs").await;
    tw.ok("open_url", json!({ "url": site.url("dialogs.html") }))
        .await;

    let dismissed = tw
        .ok("execute_js", json!({ "script": "confirm('Delete it?')" }))
        .await;
    assert_eq!(dismissed["js_return"], false);
    assert_eq!(dismissed["dialogs"][0]["type"], "confirm");
    assert_eq!(dismissed["dialogs"][0]["message"], "Delete it?");
    let accepted = tw
        .ok(
            "execute_js",
            json!({ "script": "confirm('Keep it?')", "dialog_policy": "accept" }),
        )
        .await;
    assert_eq!(accepted["js_return"], true);

    // manual: the script pauses with the prompt open until handle_dialog answers it.
    let paused = tw
        .call(
            "execute_js",
            json!({ "script": "prompt('Your name?', 'anon')", "dialog_policy": "manual" }),
        )
        .await
        .reported();
    assert_eq!(paused["status"], "blocked_by_dialog", "{paused}");
    let operation = paused["operation_id"].as_str().unwrap().to_owned();
    // manual only reports: the dialog is open and the tab blocked, a reported failure.
    let seen = tw
        .call("handle_dialog", json!({ "action": "manual" }))
        .await
        .reported();
    assert_eq!(seen["status"], "blocked_by_dialog", "{seen}");
    assert_eq!(seen["dialog"]["message"], "Your name?");
    assert_eq!(seen["dialog"]["defaultPrompt"], "anon");
    tw.ok(
        "handle_dialog",
        json!({ "action": "accept", "prompt_text": "Grace" }),
    )
    .await;
    let result = tw
        .ok(
            "get_execute_js_result",
            json!({ "operation_id": operation, "timeout": 30 }),
        )
        .await;
    assert_eq!(result["js_return"], "Grace");
    let none = tw.ok("handle_dialog", json!({ "action": "manual" })).await;
    assert_eq!(none["status"], "no_dialog");

    // A click that opens an alert leaves it open for the agent and says so; until it is
    // answered, a call that needs the page says what blocks it at once.
    let clicked = tw.ok("page_click", json!({ "selector": "#alert" })).await;
    assert_eq!(clicked["dialog_open"], true, "{clicked}");
    assert_eq!(clicked["dialog"]["type"], "alert", "{clicked}");
    let blocked = tw.call("scan_page", json!({})).await;
    assert_eq!(
        blocked.error_code(),
        "blocked_by_dialog",
        "{}",
        blocked.envelope
    );
    tw.ok("handle_dialog", json!({ "action": "dismiss" })).await;
    tw.ok("wait_for", json!({ "text": "alert closed" })).await;
}

#[tokio::test]
async fn a_script_that_navigates_reports_where_it_landed() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("js-navigate").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let target = site.url("echo?via=script");
    let data = tw
        .ok(
            "execute_js",
            json!({ "script": format!("location.href = {}", json!(target)) }),
        )
        .await;
    assert_eq!(data["status"], "navigated", "{data}");
    assert_eq!(data["landed_url"], target);
}

#[tokio::test]
async fn a_result_over_24_kib_goes_to_a_file_with_its_size_and_hash() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("js-large").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let data = tw
        .ok("execute_js", json!({ "script": "'x'.repeat(30000)" }))
        .await;
    assert_eq!(data["js_return"], json!(null));
    let path = data["result_file"].as_str().expect("result_file");
    let bytes = std::fs::read(path).expect("result file exists");
    assert!(
        path.starts_with(tw.output_dir.canonicalize().unwrap().to_str().unwrap()),
        "{path} outside the output dir"
    );
    assert_eq!(data["result_bytes"], bytes.len());
    assert_eq!(data["result_sha256"], sha256_hex(&bytes));
    let value: String = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(value.len(), 30000);
}

#[tokio::test]
async fn a_timed_out_script_is_collected_later_exactly_once() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("js-receipt").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    // The script waits on a request the test answers when it chooses, so it outlives
    // the call's 0.3 s deadline for certain, however slow the machine.
    let script = format!(
        "window.runs = (window.runs || 0) + 1; await fetch('{}'); return 'finished'",
        site.url("hold/js-receipt")
    );
    let late = tw
        .call("execute_js", json!({ "script": script, "timeout": 0.3 }))
        .await
        .reported();
    assert_eq!(late["status"], "timeout", "{late}");
    assert_eq!(late["poll_with"], "get_execute_js_result");
    assert_eq!(late["reservation_held"], true);
    assert_eq!(late["retry_safe"], false);
    assert_eq!(late["may_have_executed"], true);
    let operation = late["operation_id"].as_str().unwrap().to_owned();
    site.arrived("js-receipt").await;

    // While it runs the tab is held: another call is refused at once, not queued, and
    // says which operation holds it.
    let busy = tw.call("scan_page", json!({})).await;
    assert_eq!(busy.error_code(), "target_busy", "{:?}", busy.envelope);
    assert_eq!(busy.envelope["retryable"], true);
    assert_eq!(
        busy.envelope["diagnostics"]["held_by"],
        operation.as_str(),
        "{:?}",
        busy.envelope
    );

    site.release("js-receipt");
    let done = tw
        .ok(
            "get_execute_js_result",
            json!({ "operation_id": operation, "timeout": 30 }),
        )
        .await;
    assert_eq!(done["js_return"], "finished");
    assert_eq!(done["replayed"], false);
    let again = tw
        .ok(
            "get_execute_js_result",
            json!({ "operation_id": operation }),
        )
        .await;
    assert_eq!(again["js_return"], "finished");
    let runs = tw
        .ok("execute_js", json!({ "script": "window.runs" }))
        .await;
    assert_eq!(
        runs["js_return"], 1,
        "the script must have run exactly once"
    );

    let unknown = tw
        .call(
            "get_execute_js_result",
            json!({ "operation_id": "op-nope" }),
        )
        .await;
    assert_eq!(
        unknown.error_code(),
        "operation_not_found",
        "{}",
        unknown.envelope
    );
    assert_eq!(unknown.envelope["operation_id"], "op-nope");
    assert_eq!(unknown.envelope["retry_safe"], false);
}

#[tokio::test]
async fn a_navigation_supersedes_a_script_nobody_waits_for() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("js-supersede").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    // Abandoned scripts in turn: one awaiting a request that is never answered, and one
    // spinning synchronously (only terminating the page's script stops that one; Chrome
    // does not let extensions do that, so over the extension link it is not tried).
    let mut scripts = vec![format!(
        "await fetch('{}'); return 'finished'",
        site.url("hold/never")
    )];
    if !over_extension() {
        scripts.push("while (true) {}".to_owned());
    }
    for script in scripts {
        let late = tw
            .call("execute_js", json!({ "script": script, "timeout": 0.3 }))
            .await
            .reported();
        assert_eq!(late["status"], "timeout", "{late}");
        let operation = late["operation_id"].as_str().unwrap().to_owned();

        // The agent moves on: the navigation is not refused as busy; it stops the script.
        let moved = tw
            .ok("open_url", json!({ "url": site.url("input.html") }))
            .await;
        assert_eq!(
            moved["superseded_operation_id"],
            operation.as_str(),
            "{moved}"
        );
        let title = tw
            .ok("execute_js", json!({ "script": "document.title" }))
            .await;
        assert_eq!(title["js_return"], "Input");

        // Its receipt says what happened, and that what it sent may have run.
        let receipt = tw
            .call(
                "get_execute_js_result",
                json!({ "operation_id": operation, "timeout": 30 }),
            )
            .await;
        assert_eq!(receipt.reason(), "superseded", "{:?}", receipt.envelope);
        assert_eq!(
            receipt.envelope["diagnostics"]["may_have_executed"], true,
            "{:?}",
            receipt.envelope
        );
    }
}

#[tokio::test]
async fn wait_false_returns_a_receipt_at_once() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("js-nowait").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let started = tw
        .ok(
            "execute_js",
            json!({ "script": "await new Promise(r => setTimeout(r, 300)); 6 * 7", "wait": false }),
        )
        .await;
    assert_eq!(started["status"], "in_progress");
    let done = tw
        .ok(
            "get_execute_js_result",
            json!({ "operation_id": started["operation_id"], "timeout": 30 }),
        )
        .await;
    assert_eq!(done["js_return"], 42);
}

#[tokio::test]
async fn a_leave_prompt_is_resolved_through_the_protocol() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("leave").await;
    tw.ok("open_url", json!({ "url": site.url("leave.html") }))
        .await;
    // With no prompt open, BrowserTap reports the accept the browser refused.
    let none = tw.call("resolve_leave_dialog", json!({})).await;
    assert_eq!(none.error_code(), "operation_failed", "{}", none.envelope);
    assert_eq!(none.reported()["status"], "no_dialog");
    // A real click gives the page the user activation a leave prompt needs.
    tw.ok("page_click", json!({ "selector": "#draft" })).await;
    let target = site.url("echo?left=1");
    let script = tw
        .ok("execute_js", json!({ "script": format!("location.href = {}", json!(target)), "dialog_policy": "manual", "wait": false }))
        .await;
    // handle_dialog waits (up to its timeout) for the prompt to open.
    let seen = tw
        .call("handle_dialog", json!({ "action": "manual", "timeout": 3 }))
        .await
        .reported();
    assert_eq!(seen["status"], "blocked_by_dialog", "{seen}");
    assert_eq!(seen["dialog"]["type"], "beforeunload", "{seen}");
    let resolved = tw.ok("resolve_leave_dialog", json!({})).await;
    assert_eq!(resolved["status"], "ok");
    assert_eq!(resolved["resolution"], "protocol");
    assert_eq!(resolved["physical_input"], false);
    // The script's receipt settles once the navigation it started has landed.
    let done = tw
        .ok(
            "get_execute_js_result",
            json!({ "operation_id": script["operation_id"], "timeout": 30 }),
        )
        .await;
    assert_eq!(done["status"], "navigated", "{done}");
    let landed = tw
        .ok(
            "wait_for_url",
            json!({ "url_pattern": "left=1", "timeout": 30 }),
        )
        .await;
    assert_eq!(landed["title"], "echo");
}
