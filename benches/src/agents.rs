//! `bench agents`: N agents at once, each on its own tab, each running a click-and-read
//! loop: N MCP sessions on one `tabwire --http`, and N stdio processes sharing one browser
//! through the broker.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use rmcp::ServiceExt;
use serde_json::json;
use tokio::io::AsyncBufReadExt;

use crate::stats::Samples;
use crate::{Client, call, tabwire_binary};

/// Iterations of click-then-read per agent.
const LOOPS: usize = 20;

pub async fn run(counts: &[usize]) -> anyhow::Result<()> {
    let site = crate::pages::serve().await?;
    let url = format!("{site}/small");
    println!("N agents, each on its own tab, {LOOPS} × (page_click + execute_js read) per agent");
    println!(
        "{:<7} {:>4} {:>12} {:>10} {:>22}",
        "mode", "N", "wall (s)", "ops/s", "per-op latency"
    );
    for mode in ["http", "stdio"] {
        for &n in counts {
            let (clients, _guards) = match mode {
                "http" => http_clients(n).await?,
                _ => stdio_clients(n).await?,
            };
            let (wall, latency) = drive(&clients, &url).await?;
            let ops = (n * LOOPS * 2) as f64;
            println!(
                "{mode:<7} {n:>4} {:>12.2} {:>10.1}   {}",
                wall.as_secs_f64(),
                ops / wall.as_secs_f64(),
                latency.summary()
            );
        }
    }
    Ok(())
}

/// Each client opens the page in its own tab, then loops; returns wall time and latencies.
async fn drive(clients: &[Client], url: &str) -> anyhow::Result<(Duration, Samples)> {
    for client in clients {
        call(client, "open_url", json!({ "url": url })).await?;
    }
    let started = Instant::now();
    let runs = clients.iter().map(|client| async move {
        let mut latencies = Vec::with_capacity(LOOPS * 2);
        for i in 0..LOOPS {
            let t = Instant::now();
            call(client, "page_click", json!({ "selector": "#go" })).await?;
            latencies.push(t.elapsed());
            let t = Instant::now();
            let (read, _) =
                call(client, "execute_js", json!({ "script": "window.clicks" })).await?;
            latencies.push(t.elapsed());
            anyhow::ensure!(
                read["js_return"] == json!(i + 1),
                "agent saw {} clicks, expected {}",
                read["js_return"],
                i + 1
            );
        }
        Ok::<_, anyhow::Error>(latencies)
    });
    let results = futures_join_all(runs).await;
    let wall = started.elapsed();
    let mut samples = Samples::default();
    for result in results {
        for latency in result? {
            samples.push(latency);
        }
    }
    Ok((wall, samples))
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
