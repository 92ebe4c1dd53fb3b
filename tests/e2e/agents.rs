//! Many agents, one browser: separate stdio processes on one profile share a broker.

use serde_json::{Value, json};

use crate::support::{HttpServer, Site, Tabwire, call_on, process_alive, process_exits, scratch};

fn shared(work: &std::path::Path) -> Vec<String> {
    vec![
        "--user-data-dir".into(),
        work.join("profile").display().to_string(),
        // Clients of one browser agree on where files go (the broker refuses otherwise).
        "--output-dir".into(),
        work.join("out").display().to_string(),
        "--broker-grace".into(),
        "0.5".into(),
    ]
}

async fn client(work: &std::path::Path) -> Tabwire {
    let args = shared(work);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Tabwire::stdio_in(work.to_path_buf(), &args).await
}

async fn browser_pid(tw: &Tabwire) -> u64 {
    tw.ok("get_setup_status", json!({})).await["browser_pid"]
        .as_u64()
        .expect("browser_pid")
}

#[tokio::test]
async fn two_stdio_processes_share_one_browser_each_with_its_own_tab() {
    let site = Site::start().await;
    let work = scratch("shared-two");
    let (a, b) = tokio::join!(client(&work), client(&work));
    let (ra, rb) = tokio::join!(
        a.call("open_url", json!({ "url": site.url("form.html") })),
        b.call("open_url", json!({ "url": site.url("fold.html") })),
    );
    let (ta, tb) = (ra.envelope["target"].clone(), rb.envelope["target"].clone());
    ra.ok();
    rb.ok();
    assert_ne!(ta, tb, "the two processes must not share a default tab");
    assert_eq!(
        browser_pid(&a).await,
        browser_pid(&b).await,
        "one browser for one profile"
    );
    // Each reads its own page, at the same time.
    let (sa, sb) = tokio::join!(
        a.ok("execute_js", json!({ "script": "document.title" })),
        b.ok("execute_js", json!({ "script": "document.title" })),
    );
    assert_eq!(sa["js_return"], "Form");
    assert_eq!(sb["js_return"], "Below the fold");
    let tabs = a.ok("list_tabs", json!({})).await.to_string();
    assert!(
        tabs.contains("form.html") && tabs.contains("fold.html"),
        "{tabs}"
    );
}

#[tokio::test]
async fn a_race_for_one_tab_has_exactly_one_winner() {
    let site = Site::start().await;
    let work = scratch("shared-race");
    let (a, b) = tokio::join!(client(&work), client(&work));
    let opened = a
        .ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let _ = opened;
    let tab = a.ok("list_tabs", json!({})).await["default_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Each contender holds the tab for 3 s, far longer than the two requests lie apart.
    let script =
        "window.wins = (window.wins || 0) + 1; await new Promise(r => setTimeout(r, 3000)); 'won'";
    let (ra, rb) = tokio::join!(
        a.call(
            "execute_js",
            json!({ "script": script, "session_id": tab, "timeout": 30 })
        ),
        b.call(
            "execute_js",
            json!({ "script": script, "session_id": tab, "timeout": 30 })
        ),
    );
    let outcomes = [&ra, &rb];
    let winners = outcomes.iter().filter(|r| !r.is_error).count();
    let busy: Vec<_> = outcomes
        .iter()
        .filter(|r| r.error_code() == "target_busy")
        .collect();
    assert_eq!(
        (winners, busy.len()),
        (1, 1),
        "a: {} b: {}",
        ra.envelope,
        rb.envelope
    );
    assert_eq!(busy[0].envelope["retryable"], true);
    assert_eq!(busy[0].envelope["delivery_state"], "undelivered");
    let wins = a
        .ok(
            "execute_js",
            json!({ "script": "window.wins", "session_id": tab }),
        )
        .await;
    assert_eq!(wins["js_return"], 1, "the loser must not have run");
}

#[tokio::test]
async fn the_browser_outlives_one_client_and_leaves_after_the_last() {
    let site = Site::start().await;
    let work = scratch("shared-life");
    let a = client(&work).await;
    a.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let browser = browser_pid(&a).await as u32;
    let b = client(&work).await;
    let Tabwire {
        client: a_client,
        child: mut a_child,
        ..
    } = a;
    drop(a_client);
    let _ = a_child.wait().await;
    // B keeps working in the same browser after A has gone.
    b.ok("open_url", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(browser_pid(&b).await as u32, browser);
    assert!(process_alive(browser));
    let Tabwire {
        client: b_client,
        child: mut b_child,
        ..
    } = b;
    drop(b_client);
    let _ = b_child.wait().await;
    assert!(
        process_exits(browser).await,
        "the browser must leave after the last client (and the grace period)"
    );
}

#[tokio::test]
async fn stdio_clients_join_an_http_server_on_the_same_profile() {
    let site = Site::start().await;
    let work = scratch("shared-http");
    let args = shared(&work);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = HttpServer::start("shared-http-server", &args).await;
    let http = server.client().await;
    call_on(&http, "open_url", json!({ "url": site.url("form.html") }))
        .await
        .ok();
    let over_http = call_on(&http, "get_setup_status", json!({})).await.ok()["browser_pid"].clone();
    let stdio = client(&work).await;
    stdio
        .ok("open_url", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(browser_pid(&stdio).await, over_http.as_u64().unwrap());
}

#[tokio::test]
async fn clients_of_one_browser_keep_their_own_profile_and_settings() {
    let work = scratch("shared-settings");
    let args = shared(&work);
    let mut safe_args: Vec<&str> = args.iter().map(String::as_str).collect();
    safe_args.extend(["--profile", "safe"]);
    let lab = client(&work).await;
    let safe = Tabwire::stdio_in(work.clone(), &safe_args).await;
    let mode = |reply: Value| reply["mode"].as_str().unwrap().to_owned();
    assert_eq!(
        mode(lab.ok("get_automation_profile", json!({})).await),
        "lab"
    );
    assert_eq!(
        mode(safe.ok("get_automation_profile", json!({})).await),
        "safe"
    );
    // The safe client cannot loosen its own profile; the lab one tightens only itself.
    let loosen = safe
        .call("set_automation_profile", json!({ "mode": "lab" }))
        .await;
    assert_eq!(
        loosen.error_code(),
        "permission_denied",
        "{}",
        loosen.envelope
    );
    lab.ok("set_automation_profile", json!({ "mode": "safe" }))
        .await;
    assert_eq!(
        mode(lab.ok("get_automation_profile", json!({})).await),
        "safe"
    );
    let other = client(&work).await;
    assert_eq!(
        mode(other.ok("get_automation_profile", json!({})).await),
        "lab"
    );

    // A client started with other engine settings is refused, with the difference named.
    let elsewhere = work.join("elsewhere").display().to_string();
    let other_args: Vec<&str> = args
        .iter()
        .map(|a| {
            if a.ends_with("/out") {
                elsewhere.as_str()
            } else {
                a.as_str()
            }
        })
        .collect();
    let mut output = tokio::process::Command::new(crate::support::BINARY)
        .args(&other_args)
        .env("XDG_RUNTIME_DIR", crate::support::runtime_dir())
        .env("XDG_CONFIG_HOME", crate::support::config_dir())
        .env("XDG_DATA_HOME", work.join("data"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(output.stdin.take());
    let finished = tokio::time::timeout(crate::support::PATIENCE, output.wait_with_output())
        .await
        .expect("the refused client exits")
        .unwrap();
    assert!(!finished.status.success());
    let stderr = String::from_utf8_lossy(&finished.stderr);
    assert!(stderr.contains("output_dir"), "{stderr}");
}
