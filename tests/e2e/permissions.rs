//! Permission leases: applied, restored on expiry, on reset, and after a restart.

use serde_json::json;

use crate::support::{Site, Tabwire, call_on, poll_until, scratch};

fn state(permission: &str, expected: &str) -> serde_json::Value {
    json!({ "js": format!("navigator.permissions.query({{name: '{permission}'}}).then(s => s.state === '{expected}')"), "timeout": 30 })
}

#[tokio::test]
async fn a_lease_is_restored_when_it_expires_and_on_reset() {
    let site = Site::start().await;
    let tw = Tabwire::stdio_with("lease", &["--min-lease-seconds", "1"]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    tw.ok("wait_for", state("geolocation", "prompt")).await;

    let lease = tw
        .ok(
            "set_site_permission",
            json!({ "permission": "geolocation", "setting": "allow", "duration_seconds": 2 }),
        )
        .await;
    assert_eq!(lease["lease"]["prior"], "prompt");
    assert_eq!(lease["lease"]["prior_verified"], true);
    // BrowserTap's words: the content setting's name, the expiry in ms.
    assert_eq!(lease["status"], "ok");
    assert_eq!(lease["permission"], "location");
    assert_eq!(lease["origin"], site.url("").trim_end_matches('/'));
    assert_eq!(
        lease["expires_at"].as_u64().unwrap(),
        lease["lease"]["expires_at"].as_u64().unwrap() * 1000
    );
    tw.ok("wait_for", state("geolocation", "granted")).await;
    // Expiry restores the prior setting by itself.
    tw.ok("wait_for", state("geolocation", "prompt")).await;

    tw.ok(
        "set_site_permission",
        json!({ "permission": "notifications", "setting": "block" }),
    )
    .await;
    tw.ok("wait_for", state("notifications", "denied")).await;
    let reset = tw.ok("reset_site_permissions", json!({})).await;
    assert_eq!(reset["status"], "ok", "{reset}");
    let restored = reset["restored_leases"].as_array().unwrap();
    assert!(
        restored.iter().any(|l| l["permission"] == "notifications"),
        "{reset}"
    );
    assert_eq!(reset["restored"], restored.len(), "{reset}");
    assert_eq!(reset["remaining"], 0, "{reset}");
    assert_eq!(reset["failures"], json!([]));
    tw.ok("wait_for", state("notifications", "prompt")).await;

    let clipboard = tw
        .call(
            "set_site_permission",
            json!({ "permission": "clipboard", "setting": "allow" }),
        )
        .await;
    assert_eq!(clipboard.error_code(), "unsupported");
    let short = Tabwire::managed("lease-short").await;
    short
        .ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let too_short = short
        .call(
            "set_site_permission",
            json!({ "permission": "camera", "setting": "allow", "duration_seconds": 5 }),
        )
        .await;
    assert_eq!(too_short.error_code(), "invalid_request");
}

#[tokio::test]
async fn a_lease_left_by_a_stopped_server_is_restored_on_the_next_start() {
    let site = Site::start().await;
    let work = scratch("lease-restart");
    let profile = work.join("profile").display().to_string();
    let args = ["--user-data-dir", &profile, "--broker-grace", "0"];
    let state_home = work.join("state");
    // SAFETY: set before any tabwire starts in this test process, and only this test
    // reads it (each nextest test is its own process).
    unsafe { std::env::set_var("XDG_STATE_HOME", &state_home) };

    let first = Tabwire::stdio_in(work.clone(), &args).await;
    first
        .ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    first
        .ok(
            "set_site_permission",
            json!({ "permission": "geolocation", "setting": "allow", "duration_seconds": 600 }),
        )
        .await;
    first.ok("wait_for", state("geolocation", "granted")).await;
    let browser = first.ok("get_setup_status", json!({})).await["browser_pid"]
        .as_u64()
        .unwrap() as u32;
    let Tabwire {
        client, mut child, ..
    } = first;
    drop(client);
    let _ = child.wait().await;
    assert!(crate::support::process_exits(browser).await);
    let lease_file = std::fs::read_dir(state_home.join("tabwire"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let leases = std::fs::read_to_string(&lease_file).unwrap();
    assert!(leases.contains("geolocation"), "{leases}");

    // The profile still grants it; the next start puts the prior setting back as soon as
    // the browser connects, whatever the first call is (this one reads no tab).
    let second = Tabwire::stdio_in(work.clone(), &args).await;
    second.ok("debugger_targets", json!({})).await;
    poll_until("the leftover lease to be restored", || async {
        !std::fs::read_to_string(&lease_file)
            .unwrap_or_default()
            .contains("geolocation")
    })
    .await;
    second
        .ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    second.ok("wait_for", state("geolocation", "prompt")).await;
}

#[tokio::test]
async fn two_leases_set_at_once_are_both_restored() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("two-leases").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let first = tw
        .ok(
            "set_site_permission",
            json!({ "permission": "geolocation", "setting": "allow" }),
        )
        .await;
    let second = tw
        .ok(
            "set_site_permission",
            json!({ "permission": "notifications", "setting": "block" }),
        )
        .await;
    assert_ne!(first["lease"]["id"], second["lease"]["id"]);
    tw.ok("wait_for", state("geolocation", "granted")).await;
    tw.ok("wait_for", state("notifications", "denied")).await;
    let reset = tw.ok("reset_site_permissions", json!({})).await;
    assert_eq!(reset["restored"], 2, "{reset}");
    tw.ok("wait_for", state("geolocation", "prompt")).await;
    tw.ok("wait_for", state("notifications", "prompt")).await;
}

/// Two agents lease the same setting at once: the lease keeps the setting the origin
/// had before either of them, so restoring it puts that back (not one agent's value).
#[tokio::test]
async fn leases_set_at_once_on_one_setting_keep_the_setting_it_had_before_both() {
    let site = Site::start().await;
    let server = crate::support::HttpServer::start("lease-race", &[]).await;
    let (a, b) = (server.client().await, server.client().await);
    for client in [&a, &b] {
        call_on(client, "open_url", json!({ "url": site.url("form.html") }))
            .await
            .ok();
    }
    call_on(&a, "wait_for", state("geolocation", "prompt"))
        .await
        .ok();
    for round in 0..5 {
        let (allow, block) = tokio::join!(
            call_on(
                &a,
                "set_site_permission",
                json!({ "permission": "geolocation", "setting": "allow" })
            ),
            call_on(
                &b,
                "set_site_permission",
                json!({ "permission": "geolocation", "setting": "block" })
            ),
        );
        let (allow, block) = (allow.ok(), block.ok());
        assert_eq!(allow["lease"]["prior"], "prompt", "round {round}: {allow}");
        assert_eq!(block["lease"]["prior"], "prompt", "round {round}: {block}");
        assert_eq!(
            allow["lease"]["id"], block["lease"]["id"],
            "one lease a setting"
        );
    }
    let reset = call_on(&a, "reset_site_permissions", json!({})).await.ok();
    assert_eq!(reset["restored"], 1, "{reset}");
    call_on(&a, "wait_for", state("geolocation", "prompt"))
        .await
        .ok();
}
