//! `bench agents`: N agents at once, each on its own tab, each running a click-and-read
//! loop: N MCP sessions on one `tabwire --http`, and N stdio processes sharing one browser
//! through the broker. Every reply is checked: a call that fails or never answers is
//! *lost*; a reply that carries another agent's tab or count is *misrouted*. The load
//! check of issue 13 is `bench agents --loops 100` (16 agents × 200 calls per mode).

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::ServiceExt;
use serde_json::json;
use tokio::io::AsyncBufReadExt;

use crate::stats::Samples;
use crate::{Client, call, tabwire_binary};

/// Iterations of click-then-read per agent, unless `--loops` says otherwise.
pub const LOOPS: usize = 20;

pub async fn run(counts: &[usize], loops: usize) -> anyhow::Result<()> {
    let site = crate::pages::serve().await?;
    let url = format!("{site}/small");
    println!("N agents, each on its own tab, {loops} × (page_click + execute_js read) per agent");
    println!(
        "{:<7} {:>4} {:>7} {:>5} {:>10} {:>9} {:>8}   per-call latency",
        "mode", "N", "calls", "lost", "misrouted", "wall (s)", "calls/s"
    );
    for mode in ["http", "stdio"] {
        for &n in counts {
            let (clients, _guards) = match mode {
                "http" => http_clients(n).await?,
                _ => stdio_clients(n).await?,
            };
            let tally = drive(&clients, &url, loops).await?;
            println!(
                "{mode:<7} {n:>4} {:>7} {:>5} {:>10} {:>9.2} {:>8.1}   {}",
                tally.calls,
                tally.lost,
                tally.misrouted,
                tally.wall.as_secs_f64(),
                tally.calls as f64 / tally.wall.as_secs_f64(),
                tally.latency.tail_summary()
            );
        }
    }
    Ok(())
}

/// What one run of N agents came to.
struct Tally {
    calls: usize,
    lost: usize,
    misrouted: usize,
    wall: Duration,
    latency: Samples,
}

/// One agent's account of its own loop.
#[derive(Default)]
struct AgentTally {
    lost: usize,
    misrouted: usize,
    latencies: Vec<Duration>,
}

/// Each client opens the page in its own tab, then loops, checking every reply against
/// what only it can know: its tab and its own click count.
async fn drive(clients: &[Client], url: &str, loops: usize) -> anyhow::Result<Tally> {
    let mut tabs = Vec::with_capacity(clients.len());
    for client in clients {
        let (opened, _) = call(client, "open_url", json!({ "url": url })).await?;
        let (listed, _) = call(client, "list_tabs", json!({})).await?;
        tabs.push(
            listed["default_session_id"]
                .as_str()
                .context("no default tab")?
                .to_owned(),
        );
        anyhow::ensure!(opened["status"] == "ok", "open_url: {opened}");
    }
    let started = Instant::now();
    let runs = clients.iter().zip(&tabs).map(|(client, tab)| async move {
        let mut tally = AgentTally::default();
        let mut clicks = 0;
        for _ in 0..loops {
            let t = Instant::now();
            match call_with_target(client, "page_click", json!({ "selector": "#go" })).await {
                Ok((_, target)) if target.as_deref() == Some(tab.as_str()) => clicks += 1,
                Ok(_) => {
                    clicks += 1;
                    tally.misrouted += 1;
                }
                Err(_) => tally.lost += 1,
            }
            tally.latencies.push(t.elapsed());
            let t = Instant::now();
            match call_with_target(client, "execute_js", json!({ "script": "window.clicks" })).await
            {
                Ok((read, target))
                    if read["js_return"] == json!(clicks)
                        && target.as_deref() == Some(tab.as_str()) => {}
                Ok(_) => tally.misrouted += 1,
                Err(_) => tally.lost += 1,
            }
            tally.latencies.push(t.elapsed());
        }
        tally
    });
    let results = futures_join_all(runs).await;
    let wall = started.elapsed();
    let mut tally = Tally {
        calls: clients.len() * loops * 2,
        lost: 0,
        misrouted: 0,
        wall,
        latency: Samples::default(),
    };
    for agent in results {
        tally.lost += agent.lost;
        tally.misrouted += agent.misrouted;
        for latency in agent.latencies {
            tally.latency.push(latency);
        }
    }
    Ok(tally)
}

/// A call's data and the tab its reply says it acted on (`target.session_id`).
async fn call_with_target(
    client: &Client,
    tool: &str,
    args: serde_json::Value,
) -> anyhow::Result<(serde_json::Value, Option<String>)> {
    let reply = tokio::time::timeout(
        Duration::from_secs(60),
        crate::call_envelope(client, tool, args),
    )
    .await
    .context("no reply within 60 s")??;
    anyhow::ensure!(reply["ok"] == true, "{tool} failed: {}", reply["error"]);
    let target = reply["target"]["session_id"].as_str().map(str::to_owned);
    Ok((reply["data"].clone(), target))
}

/// Runs futures concurrently on this task (no extra dependency for join_all).
async fn futures_join_all<F: std::future::Future>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output> {
    let handles: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs = Vec::with_capacity(handles.len());
    let mut pending: Vec<_> = handles.into_iter().map(Some).collect();
    let mut results: Vec<Option<F::Output>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (slot, result) in pending.iter_mut().zip(results.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(output) => {
                        *result = Some(output);
                        *slot = None;
                    }
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs.extend(results.into_iter().flatten());
    outputs
}

/// Whatever must stay alive while the clients run.
pub struct Guards(#[allow(dead_code)] Vec<tokio::process::Child>);

async fn http_clients(n: usize) -> anyhow::Result<(Vec<Client>, Guards)> {
    let mut server = tokio::process::Command::new(tabwire_binary()?)
        .args(["--isolated", "--http", "127.0.0.1:0", "--output-dir"])
        .arg(std::env::temp_dir().join("tabwire-bench-out"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let mut lines = tokio::io::BufReader::new(server.stderr.take().context("stderr")?).lines();
    let url = loop {
        let line = lines.next_line().await?.context("tabwire --http exited")?;
        if let Some(url) = line.strip_prefix("tabwire: listening on ") {
            break url.trim().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.clone());
        clients.push(().serve(transport).await?);
    }
    Ok((clients, Guards(vec![server])))
}

async fn stdio_clients(n: usize) -> anyhow::Result<(Vec<Client>, Guards)> {
    let work =
        std::env::temp_dir().join(format!("tabwire-bench-agents-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("run"))?;
    let mut clients = Vec::with_capacity(n);
    let mut children = Vec::with_capacity(n);
    for _ in 0..n {
        let mut child = tokio::process::Command::new(tabwire_binary()?)
            .args(["--broker-grace", "0", "--user-data-dir"])
            .arg(work.join("profile"))
            .arg("--output-dir")
            .arg(work.join("out"))
            .env("XDG_RUNTIME_DIR", work.join("run"))
            .env("XDG_STATE_HOME", work.join("state"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let stdout = child.stdout.take().context("stdout")?;
        let stdin = child.stdin.take().context("stdin")?;
        clients.push(().serve((stdout, stdin)).await?);
        children.push(child);
    }
    Ok((clients, Guards(children)))
}
