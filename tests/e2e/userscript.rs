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
    assert_eq!(listed["total"], 2, "{listed}");

    // It runs on the next load of a matching page, not before, and not elsewhere.
    assert_eq!(title(&tw).await, "Form");
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
    assert_eq!(updated["script"]["name"], "retitle", "{updated}");
    assert_eq!(updated["script"]["matches"], json!(["*/form.html*"]));
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
        exported["scripts"][0]["script"], "document.title = 'retitled again';",
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
    assert_eq!(listed["total"], 0);

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
            "action",
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
