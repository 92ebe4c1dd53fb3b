//! `docs/benchmarks.md` and `docs/benchmark-ratios.svg` from a `peers` run.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

use crate::peers::Results;
use crate::servers::{KINDS, Kind};

#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Ms,
    Count,
    KiB,
    PerSec,
}

#[derive(Clone, Copy, PartialEq)]
enum Goal {
    None,
    /// tabwire's median ≤ this × the best peer's.
    BestPeer(f64),
    /// tabwire's median ≤ this × Playwright MCP's.
    Playwright(f64),
}

struct Row {
    section: &'static str,
    label: String,
    /// tabwire's metric.
    key: String,
    /// The peers' metric (the same unless tabwire's is a variant).
    peer_key: String,
    unit: Unit,
    goal: Goal,
    higher_is_better: bool,
}

fn row(section: &'static str, label: &str, key: &str, unit: Unit, goal: Goal) -> Row {
    Row {
        section,
        label: label.into(),
        key: key.into(),
        peer_key: key.into(),
        unit,
        goal,
        higher_is_better: false,
    }
}

fn rows(agents: &[usize]) -> Vec<Row> {
    let half = Goal::BestPeer(0.5);
    let mut rows = vec![
        row(
            "Latency (median, p10–p90)",
            "cold start: spawn → first navigation done",
            "cold",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "navigate (small page)",
            "navigate",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "snapshot, small page",
            "snapshot_small",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "snapshot, small page, 200 ms after its navigation (the page settled)",
            "snapshot_settled",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "navigate, then snapshot at once (the pair, summed)",
            "navigate_snapshot",
            Unit::Ms,
            Goal::None,
        ),
        row(
            "Latency (median, p10–p90)",
            "snapshot, 10,000-element page",
            "snapshot_big",
            Unit::Ms,
            half,
        ),
        Row {
            peer_key: "snapshot_big".into(),
            ..row(
                "Latency (median, p10–p90)",
                "snapshot, 10,000-element page, tabwire complete (no collapsing, 200 targets)",
                "snapshot_big_complete",
                Unit::Ms,
                half,
            )
        },
        row(
            "Latency (median, p10–p90)",
            "click (handle from the snapshot)",
            "click",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "type into a field",
            "type",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "screenshot (viewport)",
            "screenshot",
            Unit::Ms,
            half,
        ),
        row(
            "Latency (median, p10–p90)",
            "evaluate a JS expression",
            "evaluate",
            Unit::Ms,
            half,
        ),
    ];
    let size = "Reply size (characters of text content; tokens: o200k_base)";
    for (label, op) in [
        ("navigate", "navigate"),
        ("snapshot, small page", "snapshot_small"),
        ("snapshot, 10,000-element page", "snapshot_big"),
        ("click", "click"),
        ("type", "type"),
        ("screenshot (text part)", "screenshot"),
        ("evaluate", "evaluate"),
    ] {
        let goal = if op == "snapshot_big" {
            Goal::Playwright(0.6)
        } else {
            Goal::None
        };
        rows.push(row(
            size,
            &format!("{label}: characters"),
            &format!("chars:{op}"),
            Unit::Count,
            goal,
        ));
        rows.push(row(
            size,
            &format!("{label}: tokens"),
            &format!("tokens:{op}"),
            Unit::Count,
            Goal::None,
        ));
        if op == "snapshot_big" {
            for (what, prefix, goal) in [
                ("characters", "chars", Goal::Playwright(0.6)),
                ("tokens", "tokens", Goal::None),
            ] {
                rows.push(Row {
                    peer_key: format!("{prefix}:snapshot_big"),
                    ..row(
                        size,
                        &format!("snapshot, 10,000-element page, tabwire complete: {what}"),
                        &format!("{prefix}:snapshot_big_complete"),
                        Unit::Count,
                        goal,
                    )
                });
            }
        }
    }
    rows.push(row(
        size,
        "screenshot image (base64 characters, not text tokens)",
        "image:screenshot",
        Unit::Count,
        Goal::None,
    ));
    let tools = "tools/list";
    rows.push(row(
        tools,
        "tools/list: tools",
        "tools_count",
        Unit::Count,
        Goal::None,
    ));
    rows.push(row(
        tools,
        "tools/list: bytes (JSON)",
        "tools_bytes",
        Unit::Count,
        Goal::None,
    ));
    rows.push(row(
        tools,
        "tools/list: bytes per tool",
        "tools_bytes_per_tool",
        Unit::Count,
        Goal::BestPeer(1.0),
    ));
    rows.push(row(
        tools,
        "tools/list: tokens",
        "tools_tokens",
        Unit::Count,
        Goal::None,
    ));
    let memory = "Peak memory (one agent, one run)";
    rows.push(row(
        memory,
        "server memory (VmHWM of the server process, without the browser)",
        "mem_server",
        Unit::KiB,
        Goal::BestPeer(0.25),
    ));
    rows.push(row(
        memory,
        "browser memory (peak of PSS summed over its processes)",
        "mem_browser",
        Unit::KiB,
        Goal::None,
    ));
    let many = "N agents at once, each on its own tab (click + read per iteration)";
    for &n in agents {
        rows.push(row(
            many,
            &format!("N={n}: iteration latency"),
            &format!("agents{n}"),
            Unit::Ms,
            half,
        ));
        rows.push(Row {
            higher_is_better: true,
            ..row(
                many,
                &format!("N={n}: iterations per second"),
                &format!("agents{n}_throughput"),
                Unit::PerSec,
                Goal::None,
            )
        });
        rows.push(row(
            many,
            &format!("N={n}: server memory"),
            &format!("agents{n}_mem_server"),
            Unit::KiB,
            Goal::None,
        ));
        rows.push(row(
            many,
            &format!("N={n}: browser memory"),
            &format!("agents{n}_mem_browser"),
            Unit::KiB,
            Goal::None,
        ));
    }
    rows
}

fn percentile(values: &[f64], p: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[(p * (sorted.len() - 1) as f64).round() as usize]
}

fn median(values: &[f64]) -> f64 {
    percentile(values, 0.5)
}

fn fmt_value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Ms if v >= 100.0 => format!("{v:.0} ms"),
        Unit::Ms => format!("{v:.1} ms"),
        Unit::Count => thousands(v.round() as u64),
        Unit::KiB => format!("{:.1} MiB", v / 1024.0),
        Unit::PerSec => format!("{v:.1}/s"),
    }
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A cell: median, and the p10–p90 spread when samples vary.
fn cell(unit: Unit, values: Option<&Vec<f64>>) -> String {
    let Some(values) = values else {
        return "n/a".into();
    };
    let m = fmt_value(unit, median(values));
    let (lo, hi) = (percentile(values, 0.1), percentile(values, 0.9));
    if values.len() > 2 && (hi - lo).abs() > f64::EPSILON && unit != Unit::Count {
        let strip = |s: String| {
            s.trim_end_matches(" ms")
                .trim_end_matches(" MiB")
                .to_owned()
        };
        format!(
            "{m} ({}–{})",
            strip(fmt_value(unit, lo)),
            strip(fmt_value(unit, hi))
        )
    } else {
        m
    }
}

/// The outcome of one row: tabwire's median over the reference peer's, and the verdict.
struct Verdict {
    ratio: Option<f64>,
    reference: Option<Kind>,
    met: Option<bool>,
}

fn verdict(results: &Results, row: &Row) -> Verdict {
    let ours = results.get(Kind::Tabwire, &row.key).map(|v| median(v));
    let peers: Vec<(Kind, f64)> = KINDS[1..]
        .iter()
        .filter_map(|&k| results.get(k, &row.peer_key).map(|v| (k, median(v))))
        .collect();
    let reference = match row.goal {
        Goal::Playwright(_) => peers.iter().find(|(k, _)| *k == Kind::Playwright).copied(),
        _ if row.higher_is_better => peers.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)),
        _ => peers.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1)),
    };
    let ratio = match (ours, reference) {
        (Some(o), Some((_, r))) if r > 0.0 => Some(o / r),
        _ => None,
    };
    let met = match (row.goal, ratio) {
        (Goal::BestPeer(limit) | Goal::Playwright(limit), Some(r)) => Some(r <= limit),
        _ => None,
    };
    Verdict {
        ratio,
        reference: reference.map(|(k, _)| k),
        met,
    }
}

/// A goal met within 10% of its limit.
fn close_call(row: &Row, v: &Verdict) -> bool {
    match (row.goal, v.ratio) {
        (Goal::BestPeer(l) | Goal::Playwright(l), Some(r)) => r <= l && r > 0.9 * l,
        _ => false,
    }
}

fn goal_text(row: &Row) -> String {
    match row.goal {
        Goal::None => String::new(),
        Goal::BestPeer(1.0) => "≤ smallest".into(),
        Goal::BestPeer(l) => format!("≤ {l}× best"),
        Goal::Playwright(l) => format!("≤ {l}× Playwright"),
    }
}

/// What the report says about the run besides its results (saved with them).
pub struct Context {
    pub date: String,
    pub command: String,
    pub machine: Vec<(String, String)>,
    pub versions: Vec<(String, String)>,
    pub commands: Vec<(String, String)>,
    pub runs: usize,
    pub inner: usize,
    pub loops: usize,
    pub agents: Vec<usize>,
    pub wall_secs: f64,
    pub fidelity: Option<(Value, String)>,
}

impl Context {
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "date": self.date,
            "command": self.command,
            "machine": self.machine,
            "versions": self.versions,
            "commands": self.commands,
            "runs": self.runs,
            "inner": self.inner,
            "loops": self.loops,
            "agents": self.agents,
            "wall_secs": self.wall_secs,
        })
    }

    pub fn from_json(v: &Value, fidelity: Option<(Value, String)>) -> Context {
        let pairs = |key: &str| -> Vec<(String, String)> {
            v[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    let s = |i: usize| p[i].as_str().unwrap_or_default().to_owned();
                    (s(0), s(1))
                })
                .collect()
        };
        let n = |key: &str| v[key].as_u64().unwrap_or(0) as usize;
        Context {
            date: v["date"].as_str().unwrap_or_default().into(),
            command: v["command"].as_str().unwrap_or_default().into(),
            machine: pairs("machine"),
            versions: pairs("versions"),
            commands: pairs("commands"),
            runs: n("runs"),
            inner: n("inner"),
            loops: n("loops"),
            agents: v["agents"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_u64().map(|a| a as usize))
                .collect(),
            wall_secs: v["wall_secs"].as_f64().unwrap_or(0.0),
            fidelity,
        }
    }
}

pub fn write(dir: &Path, results: &Results, ctx: &Context) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let rows = rows(&ctx.agents);
    let mut md = String::new();
    let w = &mut md;
    writeln!(
        w,
        "# Benchmarks: tabwire side by side with Playwright MCP and Chrome DevTools MCP\n"
    )?;
    writeln!(
        w,
        "Generated by `{}` on {} ({:.0} s). Re-run it rather than editing this file. Every \
         number below comes from that one run: the same pages, served on loopback, driven \
         through the same MCP client (rmcp's, in `benches/`), the three servers taking turns \
         (tabwire, Playwright MCP, Chrome DevTools MCP, then again) so that drift hits all alike.\n",
        ctx.command, ctx.date, ctx.wall_secs
    )?;

    writeln!(w, "## Goals\n")?;
    writeln!(
        w,
        "Each goal is a ratio to the best peer measured in the same run (lower is better).\n"
    )?;
    writeln!(
        w,
        "\"Narrowly\" means within 10% of the limit: run-to-run spread can put it on either side.\n"
    )?;
    writeln!(w, "| goal | row | tabwire ÷ reference | reference | met |")?;
    writeln!(w, "| --- | --- | ---: | --- | :---: |")?;
    for r in rows.iter().filter(|r| r.goal != Goal::None) {
        let v = verdict(results, r);
        writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            goal_text(r),
            r.label,
            v.ratio.map_or("n/a".into(), |x| format!("{x:.2}×")),
            v.reference.map_or("n/a", |k| k.label()),
            match (v.met, close_call(r, &v)) {
                (Some(true), true) => "yes, narrowly",
                (Some(true), false) => "yes",
                (Some(false), _) => "**no**",
                (None, _) => "n/a",
            }
        )?;
    }

    let missed: Vec<&Row> = rows
        .iter()
        .filter(|r| verdict(results, r).met == Some(false))
        .collect();
    if !missed.is_empty() {
        writeln!(
            w,
            "\nGoals missed in this run, and what limits each (analysis, not measured here):\n"
        )?;
        for r in missed {
            writeln!(w, "- **{}**: {}", r.label, miss_note(&r.key))?;
        }
    }

    writeln!(w, "\n## Results\n")?;
    writeln!(
        w,
        "Medians with the 10th–90th percentile in brackets. Latencies: {} runs per server, \
         each a fresh server process and browser; inside each run every warm operation is \
         done {} times (so {} samples per operation; cold start and memory: one per run). \
         \"÷ best peer\" is tabwire's median over the better of the two peers (for \
         iterations per second, higher is better and the ratio is tabwire over the faster \
         peer).\n",
        ctx.runs,
        ctx.inner,
        ctx.runs * ctx.inner
    )?;
    let mut section = "";
    for r in &rows {
        if r.section != section {
            section = r.section;
            writeln!(w, "\n### {section}\n")?;
            writeln!(
                w,
                "| | tabwire | Playwright MCP | Chrome DevTools MCP | ÷ best peer | goal |"
            )?;
            writeln!(w, "| --- | ---: | ---: | ---: | ---: | --- |")?;
        }
        let v = verdict(results, r);
        let mut cells = vec![cell(r.unit, results.get(Kind::Tabwire, &r.key))];
        for k in &KINDS[1..] {
            let mut c = cell(r.unit, results.get(*k, &r.peer_key));
            if c == "n/a"
                && let Some(note) = results
                    .notes
                    .get(&(*k, r.key.split('_').next().unwrap_or("").to_owned()))
            {
                c = format!("n/a ({})", short(note));
            }
            cells.push(c);
        }
        let goal = match (v.met, goal_text(r)) {
            (_, g) if g.is_empty() => String::new(),
            (Some(true), g) if close_call(r, &v) => format!("{g}: met, narrowly"),
            (Some(true), g) => format!("{g}: met"),
            (Some(false), g) => format!("{g}: **missed**"),
            (None, g) => format!("{g}: n/a"),
        };
        writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} |",
            r.label,
            cells[0],
            cells[1],
            cells[2],
            v.ratio.map_or("n/a".into(), |x| format!("{x:.2}×")),
            goal
        )?;
    }
    writeln!(
        w,
        "\n![tabwire ÷ best peer, per row](benchmark-ratios.svg)\n"
    )?;

    let errors: Vec<String> = results
        .notes
        .iter()
        .filter(|((_, key), _)| key == "errors" || key.starts_with("agents"))
        .map(|((k, key), note)| format!("- {} ({key}): {}", k.label(), short(note)))
        .collect();
    if !errors.is_empty() {
        writeln!(
            w,
            "Failures and rows a server could not do:\n\n{}\n",
            errors.join("\n")
        )?;
    }

    chrome_face_section(w, results)?;
    fidelity_section(w, ctx)?;

    writeln!(w, "## How it was measured\n")?;
    writeln!(w, "Machine:\n")?;
    for (k, v) in &ctx.machine {
        writeln!(w, "- {k}: {v}")?;
    }
    writeln!(w, "\nVersions:\n")?;
    for (k, v) in &ctx.versions {
        writeln!(w, "- {k}: {v}")?;
    }
    writeln!(
        w,
        "\nServers, exactly as started (one agent; the N-agent rows start them again as noted below):\n"
    )?;
    for (k, v) in &ctx.commands {
        writeln!(w, "- {k}: `{v}`")?;
    }
    writeln!(w, "\n{}", METHOD.replace("{loops}", &ctx.loops.to_string()))?;
    std::fs::write(dir.join("benchmarks.md"), md)?;
    let raw = serde_json::json!({ "context": ctx.to_json(), "results": results.to_json() });
    std::fs::write(
        dir.join("benchmark-results.json"),
        serde_json::to_string(&raw)? + "\n",
    )?;
    std::fs::write(dir.join("benchmark-ratios.svg"), svg(results, &rows))?;
    Ok(())
}

/// Why a goal can be missed: what the time or size is spent on.
fn miss_note(key: &str) -> &'static str {
    match key {
        "snapshot_small" => {
            "this snapshot is asked for the instant the navigation returns, while the page's \
             main thread is still busy with the load: any first call to the page waits for it \
             (`docs/latency-floor.md`: Chromium's accessibility tree read takes three to four \
             times longer then than a moment later). tabwire's read then waits for its isolated \
             world and page script, which the navigation starts making in the background. \
             Chrome DevTools MCP's navigation waits for 100 ms of DOM quiet before it returns \
             (its navigate row pays for that), so its snapshot meets a settled page; the next \
             row compares the two on equal terms."
        }
        "snapshot_settled" => {
            "every server meets a settled page here. The first call after a pause pays for the \
             page's main thread waking up and for the first run of the scan's code in that \
             document; Chrome DevTools MCP's read of the accessibility tree costs about as much \
             on raw CDP as tabwire's scan, so neither can take half the other's time. \
             `docs/latency-floor.md` has both beside raw CDP."
        }
        "screenshot" => {
            "a capture waits for Chromium's next frame (60 Hz: up to one frame, half a frame on \
             average), then copies and encodes it; all three servers call the same \
             Page.captureScreenshot. Drawing frames without the 60 Hz limit \
             (`--disable-frame-rate-limit`) would cut it to about 10 ms, but then an animated \
             page draws as fast as the CPU allows (one CSS spinner: 1,200 frames a second, 1.7 \
             cores, in a test on this machine), so tabwire does not. It asks for Chromium's \
             fastest encoding (`optimizeForSpeed`); `docs/latency-floor.md` has raw CDP doing \
             the same."
        }
        "cold" => {
            "most of it is Chromium starting (all three launch the same binary) and its first \
             navigation; what is left to the server is a small share, so the ratio moves from \
             run to run."
        }
        "navigate" => {
            "most of it is Chromium itself: a bare CDP client (Page.navigate, then the load \
             event) takes about 30–35 ms for this page on this machine, about 0.4× Playwright \
             MCP's median before any server work. That leaves tabwire about 10 ms of its own \
             for 0.5×; it spends about that, so the goal lands on either side of the line from \
             run to run."
        }
        _ => "see the row's numbers above.",
    }
}

fn short(note: &str) -> String {
    crate::mcp::clip(&note.replace(['\n', '|'], " "), 220)
}

const GAPS: &str =
    "Known gaps outside the corpus (from reading the page script, not measured above):

- **More than 200 named controls on one page or frame:** one reply lists at most 200
  (`max_targets`); the rest are read through the `continuation.cursor` it names (the
  `list/500` figure above).
- **Closed shadow roots:** the page script sees open shadow roots only; Chromium's tree
  includes controls inside closed ones, so those are missing.
- **Names over 160 characters** are clipped in targets (as BrowserTap clips them), so they
  do not match Chromium's full name.
- **Date and time sub-fields** are listed by Chromium's names but take no locator of their
  own: the value is typed whole into the input (`yyyy-mm-dd` and so on), not field by field.
- **Drop-down `<select>` options** are not targets, and the btap face has no tool that
  selects one (a select's target says `recommended_tool: null`, `reason:
  select_existing_option`, as BrowserTap's does).
- **Content outside an open modal dialog** is still listed, flagged `inert` with no
  recommended tool; Chromium's tree hides it (the modal page's precision above).
- **Accessible names** follow a practical subset of the accname rules; cases outside the
  corpus (CSS `counter()`/`attr()` in generated content, `aria-owns`, `aria-labelledby`
  inside a name being computed, roles whose names Chromium builds specially) can differ.
";

const METHOD: &str = "What each row means:

- **Pages.** `/small`: a heading, a button that counts its clicks, a labelled text field.
  `/big`: 1,500 table rows with an Edit button each and 800 links (about 10,600 elements), the
  shape of an admin or search-results page; it is the page `bench page` has always used.
- **Handles.** Each server's own snapshot of `/small` gives the handle for the click and
  the typing, found by role and name the way an agent reads it: Playwright MCP's `ref`,
  Chrome DevTools MCP's `uid`, tabwire's `observation.targets[].locator`. Each click is
  checked on the page (`window.clicks`), each typed value read back.
- **Operations.** navigate: `browser_navigate` / `navigate_page` / `open_url`. snapshot:
  `browser_snapshot` / `take_snapshot` / `scan_page`, default arguments. click:
  `browser_click` / `click` / `page_click`. type: `browser_type` / `fill` / `page_type`.
  screenshot: `browser_take_screenshot` / `take_screenshot` / `capture_page_screenshot`.
  evaluate: `browser_evaluate` / `evaluate_script` / `execute_js`. Latency is the MCP round
  trip as our client sees it. Cold start runs from spawning the server process to the
  first navigation's reply (MCP handshake and browser launch included).
- **Order and pauses.** In each iteration: navigate, snapshot at once, click, type,
  evaluate, screenshot, each call as soon as the last returned, except that before the
  screenshot every server pauses the same fraction of a 60 Hz frame (a different one each
  iteration: a capture waits for Chromium's next frame, and back-to-back calls would
  otherwise meet the frame clock at the same phase each time, one server always early,
  another always late). Then a second navigation, a 200 ms pause (an agent's turn is
  longer), and the settled snapshot. The row `navigate, then snapshot` sums the first pair.
- **tabwire complete snapshot.** `scan_page {cutlist: false, maxchars: 2000000,
  max_targets: 200}`: nothing collapsed, the most targets the tool lists. The default
  snapshot collapses runs of similar items (announcing each with a selector) and lists at
  most 80 targets; the peers list everything. Both are shown; the character goal is judged
  on both.
- **Sizes.** Characters of the reply's text content (what the model reads), and tokens
  of the same text with the o200k_base vocabulary (tiktoken-rs, offline). Image content is
  not text; its base64 length is shown on its own row. `tools/list`: the tool list as
  JSON, re-serialized compactly by our client.
- **Memory.** Server: the peak resident set (`VmHWM` in `/proc/<pid>/status`) of the
  server process (and any helper process it starts that is not the browser) at the end of
  a run. Browser: the sum of PSS (`/proc/<pid>/smaps_rollup`) over the browser's
  processes, sampled every 200 ms during the run, peak kept. PSS splits shared pages
  between the processes sharing them, so the sum counts each page once.
- **N agents.** One fresh server per (N, server). Each agent opens `/small` in its own tab,
  then runs {loops} iterations of click-then-read (read = evaluate `window.clicks`, checked
  against the iteration number, so a click landing on another agent's tab fails the row).
  Iteration latency is what the agent sees, waiting included; iterations per second is
  N × {loops} over the wall time. tabwire: one `tabwire --http 127.0.0.1:0` and one MCP
  session per agent (each session has its own tab). Chrome DevTools MCP: one stdio client,
  started without `--no-page-id-routing` (page-id routing is its own default and what it
  offers for concurrent agents), one `new_page` per agent, every call addressed by
  `pageId`, calls sent concurrently. Playwright MCP: one stdio client; its tools act on
  the current tab only, so each iteration is `browser_tabs select` + click + evaluate
  while holding the client, serialized by the harness (otherwise agents click each
  other's tabs).
";

/// tabwire's chrome face (the Chrome MCP Server's tools) beside Chrome DevTools MCP, the
/// peer whose snapshot it is measured against: the same operations, the same pages.
fn chrome_face_section(w: &mut String, results: &Results) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let ours = Kind::TabwireChrome;
    if results.get(ours, "navigate").is_none() {
        return Ok(());
    }
    writeln!(w, "\n### The chrome face\n")?;
    writeln!(
        w,
        "`tabwire --face chrome` doing the same work with the Chrome MCP Server's tools \
         (`chrome_read_page` for the snapshot, refs for the click and the fill). Goal: the \
         snapshot at most 0.6× the characters of Chrome DevTools MCP's `take_snapshot`.\n"
    )?;
    writeln!(
        w,
        "| | tabwire --face chrome | tabwire (btap) | Chrome DevTools MCP | ÷ DevTools MCP |"
    )?;
    writeln!(w, "| --- | ---: | ---: | ---: | ---: |")?;
    let rows: &[(&str, &str, Unit)] = &[
        (
            "snapshot, small page (chars)",
            "chars:snapshot_small",
            Unit::Count,
        ),
        (
            "snapshot, 10,000-element page (chars)",
            "chars:snapshot_big",
            Unit::Count,
        ),
        (
            "whole-page snapshot, 10,000 elements (chars)",
            "chars:snapshot_big_complete",
            Unit::Count,
        ),
        ("snapshot, small page (ms)", "snapshot_small", Unit::Ms),
        (
            "snapshot, 10,000-element page (ms)",
            "snapshot_big",
            Unit::Ms,
        ),
        ("navigate (ms)", "navigate", Unit::Ms),
        ("click (ms)", "click", Unit::Ms),
        ("fill (ms)", "type", Unit::Ms),
        ("screenshot (ms)", "screenshot", Unit::Ms),
    ];
    for (label, key, unit) in rows {
        let peer_key = if *key == "chars:snapshot_big_complete" {
            "chars:snapshot_big"
        } else {
            key
        };
        let chrome = results.get(ours, key);
        let devtools = results.get(Kind::DevTools, peer_key);
        let ratio = match (chrome, devtools) {
            (Some(a), Some(b)) if median(b) > 0.0 => format!("{:.2}×", median(a) / median(b)),
            _ => "n/a".into(),
        };
        writeln!(
            w,
            "| {label} | {} | {} | {} | {ratio} |",
            cell(*unit, chrome),
            cell(*unit, results.get(Kind::Tabwire, key)),
            cell(*unit, devtools),
        )?;
    }
    writeln!(
        w,
        "\nThe fidelity corpus (`tests/pages/corpus`), each page whole: the chrome face's \
         `chrome_read_page {{viewportOnly: false}}` beside each server's default snapshot \
         (characters of the reply).\n"
    )?;
    writeln!(
        w,
        "| page | tabwire --face chrome | tabwire (btap) | Playwright MCP | Chrome DevTools MCP | chrome ÷ DevTools MCP |"
    )?;
    writeln!(w, "| --- | ---: | ---: | ---: | ---: | ---: |")?;
    let mut totals = [0.0f64; 4];
    for page in crate::pages::CORPUS {
        let key = format!("chars:corpus:{page}");
        let value = |kind: Kind| results.get(kind, &key).map(|v| median(v));
        let cells = [
            Kind::TabwireChrome,
            Kind::Tabwire,
            Kind::Playwright,
            Kind::DevTools,
        ]
        .map(value);
        for (total, cell) in totals.iter_mut().zip(cells) {
            *total += cell.unwrap_or(0.0);
        }
        let shown = |v: Option<f64>| v.map_or("n/a".into(), |v| thousands(v as u64));
        let ratio = match (cells[0], cells[3]) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "n/a".into(),
        };
        writeln!(
            w,
            "| {} | {} | {} | {} | {} | {ratio} |",
            page.trim_end_matches(".html"),
            shown(cells[0]),
            shown(cells[1]),
            shown(cells[2]),
            shown(cells[3])
        )?;
    }
    let ratio = if totals[3] > 0.0 {
        format!("{:.2}×", totals[0] / totals[3])
    } else {
        "n/a".into()
    };
    writeln!(
        w,
        "| **total** | {} | {} | {} | {} | {ratio} |\n",
        thousands(totals[0] as u64),
        thousands(totals[1] as u64),
        thousands(totals[2] as u64),
        thousands(totals[3] as u64)
    )?;
    real_pages_table(w, results)
}

/// The same on real pages nobody here wrote, with tabwire's complete scan (every control
/// listed, nothing collapsed) beside its default one.
fn real_pages_table(w: &mut String, results: &Results) -> anyhow::Result<()> {
    let kinds = [
        Kind::TabwireChrome,
        Kind::Tabwire,
        Kind::Playwright,
        Kind::DevTools,
    ];
    let key = |page: &str| format!("chars:real:{page}");
    if results
        .get(Kind::DevTools, &key(crate::pages::REAL[0]))
        .is_none()
    {
        writeln!(
            w,
            "Real pages (documentation from Debian packages) were not measured in this run: \
             `scripts/fetch-search-corpus.sh` fetches them with `apt-get download`.\n"
        )?;
        return Ok(());
    }
    writeln!(
        w,
        "Real pages nobody here wrote (documentation from Debian packages, fetched by \
         `scripts/fetch-search-corpus.sh`), each whole: the chrome face's whole read, the btap \
         face's default and complete scans (`cutlist: false`, `max_targets: 200`, no character \
         budget), each peer's snapshot (characters of the reply).\n"
    )?;
    writeln!(
        w,
        "| page | tabwire --face chrome | tabwire (btap) default | tabwire (btap) complete | Playwright MCP | Chrome DevTools MCP | chrome ÷ DevTools MCP | btap complete ÷ DevTools MCP |"
    )?;
    writeln!(
        w,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )?;
    let mut totals = [0.0f64; 5];
    let shown = |v: f64| thousands(v as u64);
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            format!("{:.2}×", a / b)
        } else {
            "n/a".into()
        }
    };
    for page in crate::pages::REAL {
        let got = |kind: Kind, key: &str| results.get(kind, key).map_or(0.0, |v| median(v));
        let cells = kinds.map(|kind| got(kind, &key(page)));
        let complete = got(Kind::Tabwire, &format!("chars:real-complete:{page}"));
        let row = [cells[0], cells[1], complete, cells[2], cells[3]];
        for (total, cell) in totals.iter_mut().zip(row) {
            *total += cell;
        }
        writeln!(
            w,
            "| {page} | {} | {} | {} | {} | {} | {} | {} |",
            shown(row[0]),
            shown(row[1]),
            shown(row[2]),
            shown(row[3]),
            shown(row[4]),
            ratio(row[0], row[4]),
            ratio(row[2], row[4]),
        )?;
    }
    writeln!(
        w,
        "| **total** | {} | {} | {} | {} | {} | {} | {} |\n",
        shown(totals[0]),
        shown(totals[1]),
        shown(totals[2]),
        shown(totals[3]),
        shown(totals[4]),
        ratio(totals[0], totals[4]),
        ratio(totals[2], totals[4]),
    )?;
    Ok(())
}

fn fidelity_section(w: &mut String, ctx: &Context) -> anyhow::Result<()> {
    writeln!(w, "## Snapshot fidelity\n")?;
    let Some((report, stamp)) = &ctx.fidelity else {
        writeln!(
            w,
            "Not available: run `cargo nextest run -p tabwire -E 'test(fidelity)'` (part of \
             `./scripts/test.sh`), which writes `target/fidelity-report.json`, then this \
             benchmark again.\n"
        )?;
        return Ok(());
    };
    writeln!(
        w,
        "From the end-to-end test `tests/e2e/fidelity.rs` (its `target/fidelity-report.json`, \
         written {stamp}; {}), copied here by the benchmark. For every page of the corpus \
         (`tests/pages/corpus`: forms, tables, menus, dialogs, a modal, shadow DOM, same-site and \
         cross-site iframes, ARIA widgets, tricky names, date and time inputs, a long list; and \
         real documentation pages from Debian packages, the rows after `long-list`: \
         `scripts/test.sh` fetches and checks six, and the run copied here may have had more, \
         `TABWIRE_FIDELITY_EXTRA=target/search-corpus/pages` checking all of \
         `scripts/fetch-search-corpus.sh`'s 47), Chromium's own \
         accessibility tree (`Accessibility.getFullAXTree`, each frame) lists the controls with \
         an interactive role and a non-empty name. A control counts as matched when `scan_page` \
         lists a target with the same role and name (whitespace collapsed) and that target's \
         locator, passed unchanged to `page_click`, puts the click on that very element (the \
         page logs each click's composed path; the test asks Chromium whether the AX node's own \
         DOM node is on it). Disabled controls cannot take clicks: they must be listed and \
         marked disabled. The sub-fields Chromium draws inside a date or time input (month, \
         day, year, hours…, the picker's button) live in a shadow tree of its own that no \
         page-level locator reaches: one counts as matched when the snapshot lists it under \
         its input and a value typed through the input's locator (`page_type`) lands in that \
         input. Precision: targets paired with such a control, over targets listed (the \
         date, time and colour inputs themselves have roles of Chromium's own, not counted \
         as interactive, so they lower it; so do the elements BrowserTap's scan lists for \
         any `role`, `tabindex` or `onclick`, landmarks and groups among them, which \
         tabwire lists as BrowserTap does).\n",
        report["chromium"].as_str().unwrap_or("Chromium")
    )?;
    writeln!(
        w,
        "| page | named controls | matched | recall | precision | default snapshot: listed | collapsed (announced) | of those listed, reached through the cursor |"
    )?;
    writeln!(
        w,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    )?;
    let line = |r: &Value| {
        format!(
            "| {} | {} | {} | {:.1}% | {:.1}% | {} | {} | {} |",
            r["page"].as_str().unwrap_or(""),
            r["controls"],
            r["matched"],
            r["recall"].as_f64().unwrap_or(0.0) * 100.0,
            r["precision"].as_f64().unwrap_or(0.0) * 100.0,
            r["default_listed"],
            r["default_collapsed"],
            r["default_beyond_cap"]
        )
    };
    for page in report["pages"].as_array().into_iter().flatten() {
        writeln!(w, "{}", line(page))?;
    }
    writeln!(
        w,
        "| **total** |{}",
        line(&report["total"])
            .split_once('|')
            .map(|x| x.1)
            .unwrap_or("")
            .split_once('|')
            .map(|x| x.1)
            .unwrap_or("")
    )?;
    writeln!(
        w,
        "\nRecall and precision are for the complete snapshot (`cutlist: false`, \
         `max_targets: 200`, each frame scanned through `frame`). The default snapshot lists \
         fewer: it collapses long runs of similar items and caps targets at 80, and says so \
         (`cutlist` entries with a selector matching every collapsed item; \
         `observation.truncated`); the test fails if it leaves out any control without saying \
         so. Options of drop-down `<select>`s ({} of {} shown as `<option>` inside their \
         select) are chosen through the select, not clicked, and are not counted above.\n",
        report["dropdown_shown"], report["dropdown_options"]
    )?;
    for beyond in report["beyond_the_corpus"].as_array().into_iter().flatten() {
        writeln!(
            w,
            "Beyond the corpus (asserted too): `{}`, a result list of 500 items, has {} named \
             controls; the complete snapshot, read on through the `continuation.cursor` each \
             reply of at most 200 targets names, lists {} of them.\n",
            beyond["page"].as_str().unwrap_or(""),
            beyond["controls"],
            beyond["listed"]
        )?;
    }
    writeln!(w, "{GAPS}")?;
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !notes.is_empty() {
        writeln!(
            w,
            "Targets listed that are not named controls in Chromium's tree:\n"
        )?;
        for n in notes {
            writeln!(w, "- {n}")?;
        }
        writeln!(w)?;
    }
    Ok(())
}

/// A bar per row with a ratio: tabwire ÷ best peer on a log scale (left of 1 is better;
/// for rows where higher is better the ratio is inverted so left is still better).
fn svg(results: &Results, rows: &[Row]) -> String {
    let items: Vec<(String, f64, Option<bool>, Option<f64>)> = rows
        .iter()
        .filter_map(|r| {
            let v = verdict(results, r);
            let ratio = v.ratio?;
            let shown = if r.higher_is_better {
                1.0 / ratio
            } else {
                ratio
            };
            let limit = match r.goal {
                Goal::BestPeer(l) | Goal::Playwright(l) => Some(l),
                Goal::None => None,
            };
            let label = if r.higher_is_better {
                format!("{} (inverted)", r.label)
            } else if matches!(r.goal, Goal::Playwright(_)) {
                format!("{} (÷ Playwright MCP)", r.label)
            } else {
                r.label.clone()
            };
            Some((label, shown, v.met, limit))
        })
        .collect();
    let (left, width, bar_h, top) = (430.0, 420.0, 16.0, 50.0);
    let height = top + items.len() as f64 * (bar_h + 6.0) + 40.0;
    let (lo, hi) = (-6.0f64, 3.0f64); // log2 range: 1/64 … 8
    let x = |ratio: f64| left + (ratio.log2().clamp(lo, hi) - lo) / (hi - lo) * width;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{height:.0}\" font-family=\"sans-serif\" font-size=\"11\">",
        left + width + 70.0
    );
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">tabwire ÷ best peer (log scale; left of 1× is better)</text>"
    );
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"36\" fill=\"#555\">green: goal met · red: goal missed · grey: no goal · tick: the goal</text>"
    );
    for p in lo as i32..=hi as i32 {
        let r = 2f64.powi(p);
        let xx = x(r);
        let label = if p < 0 {
            format!("1/{}", 1 << -p)
        } else {
            format!("{}×", 1 << p)
        };
        let _ = writeln!(
            s,
            "<line x1=\"{xx:.1}\" y1=\"{top}\" x2=\"{xx:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"{}\"/>\
             <text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{label}</text>",
            height - 30.0,
            if p == 0 { "#000" } else { "#ddd" },
            if p == 0 { 1.5 } else { 1.0 },
            height - 16.0
        );
    }
    for (i, (label, ratio, met, limit)) in items.iter().enumerate() {
        let y = top + 4.0 + i as f64 * (bar_h + 6.0);
        let (x1, x0) = (x(*ratio), x(1.0));
        let color = match met {
            Some(true) => "#2e9e4f",
            Some(false) => "#d64541",
            None => "#9aa0a6",
        };
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bar_h}\" fill=\"{color}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{ratio:.2}×</text>",
            left - 6.0,
            y + 12.0,
            escape(label),
            x0.min(x1),
            (x1 - x0).abs().max(1.0),
            x0.max(x1) + 4.0,
            y + 12.0
        );
        if let Some(l) = limit {
            let lx = x(*l);
            let _ = writeln!(
                s,
                "<line x1=\"{lx:.1}\" y1=\"{:.1}\" x2=\"{lx:.1}\" y2=\"{:.1}\" stroke=\"#000\" stroke-width=\"2\"/>",
                y - 2.0,
                y + bar_h + 2.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
