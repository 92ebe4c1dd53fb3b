//! `cargo run -p bench --release -- page [--runs N]`
//! `cargo run -p bench --release -- agents [--loops N]`
//! `cargo run -p bench --release -- link [--runs N]`
//! `cargo run -p bench --release -- peers [--runs N] [--report-only]`
//! `cargo run -p bench --release -- search [--set main|heldout]… [--model DIR]…`
//! `cargo run -p bench --release -- floor [--runs N]`
//! `cargo run -p bench --release -- task`
//! `cargo run -p bench --release -- cli [--runs N]`
//!
//! Drives the release `tabwire` binary (and, for `peers`, `lean` and `task`, Playwright
//! MCP and Chrome DevTools MCP) with rmcp's client, and for `task` and `cli` as `tabwire
//! call` processes too, against pages served on loopback, and prints medians and spreads. Absolute times are machine-dependent; compare runs made
//! side by side.

mod agents;
mod cli;
mod floor;
mod install;
mod lean;
mod link;
mod mcp;
mod pages;
mod peers;
mod procs;
mod report;
mod search;
mod servers;
mod shell;
mod stats;
mod task;

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
    let runs = flag_number(&args, "--runs")?;
    match args.first().map(String::as_str) {
        Some("page") | None => page(runs.unwrap_or(30)).await,
        Some("agents") => {
            let loops = flag_number(&args, "--loops")?.unwrap_or(agents::LOOPS);
            agents::run(&[1, 4, 16], loops).await
        }
        Some("link") => link::run(runs.unwrap_or(20)).await,
        Some("peers") => peers(runs.unwrap_or(15), &args).await,
        Some("floor") => floor::run(runs.unwrap_or(20)).await,
        Some("lean") => lean_bench().await,
        Some("task") => task_bench().await,
        Some("cli") => cli::run(runs.unwrap_or(30)).await,
        Some("search") => {
            // Each --set NAME (default: main) adds its pages and queries; each --model
            // DIR, then each --compare BINARY (another tabwire build, its shipped
            // model), is run after this build's shipped model, for comparison.
            let flag = |name: &str| -> Vec<String> {
                args.windows(2)
                    .filter(|w| w[0] == name)
                    .map(|w| w[1].clone())
                    .collect()
            };
            search::run(&flag("--set"), &flag("--model"), &flag("--compare")).await
        }
        Some(other) => {
            bail!(
                "unknown benchmark '{other}'; available: page, agents, link, peers, lean, search, floor, task, cli"
            )
        }
    }
}

/// The number after `flag`, if the flag is given.
fn flag_number(args: &[String], flag: &str) -> anyhow::Result<Option<usize>> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .map(|n| n.parse::<usize>())
        .transpose()
        .with_context(|| format!("{flag} takes a number"))
}

/// The workspace root (this crate sits in `benches/`).
fn workspace() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// `bench lean`: tabwire's exact and lean replies beside the peers on pages nobody here
/// wrote; writes docs/lean-benchmark.md.
async fn lean_bench() -> anyhow::Result<()> {
    let root = workspace();
    let peers_dir = root.join("bench-peers");
    install::ensure_peers(&peers_dir)?;
    let scratch = std::env::temp_dir().join(format!("tabwire-bench-lean-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let env = servers::Env {
        tabwire: tabwire_binary()?,
        peers: peers_dir,
        scratch: scratch.clone(),
    };
    let site = pages::serve().await?;
    let outcome = lean::run(&env, &site).await;
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

/// `bench task`: one scripted task on a small admin app, by each server with its own
/// tools; writes docs/task-benchmark.md. A peer that cannot be installed is reported as
/// not run, and tabwire is still measured.
async fn task_bench() -> anyhow::Result<()> {
    if !std::path::Path::new(servers::CHROMIUM).exists() {
        bail!(
            "{} not found: apt-get install -y chromium",
            servers::CHROMIUM
        );
    }
    let root = workspace();
    let peers_dir = root.join("bench-peers");
    let peers = install::ensure_peers(&peers_dir).map_err(|e| format!("{e:#}"));
    let scratch = std::env::temp_dir().join(format!("tabwire-bench-task-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let env = servers::Env {
        tabwire: tabwire_binary()?,
        peers: peers_dir,
        scratch: scratch.clone(),
    };
    let site = pages::serve().await?;
    let outcome = task::run(&env, &site, peers).await;
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

/// `bench peers`: installs the peers if missing, runs them and tabwire side by side, and
/// writes docs/benchmarks.md and docs/benchmark-ratios.svg.
async fn peers(runs: usize, args: &[String]) -> anyhow::Result<()> {
    let root = workspace();
    if args.iter().any(|a| a == "--report-only") {
        // Rewrites the report from the saved results (and the current fidelity report).
        let raw: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join("docs/benchmark-results.json"))
                .context("docs/benchmark-results.json: run `bench peers` first")?,
        )?;
        let results = peers::Results::from_json(&raw["results"]);
        let ctx = report::Context::from_json(&raw["context"], fidelity_report(&root));
        report::write(&root.join("docs"), &results, &ctx)?;
        eprintln!("rewrote docs/benchmarks.md from docs/benchmark-results.json");
        return Ok(());
    }
    let started = Instant::now();
    let load_before = load_average();
    if !std::path::Path::new(servers::CHROMIUM).exists() {
        bail!(
            "{} not found: apt-get install -y chromium",
            servers::CHROMIUM
        );
    }
    let peers_dir = root.join("bench-peers");
    install::ensure_peers(&peers_dir)?;
    let scratch = std::env::temp_dir().join(format!("tabwire-bench-peers-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let env = servers::Env {
        tabwire: tabwire_binary()?,
        peers: peers_dir.clone(),
        scratch: scratch.clone(),
    };
    let opts = peers::Options {
        runs,
        inner: 3,
        agents: vec![1, 4, 16],
        loops: 3,
    };
    let site = pages::serve().await?;
    eprintln!(
        "{runs} runs × (tabwire, Playwright MCP, Chrome DevTools MCP), then N = {:?} agents; pages on {site}",
        opts.agents
    );
    let results = peers::run(&env, &site, &opts).await?;
    let _ = std::fs::remove_dir_all(&scratch);

    let fidelity = fidelity_report(&root);
    let mut command = String::from("cargo run -p bench --release -- peers");
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        command += &format!(
            " --runs {}",
            args.get(i + 1).map(String::as_str).unwrap_or("")
        );
    }
    let ctx = report::Context {
        date: utc_date(std::time::SystemTime::now(), false),
        command,
        machine: {
            let mut m = machine();
            m.push((
                "load average (1 min) at start and end".into(),
                format!(
                    "{load_before} and {} (the machine was not reserved for the run)",
                    load_average()
                ),
            ));
            m
        },
        versions: vec![
            (
                "tabwire".into(),
                format!(
                    "{}, built from commit {}",
                    output(&env.tabwire.display().to_string(), &["--version"]),
                    built_from(&root)
                ),
            ),
            (
                "Playwright MCP (@playwright/mcp)".into(),
                install::installed_version(&peers_dir, "@playwright/mcp").unwrap_or_default(),
            ),
            (
                "Chrome DevTools MCP (chrome-devtools-mcp)".into(),
                install::installed_version(&peers_dir, "chrome-devtools-mcp").unwrap_or_default(),
            ),
            ("Node.js".into(), output("node", &["--version"])),
            ("browser (all three)".into(), output(servers::CHROMIUM, &["--version"])),
            (
                "client".into(),
                "rmcp (the bench crate's), stdio for all three; Streamable HTTP for tabwire's N-agent rows".into(),
            ),
            ("tokenizer".into(), "o200k_base, tiktoken-rs 0.12 (vocabulary built in)".into()),
        ],
        commands: servers::KINDS
            .iter()
            .map(|&k| {
                let line = env.command_line(k, false).join(" ");
                let line = line
                    .replace(&scratch.display().to_string(), "$SCRATCH")
                    .replace(&format!("{}/", root.display()), "");
                (k.label().to_owned(), line)
            })
            .collect(),
        runs,
        inner: opts.inner,
        loops: opts.loops,
        agents: opts.agents.clone(),
        wall_secs: started.elapsed().as_secs_f64(),
        fidelity,
    };
    let docs = root.join("docs");
    report::write(&docs, &results, &ctx)?;
    eprintln!(
        "wrote {} and {} in {:.0} s",
        docs.join("benchmarks.md").display(),
        docs.join("benchmark-ratios.svg").display(),
        ctx.wall_secs
    );
    Ok(())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_default()
}

/// The checkout's commit, and whether tabwire's own sources (crates/) differ from it.
fn built_from(root: &std::path::Path) -> String {
    let dir = root.display().to_string();
    let commit = output("git", &["-C", &dir, "rev-parse", "--short", "HEAD"]);
    let changed = std::process::Command::new("git")
        .args(["-C", &dir, "status", "--porcelain", "--", "crates"])
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    if changed {
        format!("{commit} with local changes under crates/")
    } else {
        format!("{commit} (crates/ unmodified)")
    }
}

/// The fidelity test's last report and when it was written.
fn fidelity_report(root: &std::path::Path) -> Option<(Value, String)> {
    let path = root.join("target/fidelity-report.json");
    let report = serde_json::from_str::<Value>(&std::fs::read_to_string(&path).ok()?).ok()?;
    let stamp = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map(|t| utc_date(t, true))
        .unwrap_or_default();
    Some((report, stamp))
}

/// A command's first line of output, or "" when it cannot run.
fn output(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

fn machine() -> Vec<(String, String)> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .map(|kib| format!("{:.1} GiB", kib / 1024.0 / 1024.0))
        .unwrap_or_default();
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| {
            t.lines().find(|l| l.starts_with("PRETTY_NAME=")).map(|l| {
                l.trim_start_matches("PRETTY_NAME=")
                    .trim_matches('"')
                    .to_owned()
            })
        })
        .unwrap_or_default();
    vec![
        ("CPU".into(), format!("{cpu}, {cores} cores available")),
        ("memory".into(), memory),
        ("OS".into(), format!("{os}, {}", output("uname", &["-sr"]))),
    ]
}

/// YYYY-MM-DD (and HH:MM UTC) from a system time, without a date crate.
fn utc_date(t: std::time::SystemTime, with_time: bool) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if with_time {
        format!(
            "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
            rem / 3600,
            rem % 3600 / 60
        )
    } else {
        format!("{year:04}-{month:02}-{day:02}")
    }
}

/// The tabwire binary built next to this one (`cargo build --release` builds it).
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
    start_tabwire_with(&[]).await
}

/// The release binary over stdio with a throw-away profile, and more flags.
async fn start_tabwire_with(extra: &[String]) -> anyhow::Result<(Client, tokio::process::Child)> {
    start_binary_with(&tabwire_binary()?, extra).await
}

async fn start_binary_with(
    binary: &std::path::Path,
    extra: &[String],
) -> anyhow::Result<(Client, tokio::process::Child)> {
    let out = std::env::temp_dir().join("tabwire-bench-out");
    let mut child = tokio::process::Command::new(binary)
        .args(["--isolated", "--output-dir"])
        .arg(&out)
        .args(extra)
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
    let (envelope, chars) = call_text(client, tool, args).await?;
    if envelope["ok"] != true {
        bail!("{tool} failed: {}", envelope["error"]);
    }
    Ok((envelope["data"].clone(), chars))
}

/// A call's whole envelope, whether it succeeded or not.
async fn call_envelope(client: &Client, tool: &str, args: Value) -> anyhow::Result<Value> {
    Ok(call_text(client, tool, args).await?.0)
}

async fn call_text(client: &Client, tool: &str, args: Value) -> anyhow::Result<(Value, usize)> {
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
    Ok((serde_json::from_str(&text)?, text.len()))
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

    // What an agent does most: open a page, then read it. The first call on a new
    // document is the one that counts.
    let mut fresh_scans = Samples::default();
    for n in 0..runs {
        call(
            &client,
            "open_url",
            json!({ "url": format!("{site}/small?n={n}") }),
        )
        .await?;
        let t = Instant::now();
        call(&client, "scan_page", json!({})).await?;
        fresh_scans.push(t.elapsed());
    }
    println!(
        "\nscan_page right after open_url, small page ({runs} runs): {}",
        fresh_scans.summary()
    );
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
