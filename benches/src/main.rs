//! `cargo run -p bench --release -- page [--runs N]`
//!
//! Drives the release `tabwire` binary over stdio with rmcp's client, against pages served
//! on loopback, and prints medians and spreads. Absolute times are machine-dependent;
//! compare runs made side by side.

mod agents;
mod pages;
mod stats;

use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};

use stats::Samples;

type Client = RunningService<RoleClient, ()>;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map(|n| n.parse::<usize>())
        .transpose()
        .context("--runs takes a number")?
        .unwrap_or(30);
    match args.first().map(String::as_str) {
        Some("page") | None => page(runs).await,
        Some("agents") => agents::run(&[1, 4, 16]).await,
        Some(other) => bail!("unknown benchmark '{other}'; available: page, agents"),
    }
}

/// The tabwire binary built next to this one (`cargo build --release` first).
fn tabwire_binary() -> anyhow::Result<std::path::PathBuf> {
    let here = std::env::current_exe()?;
    let binary = here.with_file_name("tabwire");
    if !binary.exists() {
        bail!(
            "{} not found: run `cargo build --release` first",
            binary.display()
        );
    }
    Ok(binary)
}

async fn start_tabwire() -> anyhow::Result<(Client, tokio::process::Child)> {
    let out = std::env::temp_dir().join("tabwire-bench-out");
    let mut child = tokio::process::Command::new(tabwire_binary()?)
        .args(["--isolated", "--output-dir"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let stdin = child.stdin.take().context("stdin")?;
    let client = ().serve((stdout, stdin)).await?;
    Ok((client, child))
}

/// Calls a tool; returns the envelope's data and the reply's text length.
async fn call(client: &Client, tool: &str, args: Value) -> anyhow::Result<(Value, usize)> {
    let arguments = args.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await?;
    let text = result
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let envelope: Value = serde_json::from_str(&text)?;
    if envelope["ok"] != true {
        bail!("{tool} failed: {}", envelope["error"]);
    }
    Ok((envelope["data"].clone(), text.len()))
}

async fn page(runs: usize) -> anyhow::Result<()> {
    let site = pages::serve().await?;
    let (client, _child) = start_tabwire().await?;
    let started = Instant::now();
    call(&client, "open_url", json!({ "url": format!("{site}/big") })).await?;
    println!(
        "cold start (spawn → first navigation done, includes browser launch): {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let (count, _) = call(
        &client,
        "execute_js",
        json!({ "script": "document.getElementsByTagName('*').length" }),
    )
    .await?;
    println!(
        "\nscan_page on a page with {} elements, {runs} runs",
        count["js_return"]
    );
    for (label, args) in [
        ("default (cutlist on)", json!({})),
        ("text_only", json!({ "text_only": true })),
        (
            "cutlist off, no char budget",
            json!({ "cutlist": false, "maxchars": 2_000_000 }),
        ),
    ] {
        let mut times = Samples::default();
        let (mut content, mut reply) = (0, 0);
        for _ in 0..runs {
            let t = Instant::now();
            let (data, reply_len) = call(&client, "scan_page", args.clone()).await?;
            times.push(t.elapsed());
            content = data["content"].as_str().map_or(0, |c| c.chars().count());
            reply = reply_len;
        }
        println!(
            "  {label:<28} {}   content {content} chars, whole reply {reply} chars",
            times.summary()
        );
    }

    call(
        &client,
        "open_url",
        json!({ "url": format!("{site}/small") }),
    )
    .await?;
    let mut clicks = Samples::default();
    for _ in 0..runs {
        let t = Instant::now();
        call(&client, "page_click", json!({ "selector": "#go" })).await?;
        clicks.push(t.elapsed());
    }
    let (counted, _) = call(&client, "execute_js", json!({ "script": "window.clicks" })).await?;
    println!(
        "\npage_click round trip on a small page ({runs} runs): {}",
        clicks.summary()
    );
    if counted["js_return"] != json!(runs) {
        bail!(
            "the page counted {} clicks, expected {runs}",
            counted["js_return"]
        );
    }
    let mut locator_clicks = Samples::default();
    for _ in 0..runs {
        let t = Instant::now();
        call(
            &client,
            "page_click",
            json!({ "selector": { "role": "button", "name": "Go" } }),
        )
        .await?;
        locator_clicks.push(t.elapsed());
    }
    println!(
        "page_click by role+name ({runs} runs):          {}",
        locator_clicks.summary()
    );
    Ok(())
}
