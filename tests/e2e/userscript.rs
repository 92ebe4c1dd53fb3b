//! `chrome_userscript`: a script kept for matching pages runs on every load, only there,
//! and stops once removed.

use serde_json::json;

use crate::support::{Site, Tabwire};

async fn title(tw: &Tabwire) -> String {
    tw.chrome_ok(
        "chrome_javascript",
        json!({ "code": "return document.title" }),
    )
    .await["result"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_userscript_runs_on_matching_loads_until_removed() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("userscript", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let created = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": {
                "name": "retitle", "matches": ["*/form.html*"],
                "script": "document.title = 'retitled by a userscript';",
            } }),
        )
        .await;
    let id = created["id"].as_str().expect("id").to_owned();
    // One for another page is kept, not run here.
    let elsewhere = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": {
                "matches": ["*/fold.html*"], "script": "document.title = 'not here';",
            } }),
        )
        .await;
    assert_eq!(elsewhere["status"], "queued", "{elsewhere}");
    assert_eq!(title(&tw).await, "retitled by a userscript");
    tw.chrome_ok(
        "chrome_userscript",
        json!({ "action": "remove", "args": { "id": elsewhere["id"] } }),
    )
    .await;
    let main = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": {
                "world": "MAIN", "runAt": "document_start", "script": "window.fromUserscript = 42;",
            } }),
        )
        .await;
    let listed = tw
        .chrome_ok("chrome_userscript", json!({ "action": "list" }))
        .await;
    assert_eq!(listed["ok"], true, "{listed}");
    assert_eq!(listed["items"].as_array().unwrap().len(), 2, "{listed}");
    // Created without patterns, a script runs on the current site, as the original's.
    let got = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "get", "args": { "id": main["id"] } }),
        )
        .await;
    assert_eq!(
        got["record"]["matches"][0],
        format!("http://127.0.0.1:{}/*", site.port),
        "{got}"
    );

    // It ran at once in the current tab (a matching page), as the original applies it,
    // runs again on each load of a matching page, and not elsewhere.
    assert_eq!(created["status"], "applied", "{created}");
    assert_eq!(title(&tw).await, "retitled by a userscript");
    tw.chrome_ok(
        "chrome_javascript",
        json!({ "code": "document.title = 'Form'; return 1" }),
    )
    .await;
    tw.chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    assert_eq!(title(&tw).await, "retitled by a userscript");
    let seen = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return window.fromUserscript" }),
        )
        .await;
    assert_eq!(
        seen["result"], "42",
        "a MAIN-world script shares the page's globals"
    );
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(title(&tw).await, "Below the fold");

    // Disabled, then removed: the page loads as it is.
    tw.chrome_ok(
        "chrome_userscript",
        json!({ "action": "disable", "args": { "id": id } }),
    )
    .await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    assert_eq!(title(&tw).await, "Form");
    tw.chrome_ok(
        "chrome_userscript",
        json!({ "action": "enable", "args": { "id": id } }),
    )
    .await;
    tw.chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    assert_eq!(title(&tw).await, "retitled by a userscript");
    // Updated: the next load runs the new source; what was not named stays.
    let updated = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "update", "args": {
                "id": id, "script": "document.title = 'retitled again';",
            } }),
        )
        .await;
    assert_eq!(updated, json!({ "ok": true }));
    let got = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "get", "args": { "id": id } }),
        )
        .await;
    assert_eq!(got["record"]["name"], "retitle", "{got}");
    assert_eq!(got["record"]["matches"], json!(["*/form.html*"]));
    tw.chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    assert_eq!(title(&tw).await, "retitled again");
    let exported = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "export", "args": { "id": id } }),
        )
        .await;
    assert_eq!(
        exported["data"][&id]["script"], "document.title = 'retitled again';",
        "{exported}"
    );
    for id in [id.as_str(), main["id"].as_str().unwrap()] {
        tw.chrome_ok(
            "chrome_userscript",
            json!({ "action": "remove", "args": { "id": id } }),
        )
        .await;
    }
    tw.chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    assert_eq!(title(&tw).await, "Form");
    let listed = tw
        .chrome_ok("chrome_userscript", json!({ "action": "list" }))
        .await;
    assert_eq!(listed["items"], json!([]));

    for (args, names) in [
        (json!({ "action": "create", "args": {} }), "args.script"),
        (
            json!({ "action": "remove", "args": { "id": "nope" } }),
            "nope",
        ),
        (
            json!({ "action": "update", "args": { "id": "x" } }),
            "args.id",
        ),
        (
            json!({ "action": "send_command", "args": { "id": "x" } }),
            "'x' names no userscript",
        ),
    ] {
        let refused = tw.chrome("chrome_userscript", args.clone()).await;
        assert!(
            refused.is_error && refused.text.contains(names),
            "{args}: {}",
            refused.text
        );
    }
}

/// A script's own `==UserScript==` header names it and says where it runs; a command
/// reaches the handler it defines, in its world.
#[tokio::test]
async fn a_header_is_read_and_commands_reach_the_scripts_handler() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("userscript-command", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let headed = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": { "script": "// ==UserScript==\n// @name        Fold marker\n// @match       */fold.html*\n// @run-at      document-end\n// ==/UserScript==\ndocument.title = 'marked by its header';" } }),
        )
        .await;
    let record = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "get", "args": { "id": headed["id"] } }),
        )
        .await["record"]
        .clone();
    assert_eq!(record["name"], "Fold marker", "{record}");
    assert_eq!(record["matches"], json!(["*/fold.html*"]));
    assert_eq!(record["runAt"], "document_end");

    let isolated = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": { "matches": ["*/form.html*"], "script":
                "globalThis.__userscript_onCommand__ = async (action, payload, id) => ({ action, id, doubled: payload.n * 2, title: document.title, pageGlobal: typeof window.pageOnly });" } }),
        )
        .await;
    let main = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": { "matches": ["*/form.html*"], "world": "MAIN", "script":
                "window.pageOnly = 'seen'; window.__userscript_onCommand = (action, payload) => 'main saw ' + payload;" } }),
        )
        .await;
    let silent = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": { "matches": ["*/fold.html*"], "script": "void 0;" } }),
        )
        .await;
    tw.chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    tw.chrome_ok("chrome_javascript", json!({ "code": "return 1" }))
        .await;
    let answered = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "send_command", "args": { "id": isolated["id"], "payload": { "n": 21 } } }),
        )
        .await;
    let data = &answered["result"]["data"];
    assert_eq!(answered["ok"], true, "{answered}");
    assert_eq!(data["doubled"], 42, "{answered}");
    assert_eq!(data["action"], "userscript:command");
    assert_eq!(data["id"], isolated["id"]);
    assert_eq!(data["title"], "Form", "an isolated script sees the DOM");
    assert_eq!(
        data["pageGlobal"], "undefined",
        "but not the page's globals"
    );
    let answered = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "send_command", "args": { "id": main["id"], "payload": "hello" } }),
        )
        .await;
    assert_eq!(answered["result"]["data"], "main saw hello", "{answered}");
    // Scripts of one world share its globals, as the original's do: on a page where no
    // script of that world defines a handler, nothing answers, and the reply says so.
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(title(&tw).await, "marked by its header");
    let unanswered = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "send_command", "args": { "id": silent["id"] } }),
        )
        .await;
    assert_eq!(unanswered["result"], json!({}), "{unanswered}");
    assert!(
        unanswered["note"]
            .as_str()
            .unwrap()
            .contains("no command handler")
    );
    // A handler that throws is an error that says what it threw.
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let thrown = tw
        .chrome(
            "chrome_userscript",
            json!({ "action": "send_command", "args": { "id": isolated["id"] } }),
        )
        .await;
    assert!(
        thrown.is_error && thrown.text.contains("TypeError"),
        "{}",
        thrown.text
    );
}

/// A stylesheet pasted as a userscript goes in as a stylesheet (the original's
/// `insertCSS`), at once and on every load of a matching page.
#[tokio::test]
async fn a_pasted_stylesheet_styles_matching_pages() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("userscript-css", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let background = || async {
        tw.chrome_ok(
            "chrome_javascript",
            json!({ "code": "return getComputedStyle(document.body).backgroundColor" }),
        )
        .await["result"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let created = tw
        .chrome_ok(
            "chrome_userscript",
            json!({ "action": "create", "args": { "matches": ["*/form.html*"],
                "script": "/* a dark form */\nbody { background-color: rgb(1, 2, 3) !important; }" } }),
        )
        .await;
    assert_eq!(created["status"], "applied", "{created}");
    assert_eq!(created["strategy"]["kind"], "insertCSS", "{created}");
    assert_eq!(background().await, "rgb(1, 2, 3)");
    tw.chrome_ok("chrome_navigate", json!({ "refresh": true }))
        .await;
    assert_eq!(background().await, "rgb(1, 2, 3)");
    let listed = tw
        .chrome_ok("chrome_userscript", json!({ "action": "list" }))
        .await;
    assert_eq!(listed["items"][0]["sourceType"], "CSS", "{listed}");
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("fold.html") }))
        .await;
    assert_ne!(background().await, "rgb(1, 2, 3)", "only on matching pages");
}
