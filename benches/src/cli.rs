//! `bench cli`: what a warm `tabwire call` costs beside the same call over an MCP session.
//!
//! Three calls on the small page, a read (`scan_page`), a click by the ref that read gave
//! (`page_click`) and a script (`execute_js` of `document.title`), each timed two ways:
//! a `tabwire call` process from spawn to exit, its profile's browser already up and the
//! page open (what an agent with a shell pays a step), and the same call over one
//! initialized MCP stdio session to `tabwire --headless --isolated` (rmcp's client, as the
//! other benches). The two alternate each iteration, each going first every other time,
//! so the machine's noise falls on both. The first call of each, which starts the browser,
//! is timed once. Writes docs/cli-benchmark.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::{Value, json};

use crate::mcp::{Reply, call_ok, clip};
use crate::shell::Shell;
use crate::stats::Samples;

/// The three calls: a name for the report, the tool, and its arguments (`REF` is the
/// button's ref from the side's own read).
const CALLS: [(&str, &str, &str); 3] = [
    ("scan_page (read)", "scan_page", "{}"),
    ("page_click by ref", "page_click", r#"{"selector":"REF"}"#),
    (
        "execute_js document.title",
        "execute_js",
        r#"{"script":"document.title"}"#,
    ),
];

/// One side: the command line or the MCP session, and the button's ref in its tab.
enum Side<'a> {
    Cli {
        shell: &'a Shell,
        button: String,
    },
    Mcp {
        peer: &'a Peer<RoleClient>,
        button: String,
    },
}

impl Side<'_> {
    /// One call, timed from the start of its process (or request) to its exit (or reply).
    async fn time(&self, tool: &str, args: &str) -> anyhow::Result<Duration> {
        let (Side::Cli { button, .. } | Side::Mcp { button, .. }) = self;
        let args: Value = serde_json::from_str(&args.replace("REF", button))?;
        let started = Instant::now();
        match self {
            Side::Cli { shell, .. } => shell.call(tool, &args).await.map(drop)?,
            Side::Mcp { peer, .. } => call_ok(peer, tool, args).await.map(drop)?,
        }
        Ok(started.elapsed())
    }
}

/// Everything the report says.
struct Measured {
    cli: Timings,
    mcp: Timings,
    /// `tabwire --version`, spawn to exit.
    spawn: Samples,
    runs: usize,
    /// The load average at start and end.
    load: String,
}

/// The timings of one side: per call, and the first call that started the browser.
#[derive(Default)]
struct Timings {
    calls: Vec<Samples>,
    /// The first call: the command line's first process; the MCP session's first call.
    cold: Duration,
    /// From spawn to the first call answered: the command line's first process again;
    /// the MCP server's spawn, initialize and first call.
    cold_from_spawn: Duration,
}

pub async fn run(runs: usize) -> anyhow::Result<()> {
    if !std::path::Path::new(crate::servers::CHROMIUM).exists() {
        bail!(
            "{} not found: apt-get install -y chromium",
            crate::servers::CHROMIUM
        );
    }
    let binary = crate::tabwire_binary()?;
    let scratch = std::env::temp_dir().join(format!("tabwire-bench-cli-{}", std::process::id()));
    let load_before = crate::load_average();
    let site = crate::pages::serve().await?;
    let shell = Shell::new(&binary, &scratch.join("cli"))?;
    let measured = measure(&binary, &shell, &scratch, &format!("{site}/small"), runs).await;
    // Stopped whatever happened: the broker would keep the browser up for 10 minutes.
    let stopped = shell.stop().await;
    let _ = std::fs::remove_dir_all(&scratch);
    let (cli, mcp, spawn) = measured?;
    stopped?;
    let measured = Measured {
        cli,
        mcp,
        spawn,
        runs,
        load: format!("{load_before} and {}", crate::load_average()),
    };
    let report = report(&measured, &shell, &binary, &scratch);
    let path = crate::workspace().join("docs/cli-benchmark.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    print!("{report}");
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Both sides, cold then warm, and the bare process spawn; each side's clicks are counted
/// by the page at the end, so every timed click is known to have landed. Each cold call
/// is made with no other browser up (the command line's is stopped after its first call
/// and started again for the warm runs): on two cores, a browser already up made the
/// other side's first call hundreds of milliseconds slower.
async fn measure(
    binary: &std::path::Path,
    shell: &Shell,
    scratch: &std::path::Path,
    page: &str,
    runs: usize,
) -> anyhow::Result<(Timings, Timings, Samples)> {
    let open = json!({ "url": page });
    let mut cli = Timings::default();
    cli.cold = shell.call("open_url", &open).await?.elapsed;
    cli.cold_from_spawn = cli.cold;
    eprintln!("cold: tabwire call open_url {:.0} ms", ms(cli.cold));
    shell.stop().await?;

    let (client, mut child, mut mcp) = start_mcp(binary, scratch, page).await?;
    let peer = client.peer().clone();
    shell.call("open_url", &open).await?;
    let cli_button = button_ref(&shell.call("scan_page", &json!({})).await?)?;
    let warm = async {
        let mcp_button = button_ref(&call_ok(&peer, "scan_page", json!({})).await?)?;
        let sides = [
            Side::Cli {
                shell,
                button: cli_button,
            },
            Side::Mcp {
                peer: &peer,
                button: mcp_button,
            },
        ];
        let [cli_calls, mcp_calls] = alternate(&sides, runs).await?;
        for side in &sides {
            clicks_landed(side, runs).await?;
        }
        anyhow::Ok((cli_calls, mcp_calls))
    }
    .await;
    let _ = client.cancel().await;
    crate::procs::end_tree(&mut child).await;
    (cli.calls, mcp.calls) = warm?;
    Ok((cli, mcp, spawn_alone(shell, runs).await?))
}

/// `tabwire --headless --isolated` over stdio (lean replies, as the command line's), its
/// first call opening the page; the session, the process, and the cold timings.
async fn start_mcp(
    binary: &std::path::Path,
    scratch: &std::path::Path,
    page: &str,
) -> anyhow::Result<(
    RunningService<RoleClient, ()>,
    tokio::process::Child,
    Timings,
)> {
    let spawned = Instant::now();
    let mut child = tokio::process::Command::new(binary)
        .args(mcp_flags(scratch))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| binary.display().to_string())?;
    let stdout = child.stdout.take().context("stdout")?;
    let stdin = child.stdin.take().context("stdin")?;
    let client = ().serve((stdout, stdin)).await.context("MCP initialize")?;
    let opened = call_ok(client.peer(), "open_url", json!({ "url": page })).await?;
    let timings = Timings {
        cold: opened.elapsed,
        cold_from_spawn: spawned.elapsed(),
        ..Timings::default()
    };
    eprintln!(
        "cold: MCP open_url {:.0} ms ({:.0} ms from spawn)",
        ms(timings.cold),
        ms(timings.cold_from_spawn)
    );
    Ok((client, child, timings))
}

fn mcp_flags(scratch: &std::path::Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--isolated".into(),
        format!("--browser-path={}", crate::servers::CHROMIUM),
        "--output-dir".into(),
        scratch.join("mcp-out").display().to_string(),
        "--replies".into(),
        "lean".into(),
    ]
}

/// The warm runs: each iteration makes the three calls on both sides, the side that goes
/// first alternating. Per side, per call, the samples.
async fn alternate(sides: &[Side<'_>; 2], runs: usize) -> anyhow::Result<[Vec<Samples>; 2]> {
    let mut samples: [Vec<Samples>; 2] = Default::default();
    for timings in &mut samples {
        timings.resize_with(CALLS.len(), Samples::default);
    }
    for iteration in 0..runs {
        let order = if iteration % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            for (at, (_, tool, args)) in CALLS.iter().enumerate() {
                samples[side][at].push(sides[side].time(tool, args).await?);
            }
        }
    }
    Ok(samples)
}

/// The page counted every click of the side's runs (the button counts in `window.clicks`).
async fn clicks_landed(side: &Side<'_>, runs: usize) -> anyhow::Result<()> {
    let args = json!({ "script": "String(window.clicks)" });
    let reply = match side {
        Side::Cli { shell, .. } => shell.call("execute_js", &args).await?,
        Side::Mcp { peer, .. } => call_ok(peer, "execute_js", args).await?,
    };
    if !reply.text.contains(&format!("\"{runs}\"")) {
        bail!(
            "the page did not count {runs} clicks: {}",
            clip(&reply.text, 300)
        );
    }
    Ok(())
}

/// The ref of the small page's "Go" button in a lean read: `button "Go" e1`.
fn button_ref(read: &Reply) -> anyhow::Result<String> {
    read.text
        .lines()
        .find_map(|line| line.trim().strip_prefix("button \"Go\" "))
        .and_then(|rest| rest.split_whitespace().last())
        .map(str::to_owned)
        .with_context(|| format!("no Go button in the read: {}", clip(&read.text, 600)))
}

/// `tabwire --version` from spawn to exit: what starting the binary costs alone.
async fn spawn_alone(shell: &Shell, runs: usize) -> anyhow::Result<Samples> {
    let mut samples = Samples::default();
    for _ in 0..runs {
        let ran = shell.run(&["--version"]).await?;
        if !ran.success {
            bail!("tabwire --version exited with {}", ran.status);
        }
        samples.push(ran.elapsed);
    }
    Ok(samples)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(
    measured: &Measured,
    shell: &Shell,
    binary: &std::path::Path,
    scratch: &std::path::Path,
) -> String {
    let Measured {
        cli,
        mcp,
        spawn,
        runs,
        load,
    } = measured;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# A warm `tabwire call` beside the same call over MCP\n\n\
         Written by `cargo run -p bench --release -- cli --runs {runs}` on {}: {}, built from \
         commit {}; {}.\n",
        crate::lean::today(),
        crate::output(&binary.display().to_string(), &["--version"]),
        crate::built_from(&crate::workspace()),
        crate::output(crate::servers::CHROMIUM, &["--version"]),
    );
    let _ = writeln!(
        out,
        "What one step costs an agent that drives the browser from a shell, one `tabwire \
         call` process a step, beside an agent whose MCP client keeps one session open. \
         Three calls on a small page (a heading, a \"Go\" button that counts its clicks, a \
         text field): `scan_page`, `page_click` on the button by the ref its side's read \
         gave, and `execute_js` `{{\"script\":\"document.title\"}}`.\n\n\
         - **CLI**: `tabwire call TOOL 'JSON'`, timed from spawn to exit, with the profile's \
         broker and browser already up and the page already open (the first call started \
         them). Each call connects to the broker, opens an MCP session, makes the call and \
         prints the lean reply.\n\
         - **MCP**: the same call over one initialized stdio session to `tabwire --headless \
         --isolated --replies lean` (lean, as the command line prints: the same work, only \
         the way in differs), rmcp's client, timed from request to reply.\n\n\
         {runs} iterations; each makes the three calls on both sides, the side that goes \
         first alternating, so the machine's noise falls on both. Every click is checked \
         to have landed (the page counts {runs} on each side at the end).\n\n\
         **The absolute times are noisy here**: a 2-core machine not reserved for the run \
         (load average {load} at start and end), two browsers up at once. Read the ratio \
         and the difference, which both sides share the noise of, more than the \
         milliseconds.\n"
    );
    warm_table(&mut out, cli, mcp, spawn);
    cold_table(&mut out, cli, mcp);
    let machine: Vec<String> = crate::machine()
        .into_iter()
        .map(|(what, value)| format!("- {what}: {value}"))
        .collect();
    let anonymous = |line: String| line.replace(&scratch.display().to_string(), "$SCRATCH");
    let _ = writeln!(
        out,
        "## Machine\n\n{}\n\n## Command lines\n\n\
         - CLI: `{}`\n- MCP: `{} {}`\n\n\
         ```\ncargo build --release && cargo build --release -p bench\n\
         ./target/release/bench cli              # --runs N, 30 unless said\n```",
        machine.join("\n"),
        anonymous(shell.command_line()),
        anonymous(binary.display().to_string()),
        anonymous(mcp_flags(scratch).join(" ")),
    );
    out.replace(&format!("{}/", crate::workspace().display()), "")
}

/// Warm calls: median and p90 a side, the ratio and the difference of the medians.
fn warm_table(out: &mut String, cli: &Timings, mcp: &Timings, spawn: &Samples) {
    let _ = writeln!(
        out,
        "## Warm calls (ms)\n\n\
         | call | CLI median | CLI p90 | MCP median | MCP p90 | CLI / MCP (medians) | CLI − MCP (medians) |\n\
         |---|---:|---:|---:|---:|---:|---:|"
    );
    for (at, (name, _, _)) in CALLS.iter().enumerate() {
        let (c, m) = (&cli.calls[at], &mcp.calls[at]);
        let _ = writeln!(
            out,
            "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1}× | {:+.1} |",
            c.median(),
            c.p90(),
            m.median(),
            m.p90(),
            c.median() / m.median(),
            c.median() - m.median(),
        );
    }
    let _ = writeln!(
        out,
        "\nFor scale: the CLI's command line with `--version` instead of `call` (the binary \
         started and ended, no broker, no browser) takes {:.1} ms median, {:.1} ms p90.\n",
        spawn.median(),
        spawn.p90()
    );
}

/// The first call of each side, which starts the browser: once, so one sample.
fn cold_table(out: &mut String, cli: &Timings, mcp: &Timings) {
    let _ = writeln!(
        out,
        "## Cold: the first call, which starts the browser (ms, one run)\n\n\
         Each side's first call is made with no other browser up.\n\n\
         | | `open_url` of the small page | from nothing running |\n|---|---:|---:|\n\
         | CLI: the first `tabwire call` (starts the broker and the browser) | {:.0} | {:.0} |\n\
         | MCP: the session's first call (starts the browser) | {:.0} | {:.0} (spawn, initialize, the call) |\n",
        ms(cli.cold),
        ms(cli.cold_from_spawn),
        ms(mcp.cold),
        ms(mcp.cold_from_spawn),
    );
}
