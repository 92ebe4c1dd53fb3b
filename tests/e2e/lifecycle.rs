use std::process::Stdio;

use serde_json::json;

use crate::support::{BINARY, DebuggingBrowser, Site, Tabwire, process_alive, process_exits};

async fn browser_pid(tw: &Tabwire) -> u32 {
    let status = tw.ok("get_setup_status", json!({})).await;
    status["browser_pid"]
        .as_u64()
        .expect("browser_pid once launched") as u32
}

#[tokio::test]
async fn the_browser_goes_away_when_the_client_disconnects() {
    let site = Site::start().await;
    let tw = Tabwire::managed("disconnect").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let browser = browser_pid(&tw).await;
    let Tabwire {
        client, mut child, ..
    } = tw;
    drop(client); // closes tabwire's stdin
    let status = tokio::time::timeout(crate::support::PATIENCE, child.wait())
        .await
        .expect("tabwire exits")
        .unwrap();
    assert!(status.success(), "{status}");
    assert!(
        process_exits(browser).await,
        "browser {browser} outlived its server"
    );
}

#[tokio::test]
async fn the_browser_goes_away_when_the_server_is_killed() {
    let site = Site::start().await;
    let tw = Tabwire::managed("killed-server").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let browser = browser_pid(&tw).await;
    // SIGKILL: no chance to clean up; the pipe closing and the parent-death signal must do.
    unsafe { libc::kill(tw.pid() as i32, libc::SIGKILL) };
    assert!(
        process_exits(browser).await,
        "browser {browser} orphaned by a killed server"
    );
}

#[tokio::test]
async fn a_crashed_browser_fails_the_call_in_flight_and_is_relaunched() {
    let site = Site::start().await;
    let tw = Tabwire::managed("crash").await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let browser = browser_pid(&tw).await;
    // A script that never finishes is in flight inside the browser when it dies.
    let pending = tw
        .ok(
            "execute_js",
            json!({ "script": "await new Promise(() => {})", "wait": false }),
        )
        .await;
    unsafe { libc::kill(browser as i32, libc::SIGKILL) };
    assert!(process_exits(browser).await);
    let outcome = tw
        .call(
            "get_execute_js_result",
            json!({ "operation_id": pending["operation_id"], "timeout": 60 }),
        )
        .await;
    assert_eq!(
        outcome.reason(),
        "browser_disconnected",
        "{}",
        outcome.envelope
    );
    // The next call relaunches the browser and works.
    let opened = tw
        .ok("open_url", json!({ "url": site.url("fold.html") }))
        .await;
    assert_eq!(opened["title"], "Below the fold");
    let relaunched = browser_pid(&tw).await;
    assert_ne!(relaunched, browser);
    assert!(process_alive(relaunched));
}

#[tokio::test]
async fn an_existing_browser_is_driven_through_its_cdp_endpoint() {
    let site = Site::start().await;
    let DebuggingBrowser {
        child: mut chromium,
        http,
        ws,
    } = DebuggingBrowser::launch("cdp-endpoint").await;

    // Both endpoint forms: the HTTP one is asked for the WebSocket URL.
    for endpoint in [http, ws] {
        let tw = Tabwire::stdio_with(
            "cdp-endpoint-client",
            &["--cdp-endpoint", &endpoint, "--broker-grace", "0"],
        )
        .await;
        tw.ok("open_url", json!({ "url": site.url("form.html") }))
            .await;
        tw.ok(
            "page_type",
            json!({ "selector": "#name", "text": "over CDP" }),
        )
        .await;
        let value = tw
            .ok(
                "execute_js",
                json!({ "script": "document.getElementById('name').value" }),
            )
            .await;
        assert_eq!(value["js_return"], "over CDP");
        let tabs = tw.ok("list_tabs", json!({})).await;
        assert!(
            tabs["default_session_id"]
                .as_str()
                .unwrap()
                .starts_with("cdp:"),
            "{tabs}"
        );
        // Leaving does not close a browser tabwire did not launch.
        let Tabwire {
            client, mut child, ..
        } = tw;
        drop(client);
        let _ = child.wait().await;
        assert!(
            chromium.try_wait().unwrap().is_none(),
            "tabwire closed a browser it only attached to"
        );
    }
    let unreachable =
        Tabwire::stdio_with("cdp-unreachable", &["--cdp-endpoint", "http://127.0.0.1:9"]).await;
    let reply = unreachable.call("list_tabs", json!({})).await;
    assert_eq!(reply.reason(), "browser_unreachable", "{}", reply.envelope);
    let _ = chromium.kill().await;
}

#[tokio::test]
async fn http_on_a_public_address_without_a_token_is_refused_at_start() {
    let output = tokio::process::Command::new(BINARY)
        .args(["--http", "0.0.0.0:0", "--isolated"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--token"), "{stderr}");
}

#[tokio::test]
async fn a_status_report_answers_while_a_browser_is_still_connecting() {
    // An endpoint that accepts connections and never says a word: connecting to it hangs
    // until tabwire's own deadline.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let reached = std::sync::Arc::new(tokio::sync::Notify::new());
    let reached_by = reached.clone();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
            reached_by.notify_one();
        }
    });
    let tw = Tabwire::stdio_with(
        "status-while-connecting",
        &["--cdp-endpoint", &endpoint, "--broker-grace", "0"],
    )
    .await;
    let connecting = tw.call("list_tabs", json!({}));
    tokio::pin!(connecting);
    // The status is asked for only once tabwire is inside its connect.
    tokio::select! {
        reply = &mut connecting => panic!("the silent endpoint answered: {}", reply.envelope),
        () = reached.notified() => {}
    }
    let status = tw.call("get_setup_status", json!({}));
    tokio::select! {
        status = status => {
            let status = status.ok();
            assert_eq!(status["link_state"], "not_started", "{status}");
        }
        reply = &mut connecting => panic!(
            "get_setup_status waited for the connect to give up: {}",
            reply.envelope
        ),
    }
    let reply = connecting.await;
    assert_eq!(reply.reason(), "browser_unreachable", "{}", reply.envelope);
}

#[tokio::test]
async fn a_browser_killed_between_or_during_calls_is_noticed_at_once_and_replaced() {
    let site = Site::start().await;
    let tw = Tabwire::managed("chaos").await;
    for round in 0..6 {
        tw.ok("open_url", json!({ "url": site.url("form.html") }))
            .await;
        let before = tw.ok("list_tabs", json!({})).await;
        let old_tab = before["default_session_id"].as_str().unwrap().to_owned();
        let browser = browser_pid(&tw).await;
        let during = round % 2 == 1;
        let pending = if during {
            // A script running in the page when the browser dies (the page has asked for
            // the gate): it ran, so its outcome must say it may have.
            let key = format!("chaos-{round}");
            let script = format!(
                "await fetch('{}'); await new Promise(() => {{}})",
                site.url(&format!("hold/{key}"))
            );
            let started = tw
                .ok("execute_js", json!({ "script": script, "wait": false }))
                .await;
            site.arrived(&key).await;
            Some(started["operation_id"].clone())
        } else {
            None
        };
        unsafe { libc::kill(browser as i32, libc::SIGKILL) };
        assert!(process_exits(browser).await, "round {round}");
        // Noticed at once, without a call: the status says so and names why.
        crate::support::poll_until("the status to report the lost browser", || async {
            tw.ok("get_setup_status", json!({})).await["link_state"] == "lost"
        })
        .await;
        let status = tw.ok("get_setup_status", json!({})).await;
        assert!(
            status["browser_lost"]["reason"]
                .as_str()
                .unwrap()
                .contains("signal 9"),
            "round {round}: {status}"
        );
        if let Some(operation) = pending {
            let outcome = tw
                .call(
                    "get_execute_js_result",
                    json!({ "operation_id": operation, "timeout": 60 }),
                )
                .await;
            assert_eq!(
                outcome.reason(),
                "browser_disconnected",
                "round {round}: {}",
                outcome.envelope
            );
            assert_eq!(
                outcome.envelope["retry_safe"], false,
                "it was sent: it may have run: {}",
                outcome.envelope
            );
        }
        // A call naming the dead tab was never sent anywhere: the tab is simply gone.
        let stale = tw.call("scan_page", json!({ "session_id": old_tab })).await;
        assert_eq!(
            stale.error_code(),
            "session_not_connected",
            "round {round}: {}",
            stale.envelope
        );
        assert!(
            stale.envelope.get("may_have_executed").is_none(),
            "{}",
            stale.envelope
        );
        // The next call that needs a browser gets a new one and works; the old tabs are
        // not listed as live, and the listing says what was lost.
        let after = tw.ok("list_tabs", json!({})).await;
        assert!(
            !after.to_string().contains(&format!("\"{old_tab}\"")),
            "round {round}: {after}"
        );
        assert_eq!(
            after["browser_lost"]["tabs_lost"].as_u64().map(|n| n > 0),
            Some(true),
            "round {round}: {after}"
        );
        let scan = tw.ok("scan_page", json!({})).await;
        assert!(scan["content"].is_string());
        assert_ne!(browser_pid(&tw).await, browser);
    }
}

#[tokio::test]
#[allow(deprecated)] // MCP logging (SEP-2577), which tabwire still offers
async fn a_cdp_endpoint_that_goes_away_between_calls_is_noticed_and_named() {
    use rmcp::model::{LoggingLevel, SetLevelRequestParams};
    let site = Site::start().await;
    let DebuggingBrowser {
        child: mut chromium,
        http,
        ..
    } = DebuggingBrowser::launch("endpoint-gone").await;
    let tw = Tabwire::stdio_with(
        "endpoint-gone-client",
        &["--cdp-endpoint", &http, "--broker-grace", "0"],
    )
    .await;
    tw.client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .expect("logging/setLevel");
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let old_tab = tw.ok("list_tabs", json!({})).await["default_session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // The browser goes away between calls; tabwire hears of it at once (its log says
    // so to a client that listens), not at the next call.
    chromium.kill().await.expect("kill the browser");
    tw.client
        .service()
        .wait_for("the log of the lost browser", |heard| {
            matches!(heard, crate::support::Heard::Log(log) if log.data["message"] == "browser lost")
        })
        .await;
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["link_state"], "lost", "{status}");
    assert!(
        status["browser_lost"]["reason"]
            .as_str()
            .unwrap_or("")
            .contains(&http),
        "the reason names the endpoint: {status}"
    );
    // A call naming one of its tabs was never sent anywhere: the endpoint is not there.
    let stale = tw.call("scan_page", json!({ "session_id": old_tab })).await;
    assert_eq!(stale.reason(), "browser_unreachable", "{}", stale.envelope);
    assert_eq!(
        stale.envelope["delivery_state"], "undelivered",
        "{}",
        stale.envelope
    );
    assert!(
        stale.envelope.get("may_have_executed").is_none(),
        "{}",
        stale.envelope
    );
    // No relaunch: the next call that needs the browser says the endpoint is not there,
    // and that nothing ran.
    let next = tw.call("scan_page", json!({})).await;
    assert_eq!(next.reason(), "browser_unreachable", "{}", next.envelope);
    assert!(
        next.message().contains(&http) || next.message().contains("127.0.0.1"),
        "{}",
        next.envelope
    );
    assert_eq!(
        next.envelope["delivery_state"], "undelivered",
        "{}",
        next.envelope
    );
}

#[tokio::test]
async fn tab_search_forgets_the_tabs_of_a_browser_killed_between_calls() {
    let site = Site::start().await;
    let tw = Tabwire::managed("chaos-search").await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("search/refunds.html") }),
    )
    .await;
    let found = tw.ok("search_tabs", json!({ "query": "ORD-48213" })).await;
    assert_eq!(found["count"], 1, "{found}");
    let browser = browser_pid(&tw).await;
    unsafe { libc::kill(browser as i32, libc::SIGKILL) };
    assert!(process_exits(browser).await);
    crate::support::poll_until("the status to report the lost browser", || async {
        tw.ok("get_setup_status", json!({})).await["link_state"] == "lost"
    })
    .await;
    // Nothing stale is answered, and no browser is launched just to search.
    let found = tw.ok("search_tabs", json!({ "query": "ORD-48213" })).await;
    assert_eq!(found["count"], 0, "{found}");
    assert_eq!(found["tabs_searched"], 0, "{found}");
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["tab_search"]["indexed_tabs"], 0, "{status}");
    // The next page call brings a new browser, whose tab is searched.
    tw.ok(
        "open_url",
        json!({ "url": site.url("search/refunds.html") }),
    )
    .await;
    let found = tw.ok("search_tabs", json!({ "query": "ORD-48213" })).await;
    assert_eq!(found["count"], 1, "{found}");
}

/// How many rounds a chaos test runs: `TABWIRE_CHAOS_ROUNDS` (a long run: 100), else
/// `default` (CI).
fn chaos_rounds(default: usize) -> usize {
    std::env::var("TABWIRE_CHAOS_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// A small deterministic sequence (xorshift), so a failing round can be run again.
struct Chaos(u64);

impl Chaos {
    fn new() -> Chaos {
        let seed = std::env::var("TABWIRE_CHAOS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x9e37_79b9_7f4a_7c15);
        eprintln!("chaos seed {seed} (TABWIRE_CHAOS_SEED)");
        Chaos(seed | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// What an agent does right after a pause in which the browser died: it calls at once,
/// before tabwire could have seen the process go. The call must find a browser that
/// works (a new one), never the dead one's tabs, and never fail as "may have run".
#[tokio::test]
async fn a_call_made_at_once_after_the_browser_is_killed_relaunches_and_runs() {
    let site = Site::start().await;
    let tw = Tabwire::managed("kill-then-call").await;
    let rounds = chaos_rounds(10);
    let mut failures = Vec::new();
    let mut failed_rounds = 0;
    for round in 0..rounds {
        let failed_before = failures.len();
        tw.ok("open_url", json!({ "url": site.url("form.html") }))
            .await;
        let before = tw.ok("list_tabs", json!({})).await;
        let old_tab = before["default_session_id"].as_str().unwrap().to_owned();
        let browser = browser_pid(&tw).await;
        unsafe { libc::kill(browser as i32, libc::SIGKILL) };
        // No wait: list the tabs, then navigate (as an agent does after a pause), or
        // navigate or read at once.
        if round % 3 == 0 {
            let listed = tw.call("list_tabs", json!({})).await;
            if listed.is_error
                || listed
                    .envelope
                    .to_string()
                    .contains(&format!("\"{old_tab}\""))
            {
                failures.push(format!("round {round}: list_tabs: {}", listed.envelope));
            }
        }
        let reply = if round % 3 == 2 {
            tw.call("scan_page", json!({})).await
        } else {
            tw.call("open_url", json!({ "url": site.url("fold.html") }))
                .await
        };
        if reply.is_error {
            failures.push(format!("round {round}: {}", reply.envelope));
        }
        if failures.len() > failed_before {
            failed_rounds += 1;
            continue;
        }
        if round % 3 != 2 {
            assert_eq!(reply.envelope["data"]["title"], "Below the fold");
        }
        assert_ne!(browser_pid(&tw).await, browser, "round {round}");
        assert!(process_exits(browser).await, "round {round}");
    }
    eprintln!("kill, then call at once: {failed_rounds} of {rounds} rounds failed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The browser killed at a random moment while a call runs: the call answers (it may
/// fail, saying honestly whether what it sent may have run), never hangs, and the call
/// after it works on a new browser.
#[tokio::test]
async fn a_browser_killed_at_random_moments_during_calls_fails_them_honestly() {
    let site = Site::start().await;
    let tw = Tabwire::managed("kill-during").await;
    let rounds = chaos_rounds(10);
    let mut chaos = Chaos::new();
    let (mut failed, mut undelivered, mut rerun) = (0, 0, 0);
    for round in 0..rounds {
        tw.ok("open_url", json!({ "url": site.url("form.html") }))
            .await;
        let browser = browser_pid(&tw).await;
        let (tool, args) = match chaos.below(5) {
            0 => ("open_url", json!({ "url": site.url("fold.html") })),
            1 => ("scan_page", json!({})),
            2 => (
                "page_type",
                json!({ "selector": "#email", "text": "ada@example.com" }),
            ),
            3 => ("capture_page_screenshot", json!({})),
            _ => ("execute_js", json!({ "script": "return document.title" })),
        };
        // The moment of death, somewhere in the first 30 ms of the call: chaos, not a
        // wait for anything.
        let death = std::time::Duration::from_micros(chaos.below(30_000));
        let call = tw.call(tool, args);
        let kill = async {
            tokio::time::sleep(death).await;
            unsafe { libc::kill(browser as i32, libc::SIGKILL) };
        };
        let (reply, ()) = tokio::join!(call, kill);
        let ran_again = reply.envelope["diagnostics"]["switched_from"].is_string();
        if ran_again {
            // Nothing of it reached the dead browser, so it ran again on the new one, in a
            // new tab, and says so; what it found there is its own answer.
            rerun += 1;
        } else if reply.is_error {
            failed += 1;
            let envelope = &reply.envelope;
            assert!(
                matches!(
                    reply.error_code(),
                    "browser_disconnected" | "session_not_connected"
                ) || reply.reason() == "browser_disconnected",
                "round {round}, {tool}: {envelope}"
            );
            // Said once, and coherently: undelivered is safe to retry, anything else
            // may have run.
            if envelope["delivery_state"] == "undelivered" {
                undelivered += 1;
                assert_eq!(
                    envelope["retry_safe"], true,
                    "round {round}, {tool}: {envelope}"
                );
                let diagnostics = &envelope["diagnostics"];
                assert!(diagnostics.get("may_have_executed").is_none(), "{envelope}");
            } else {
                assert_eq!(envelope["delivery_state"], "sent_unconfirmed", "{envelope}");
                assert_eq!(
                    envelope["diagnostics"]["may_have_executed"], true,
                    "round {round}, {tool}: {envelope}"
                );
                assert_eq!(
                    envelope["retry_safe"], false,
                    "round {round}, {tool}: {envelope}"
                );
            }
        }
        assert!(process_exits(browser).await, "round {round}");
        let next = tw
            .call("open_url", json!({ "url": site.url("fold.html") }))
            .await;
        assert!(
            !next.is_error,
            "round {round}: the call after: {}",
            next.envelope
        );
        assert_eq!(next.envelope["data"]["title"], "Below the fold");
    }
    eprintln!(
        "kill during calls: {rounds} rounds, {failed} calls failed ({undelivered} of them undelivered), {rerun} ran again on the new browser"
    );
}
