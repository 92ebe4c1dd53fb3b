//! `bench lean`: what an agent reads, counted in characters, on pages nobody here wrote:
//! tabwire's exact and lean replies in both faces beside Chrome DevTools MCP and
//! Playwright MCP, through the same rmcp client, in one run.
//!
//! - `tools/list`: bytes a tool, per server and mode;
//! - small task pages (MiniWoB++'s, started as its harness starts them) and a large
//!   documentation page (Python's contents, a thousand links and long prose): every
//!   character of every reply the agent reads to see the whole page (tabwire's cursors
//!   followed), and the recall of the named controls of Chromium's own accessibility tree
//!   (read by raw CDP from a browser of the bench's own) by role and name in that text;
//! - a click, a typing and a key press: their replies' characters.
//!
//! The pages come from `scripts/fetch-lean-corpus.sh`; `docs/lean-benchmark.md` is
//! written from the run.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::{Value, json};

use crate::mcp::{Reply, call, call_ok};
use crate::servers::{Env, Kind};

/// One server as measured: which one, and whether its replies are lean (`bench task`
/// measures the same six).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Config {
    pub(crate) kind: Kind,
    pub(crate) lean: bool,
}

const CONFIGS: [Config; 6] = [
    Config {
        kind: Kind::DevTools,
        lean: false,
    },
    Config {
        kind: Kind::Playwright,
        lean: false,
    },
    Config {
        kind: Kind::Tabwire,
        lean: false,
    },
    Config {
        kind: Kind::Tabwire,
        lean: true,
    },
    Config {
        kind: Kind::TabwireChrome,
        lean: false,
    },
    Config {
        kind: Kind::TabwireChrome,
        lean: true,
    },
];

impl Config {
    pub(crate) fn label(self) -> String {
        match (self.kind, self.lean) {
            (Kind::Tabwire, false) => "tabwire btap exact".into(),
            (Kind::Tabwire, true) => "tabwire btap lean".into(),
            (Kind::TabwireChrome, false) => "tabwire chrome exact".into(),
            (Kind::TabwireChrome, true) => "tabwire chrome lean".into(),
            (kind, _) => kind.label().into(),
        }
    }

    fn is_tabwire(self) -> bool {
        matches!(self.kind, Kind::Tabwire | Kind::TabwireChrome)
    }
}

/// MiniWoB++ pages measured: every third task page, in name order (43 of 130).
const MINIWOB_EVERY: usize = 3;

struct Page {
    corpus: &'static str,
    name: String,
    url: String,
}

/// One server's figures on one page.
#[derive(Default, Clone)]
struct PageFigures {
    chars: usize,
    replies: usize,
    found: usize,
}

#[derive(Default)]
struct Results {
    tools: HashMap<String, (usize, usize)>,
    pages: HashMap<(String, String), PageFigures>,
    /// Named controls of Chromium's tree, as (role, name), per page.
    controls: HashMap<String, Vec<(String, String)>>,
    input: HashMap<(String, &'static str), usize>,
    notes: Vec<String>,
    /// Each server's whole reading of the example page, by label.
    examples: Vec<(String, String)>,
}

pub async fn run(env: &Env, site: &str) -> anyhow::Result<()> {
    let root = crate::workspace();
    let fetched = std::process::Command::new(root.join("scripts/fetch-lean-corpus.sh"))
        .status()
        .context("scripts/fetch-lean-corpus.sh")?;
    if !fetched.success() {
        bail!("the lean corpus could not be fetched (scripts/fetch-lean-corpus.sh)");
    }
    let pages = pages(&root, site)?;
    let reference = Reference::start().await?;
    let mut results = Results::default();
    for page in &pages {
        let controls = reference.named_controls(&page.url).await?;
        eprintln!(
            "{} {}: {} named controls",
            page.corpus,
            page.name,
            controls.len()
        );
        results.controls.insert(page.name.clone(), controls);
    }
    // BENCH_LEAN_SERVERS=word measures only the servers whose label has it.
    let servers = std::env::var("BENCH_LEAN_SERVERS").unwrap_or_default();
    for config in CONFIGS {
        let label = config.label();
        if !label.contains(servers.as_str()) {
            continue;
        }
        eprintln!("{label} …");
        if let Err(error) = measure(env, config, &pages, site, &mut results).await {
            eprintln!("{label}: {error:#}");
            results.notes.push(format!("{label}: {error:#}"));
        }
    }
    reference.stop().await;
    let report = report(&results, &pages);
    std::fs::write(root.join("docs/lean-benchmark.md"), &report)?;
    splice_into_benchmarks(&root, &report)?;
    eprintln!("wrote docs/lean-benchmark.md");
    print!("{report}");
    Ok(())
}

fn pages(root: &Path, site: &str) -> anyhow::Result<Vec<Page>> {
    let dir = root.join("target/lean-corpus/miniwob/miniwob/html/miniwob");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .with_context(|| format!("{}", dir.display()))?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".html"))
        .collect();
    names.sort();
    let mut pages: Vec<Page> = names
        .into_iter()
        .step_by(MINIWOB_EVERY)
        .map(|name| Page {
            corpus: "small",
            url: format!("{site}/wob/miniwob/{name}"),
            name: name.trim_end_matches(".html").to_owned(),
        })
        .collect();
    pages.push(Page {
        corpus: "large",
        name: "python-contents".into(),
        url: format!("{site}/lean-docs/python-contents.html"),
    });
    // BENCH_LEAN_PAGES=a,b measures only those pages (a look at a few, not a report).
    if let Ok(only) = std::env::var("BENCH_LEAN_PAGES") {
        let only: Vec<&str> = only.split(',').collect();
        pages.retain(|p| only.contains(&p.name.as_str()));
    }
    Ok(pages)
}

pub(crate) async fn start(
    env: &Env,
    config: Config,
) -> anyhow::Result<(RunningService<RoleClient, ()>, tokio::process::Child)> {
    start_with(env, config, &[]).await
}

/// The server of `config`, with more flags after its own (`bench task`'s `--tools core`).
pub(crate) async fn start_with(
    env: &Env,
    config: Config,
    extra: &[&str],
) -> anyhow::Result<(RunningService<RoleClient, ()>, tokio::process::Child)> {
    let mut line = env.command_line(config.kind, false);
    if config.lean {
        line.extend(["--replies".to_owned(), "lean".to_owned()]);
    }
    line.extend(extra.iter().map(|flag| (*flag).to_owned()));
    let cwd = env
        .scratch
        .join(format!("cwd-lean-{}", config.label().replace(' ', "-")));
    std::fs::create_dir_all(&cwd)?;
    let mut child = tokio::process::Command::new(&line[0])
        .args(&line[1..])
        .current_dir(&cwd)
        .env("CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| line.join(" "))?;
    let stdout = child.stdout.take().context("stdout")?;
    let stdin = child.stdin.take().context("stdin")?;
    Ok((().serve((stdout, stdin)).await?, child))
}

async fn measure(
    env: &Env,
    config: Config,
    pages: &[Page],
    site: &str,
    results: &mut Results,
) -> anyhow::Result<()> {
    let (client, mut child) = start(env, config).await?;
    let peer = client.peer().clone();
    let label = config.label();
    let tools = peer.list_all_tools().await?;
    results.tools.insert(
        label.clone(),
        (tools.len(), serde_json::to_string(&tools)?.len()),
    );
    let mut chrome_tab = None;
    for page in pages {
        navigate(&peer, config, &page.url, &mut chrome_tab).await?;
        let (text, replies) = read_whole(&peer, config).await?;
        let wanted = results
            .controls
            .get(&page.name)
            .map_or(&[][..], Vec::as_slice);
        let named = named(config, &text);
        let found = recall(wanted, &named);
        if found < wanted.len() && std::env::var_os("BENCH_LEAN_MISSES").is_some() {
            eprintln!(
                "{label} {}: named {} of {}: wanted {wanted:?}\n  named {named:?}\n  text: {}",
                page.name,
                found,
                wanted.len(),
                text.chars().take(3000).collect::<String>()
            );
        }
        if page.name == EXAMPLE_PAGE {
            results.examples.push((label.clone(), text.clone()));
        }
        results.pages.insert(
            (label.clone(), page.name.clone()),
            PageFigures {
                chars: text.chars().count(),
                replies,
                found,
            },
        );
    }
    // The inputs, on MiniWoB++'s login task: type the user name, click Login, press Enter.
    let login = format!("{site}/wob/miniwob/login-user.html");
    navigate(&peer, config, &login, &mut chrome_tab).await?;
    let (text, _) = read_whole(&peer, config).await?;
    let field = handle(config, &text, "textbox", None).context("no textbox on login-user")?;
    let button = handle(config, &text, "button", Some("Login")).context("no Login button")?;
    let typed = type_into(&peer, config, &field, "ada").await?;
    results.input.insert((label.clone(), "type"), typed.chars());
    let clicked = click(&peer, config, &button).await?;
    results
        .input
        .insert((label.clone(), "click"), clicked.chars());
    let pressed = press(&peer, config, "Enter").await?;
    results
        .input
        .insert((label.clone(), "press"), pressed.chars());
    let _ = client.cancel().await;
    crate::procs::end_tree(&mut child).await;
    Ok(())
}

/// Opens `url` in the server's page (the chrome face: in the tab it opened first); the
/// reply, as the agent reads it.
pub(crate) async fn navigate(
    peer: &Peer<RoleClient>,
    config: Config,
    url: &str,
    tab: &mut Option<u64>,
) -> anyhow::Result<Reply> {
    match config.kind {
        Kind::Tabwire => call_ok(peer, "open_url", json!({ "url": url })).await,
        Kind::Playwright => call_ok(peer, "browser_navigate", json!({ "url": url })).await,
        Kind::DevTools => {
            call_ok(peer, "navigate_page", json!({ "type": "url", "url": url })).await
        }
        Kind::TabwireChrome => {
            let mut args = json!({ "url": url });
            if let Some(id) = tab {
                args["tabId"] = json!(id);
            }
            let reply = call_ok(peer, "chrome_navigate", args).await?;
            // The tab it opened, from the JSON payload or the lean `tabId: N` line.
            let id = serde_json::from_str::<Value>(&reply.text)
                .ok()
                .and_then(|v| v["tabId"].as_u64())
                .or_else(|| {
                    reply
                        .text
                        .lines()
                        .find_map(|l| l.strip_prefix("tabId: ")?.trim().parse().ok())
                });
            if id.is_some() {
                *tab = id;
            }
            Ok(reply)
        }
    }
}

/// Every reply the agent reads to see the whole page, joined: a snapshot, and for
/// tabwire each reply its cursors reach.
async fn read_whole(peer: &Peer<RoleClient>, config: Config) -> anyhow::Result<(String, usize)> {
    let (tool, mut args) = match config.kind {
        Kind::DevTools => ("take_snapshot", json!({})),
        Kind::Playwright => ("browser_snapshot", json!({})),
        Kind::Tabwire => ("scan_page", json!({})),
        Kind::TabwireChrome => ("chrome_read_page", json!({ "viewportOnly": false })),
    };
    let (mut text, mut replies) = (String::new(), 0);
    loop {
        let reply = call_ok(peer, tool, args.clone()).await?;
        replies += 1;
        let cursor = cursor_of(config, &reply.text);
        if std::env::var_os("BENCH_LEAN_MISSES").is_some() {
            eprintln!(
                "  reply {replies}: {} characters, cursor {cursor:?}",
                reply.text.chars().count()
            );
        }
        text.push_str(&reply.text);
        text.push('\n');
        match cursor {
            Some(cursor) if config.is_tabwire() && replies < 500 => args["cursor"] = json!(cursor),
            _ => return Ok((text, replies)),
        }
    }
}

pub(crate) fn cursor_of(config: Config, text: &str) -> Option<String> {
    if config.lean {
        return text
            .lines()
            .find_map(|l| l.strip_prefix("[cut: "))
            .and_then(|rest| rest.split('"').nth(1))
            .map(str::to_owned);
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let cursor = value["data"]["continuation"]["cursor"]
        .as_str()
        .or(value["continuation"]["cursor"].as_str())?;
    Some(cursor.to_owned())
}

/// The controls a reply names, as (role, name): each server's own notation.
fn named(config: Config, text: &str) -> Vec<(String, String)> {
    if config.kind == Kind::Tabwire && !config.lean {
        return btap_targets(text);
    }
    let outline = if config.kind == Kind::TabwireChrome && !config.lean {
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["pageContent"].as_str().map(str::to_owned))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.to_owned()
    };
    outline
        .lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line.strip_prefix("- ").unwrap_or(line);
            // DevTools writes `uid=1_2 button "Go"`.
            let line = match line.strip_prefix("uid=") {
                Some(rest) => rest.split_once(' ')?.1,
                None => line,
            };
            let (role, rest) = line.split_once(' ')?;
            Some((role.to_owned(), quoted(rest)?))
        })
        .collect()
}

/// The targets of btap envelopes, one JSON reply a line.
fn btap_targets(text: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for envelope in text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    {
        let observation = &envelope["data"]["observation"];
        // BrowserTap's targets and the controls tabwire lists beside them.
        for t in ["targets", "more_targets"]
            .iter()
            .filter_map(|list| observation[*list].as_array())
            .flatten()
        {
            // The role Chromium computes (`role` is the attribute as the page wrote it).
            let role = t["computed_role"].as_str().unwrap_or_default();
            let name = t["name"].as_str().unwrap_or_default();
            found.push((role.to_owned(), name.to_owned()));
            // The sub-fields Chromium draws inside a date or time input, named in the
            // target that holds them.
            for field in t["fields"].as_array().into_iter().flatten() {
                let role = field["role"].as_str().unwrap_or_default();
                let name = field["name"].as_str().unwrap_or_default();
                found.push((role.to_owned(), name.to_owned()));
            }
        }
    }
    found
}

/// The name in `"…"` at the start of `text`, unescaped.
fn quoted(text: &str) -> Option<String> {
    let mut chars = text.strip_prefix('"')?.chars();
    let mut name = String::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => name.extend(chars.next()),
            '"' => return Some(name),
            c => name.push(c),
        }
    }
    None
}

/// How many of `wanted` (with repeats) the reply names by role and name (a name clipped
/// by the server counts when it is a prefix of at least 60 characters).
fn recall(wanted: &[(String, String)], named: &[(String, String)]) -> usize {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut pool: Vec<(String, String)> = named
        .iter()
        .map(|(r, n)| (r.to_lowercase(), norm(n)))
        .collect();
    let mut found = 0;
    for (role, name) in wanted {
        let (role, name) = (role.to_lowercase(), norm(name));
        let hit = pool.iter().position(|(r, n)| {
            *r == role
                && (*n == name
                    || (n.chars().count() >= 60 && name.starts_with(n.trim_end_matches('…'))))
        });
        if let Some(at) = hit {
            pool.swap_remove(at);
            found += 1;
        }
    }
    found
}

/// The handle of a control: a ref, uid or locator as each server takes it.
pub(crate) fn handle(config: Config, text: &str, role: &str, name: Option<&str>) -> Option<Value> {
    if config.kind == Kind::Tabwire && !config.lean {
        let envelope: Value = serde_json::from_str(text.lines().next()?).ok()?;
        let observation = &envelope["data"]["observation"];
        return ["targets", "more_targets"]
            .iter()
            .filter_map(|list| observation[*list].as_array())
            .flatten()
            .find(|t| {
                let (r, n) = (t["computed_role"].as_str(), t["name"].as_str());
                r == Some(role) && name.is_none_or(|name| n == Some(name))
            })
            .map(|t| t["locator"].clone());
    }
    let outline = if config.kind == Kind::TabwireChrome && !config.lean {
        serde_json::from_str::<Value>(text.lines().next()?).ok()?["pageContent"]
            .as_str()?
            .to_owned()
    } else {
        text.to_owned()
    };
    let head = match name {
        Some(name) => format!("{role} \"{name}\""),
        None => format!("{role} "),
    };
    let line = outline.lines().find(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix("- ").unwrap_or(l);
        let l = l
            .strip_prefix("uid=")
            .and_then(|r| r.split_once(' '))
            .map_or(l, |(_, r)| r);
        l.starts_with(&head) || (name.is_none() && l == role)
    })?;
    let reference = if let Some(at) = line.find("uid=") {
        line[at + 4..].split(' ').next()?.to_owned()
    } else if let Some(at) = line.find("[ref=") {
        line[at + 5..].split(']').next()?.to_owned()
    } else {
        line.rsplit(' ').next()?.to_owned()
    };
    Some(json!(reference))
}

async fn click(peer: &Peer<RoleClient>, config: Config, target: &Value) -> anyhow::Result<Reply> {
    match config.kind {
        Kind::Tabwire if config.lean => {
            call(peer, "page_click", json!({ "selector": { "ref": target } })).await
        }
        Kind::Tabwire => call(peer, "page_click", json!({ "selector": target })).await,
        Kind::TabwireChrome => call(peer, "chrome_click_element", json!({ "ref": target })).await,
        Kind::Playwright => {
            call(
                peer,
                "browser_click",
                json!({ "target": target, "element": "Login button" }),
            )
            .await
        }
        Kind::DevTools => call(peer, "click", json!({ "uid": target })).await,
    }
}

async fn type_into(
    peer: &Peer<RoleClient>,
    config: Config,
    target: &Value,
    text: &str,
) -> anyhow::Result<Reply> {
    match config.kind {
        Kind::Tabwire if config.lean => {
            call(
                peer,
                "page_type",
                json!({ "selector": { "ref": target }, "text": text }),
            )
            .await
        }
        Kind::Tabwire => {
            call(
                peer,
                "page_type",
                json!({ "selector": target, "text": text }),
            )
            .await
        }
        Kind::TabwireChrome => {
            call(
                peer,
                "chrome_fill_or_select",
                json!({ "ref": target, "value": text }),
            )
            .await
        }
        Kind::Playwright => {
            call(
                peer,
                "browser_type",
                json!({ "target": target, "element": "user name", "text": text }),
            )
            .await
        }
        Kind::DevTools => call(peer, "fill", json!({ "uid": target, "value": text })).await,
    }
}

async fn press(peer: &Peer<RoleClient>, config: Config, key: &str) -> anyhow::Result<Reply> {
    match config.kind {
        Kind::Tabwire => {
            call(
                peer,
                "page_press",
                json!({ "keys_csv": key.to_lowercase() }),
            )
            .await
        }
        Kind::TabwireChrome => call(peer, "chrome_keyboard", json!({ "keys": key })).await,
        Kind::Playwright => call(peer, "browser_press_key", json!({ "key": key })).await,
        Kind::DevTools => call(peer, "press_key", json!({ "key": key })).await,
    }
}

fn report(results: &Results, pages: &[Page]) -> String {
    let labels: Vec<String> = CONFIGS.iter().map(|c| c.label()).collect();
    let devtools = Config {
        kind: Kind::DevTools,
        lean: false,
    }
    .label();
    let playwright = Config {
        kind: Kind::Playwright,
        lean: false,
    }
    .label();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# What an agent reads: lean and exact replies beside the peers\n"
    );
    let _ = writeln!(
        out,
        "Written by `cargo run -p bench --release -- lean` ({}), Chrome DevTools MCP {} and Playwright MCP {}, all on Debian's Chromium, one run. Characters are every character of every text reply the agent reads to see the whole page (tabwire's cursors followed; the peers answer in one reply). Recall is the named controls of Chromium's own accessibility tree (read over raw CDP in a browser of the bench's own) that the replies name with the same role and name.\n",
        today(),
        crate::install::DEVTOOLS_MCP,
        crate::install::PLAYWRIGHT_MCP,
    );
    let _ = writeln!(
        out,
        "## tools/list\n\n| server | tools | bytes | bytes a tool |\n|---|---:|---:|---:|"
    );
    for label in &labels {
        if let Some((count, bytes)) = results.tools.get(label) {
            let _ = writeln!(
                out,
                "| {label} | {count} | {bytes} | {} |",
                bytes / count.max(&1)
            );
        }
    }
    for corpus in ["small", "large"] {
        let set: Vec<&Page> = pages.iter().filter(|p| p.corpus == corpus).collect();
        let controls: usize = set
            .iter()
            .map(|p| results.controls.get(&p.name).map_or(0, Vec::len))
            .sum();
        let title = if corpus == "small" {
            format!(
                "Small task pages: {} MiniWoB++ pages ({controls} named controls)",
                set.len()
            )
        } else {
            format!(
                "A large documentation page: Python's contents.html ({controls} named controls)"
            )
        };
        let _ = writeln!(
            out,
            "\n## {title}\n\n| server | characters | × DevTools | replies | recall |\n|---|---:|---:|---:|---:|"
        );
        let sum = |label: &str| -> PageFigures {
            let mut total = PageFigures::default();
            for page in &set {
                if let Some(f) = results.pages.get(&(label.to_owned(), page.name.clone())) {
                    total.chars += f.chars;
                    total.replies += f.replies;
                    total.found += f.found;
                }
            }
            total
        };
        let base = sum(&devtools).chars.max(1);
        for label in &labels {
            let f = sum(label);
            if f.replies == 0 {
                continue;
            }
            let _ = writeln!(
                out,
                "| {label} | {} | {:.2} | {} | {:.1}% |",
                f.chars,
                f.chars as f64 / base as f64,
                f.replies,
                100.0 * f.found as f64 / controls.max(1) as f64
            );
        }
    }
    let _ = writeln!(
        out,
        "\n## Input replies (MiniWoB++ login task)\n\n| server | type | click | press | × DevTools (sum) | × Playwright (sum) |\n|---|---:|---:|---:|---:|---:|"
    );
    let input_sum = |label: &str| -> usize {
        ["type", "click", "press"]
            .iter()
            .filter_map(|k| results.input.get(&(label.to_owned(), *k)))
            .sum()
    };
    for label in &labels {
        let get = |k: &'static str| {
            results
                .input
                .get(&(label.clone(), k))
                .map_or("—".into(), |n| n.to_string())
        };
        let total = input_sum(label);
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {} | {:.2} | {:.2} |",
            get("type"),
            get("click"),
            get("press"),
            total as f64 / input_sum(&devtools).max(1) as f64,
            total as f64 / input_sum(&playwright).max(1) as f64
        );
    }
    if !results.examples.is_empty() {
        let _ = writeln!(
            out,
            "\n## One small page as each server answers it (MiniWoB++ {EXAMPLE_PAGE})\n"
        );
        for (label, text) in &results.examples {
            let _ = writeln!(
                out,
                "**{label}** ({} characters):\n\n```\n{}\n```\n",
                text.chars().count(),
                text.trim_end()
            );
        }
    }
    if !results.notes.is_empty() {
        let _ = writeln!(out, "\n## Notes\n");
        for note in &results.notes {
            let _ = writeln!(out, "- {note}");
        }
    }
    out
}

/// The small page whose replies the report shows whole.
const EXAMPLE_PAGE: &str = "login-user";

/// Puts the report in `docs/benchmarks.md` too, between its lean markers (added at the
/// end the first time), so that page shows the peers run and this one.
fn splice_into_benchmarks(root: &Path, report: &str) -> anyhow::Result<()> {
    const BEGIN: &str = "<!-- bench lean: begin -->";
    const END: &str = "<!-- bench lean: end -->";
    let path = root.join("docs/benchmarks.md");
    let page = std::fs::read_to_string(&path).unwrap_or_default();
    // One level down: the report's title becomes a section of the page.
    let section = report
        .lines()
        .map(|line| {
            if line.starts_with('#') {
                format!("#{line}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let block = format!("{BEGIN}\n{section}\n{END}");
    let updated = match (page.find(BEGIN), page.find(END)) {
        (Some(begin), Some(end)) if end > begin => {
            format!("{}{block}{}", &page[..begin], &page[end + END.len()..])
        }
        _ => format!("{}\n\n{block}\n", page.trim_end()),
    };
    std::fs::write(&path, updated)?;
    Ok(())
}

/// Today's date, as `date` prints it.
pub(crate) fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%F"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Chromium's own view of a page: the named interactive controls of its accessibility
/// tree, read over raw CDP in a browser the bench launches as tabwire does.
struct Reference {
    page: crate::floor::RawPage,
}

/// The roles counted as interactive controls (as the fidelity test counts them).
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

impl Reference {
    async fn start() -> anyhow::Result<Reference> {
        let page = crate::floor::RawPage::open(false).await?;
        page.send("Accessibility.enable", json!({})).await?;
        Ok(Reference { page })
    }

    async fn named_controls(&self, url: &str) -> anyhow::Result<Vec<(String, String)>> {
        self.page.navigate(url).await?;
        // Past the load handlers (MiniWoB++ starts its task in one) and a frame.
        self.page
            .send(
                "Runtime.evaluate",
                json!({ "expression": "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))", "awaitPromise": true }),
            )
            .await?;
        let tree = self
            .page
            .send("Accessibility.getFullAXTree", json!({}))
            .await?;
        let mut controls = Vec::new();
        for node in tree["nodes"].as_array().into_iter().flatten() {
            if node["ignored"] == true {
                continue;
            }
            let role = node["role"]["value"].as_str().unwrap_or_default();
            let name = node["name"]["value"].as_str().unwrap_or_default().trim();
            if INTERACTIVE.contains(&role) && !name.is_empty() {
                controls.push((role.to_owned(), name.to_owned()));
            }
        }
        Ok(controls)
    }

    async fn stop(self) {
        drop(self.page);
    }
}
