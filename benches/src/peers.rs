//! `bench peers`: tabwire, Playwright MCP and Chrome DevTools MCP side by side, on the same
//! pages, through the same rmcp client, taking turns (A B C A B C …) so drift hits all alike.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::json;

use crate::mcp::{Reply, call_ok, tokens};
use crate::procs::{BrowserSampler, server_peak_kib};
use crate::servers::{Env, Handle, KINDS, Kind, RUN_KINDS, Server, evaluated_value, find_handle};
use crate::stats::{AGENT_PAUSE, frame_phase};

/// Per-server measurements: every sample of every metric, plus notes (errors, n/a).
#[derive(Default)]
pub struct Results {
    pub samples: BTreeMap<(Kind, String), Vec<f64>>,
    pub notes: BTreeMap<(Kind, String), String>,
}

impl Results {
    pub fn push(&mut self, kind: Kind, key: &str, value: f64) {
        self.samples
            .entry((kind, key.to_owned()))
            .or_default()
            .push(value);
    }

    pub fn get(&self, kind: Kind, key: &str) -> Option<&Vec<f64>> {
        self.samples
            .get(&(kind, key.to_owned()))
            .filter(|v| !v.is_empty())
    }

    pub fn note(&mut self, kind: Kind, key: &str, note: impl Into<String>) {
        self.notes.insert((kind, key.to_owned()), note.into());
    }

    /// Latency, reply characters, and (when `count_tokens`) tokens of one reply.
    fn reply(&mut self, kind: Kind, op: &str, reply: &Reply, count_tokens: bool) {
        self.push(kind, op, ms(reply.elapsed));
        self.push(kind, &format!("chars:{op}"), reply.chars() as f64);
        if count_tokens {
            self.push(kind, &format!("tokens:{op}"), reply.tokens() as f64);
        }
        if reply.image_chars > 0 {
            self.push(kind, &format!("image:{op}"), reply.image_chars as f64);
        }
    }
}

impl Results {
    /// Every sample and note, by server label then metric.
    pub fn to_json(&self) -> serde_json::Value {
        let mut samples = serde_json::Map::new();
        let mut notes = serde_json::Map::new();
        for kind in RUN_KINDS {
            let of_kind = |(k, key): &(Kind, String)| (*k == kind).then(|| key.clone());
            samples.insert(
                kind.label().into(),
                self.samples
                    .iter()
                    .filter_map(|(id, v)| of_kind(id).map(|key| (key, json!(v))))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            );
            notes.insert(
                kind.label().into(),
                self.notes
                    .iter()
                    .filter_map(|(id, v)| of_kind(id).map(|key| (key, json!(v))))
                    .collect::<serde_json::Map<_, _>>()
                    .into(),
            );
        }
        json!({ "samples": samples, "notes": notes })
    }

    pub fn from_json(value: &serde_json::Value) -> Results {
        let mut results = Results::default();
        for kind in RUN_KINDS {
            for (key, v) in value["samples"][kind.label()]
                .as_object()
                .into_iter()
                .flatten()
            {
                for x in v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_f64())
                {
                    results.push(kind, key, x);
                }
            }
            for (key, v) in value["notes"][kind.label()]
                .as_object()
                .into_iter()
                .flatten()
            {
                results.note(kind, key, v.as_str().unwrap_or_default());
            }
        }
        results
    }
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub struct Options {
    pub runs: usize,
    /// Repetitions of each warm operation inside one run.
    pub inner: usize,
    pub agents: Vec<usize>,
    /// Click-and-read iterations per agent.
    pub loops: usize,
}

pub async fn run(env: &Env, site: &str, opts: &Options) -> anyhow::Result<Results> {
    let mut results = Results::default();
    // The real pages are fetched once (apt-get download); without them the report says
    // how to get them.
    let ids: Vec<String> = crate::pages::REAL.iter().map(|p| (*p).to_owned()).collect();
    let real_pages = match crate::search::fetch_corpus(&crate::workspace(), &ids) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("real pages left out: {e:#}");
            false
        }
    };
    for run in 0..opts.runs {
        let mut line = format!("run {}/{}:", run + 1, opts.runs);
        for kind in RUN_KINDS {
            let started = Instant::now();
            match one_run(env, site, kind, run, opts.inner, real_pages, &mut results).await {
                Ok(()) => {
                    line += &format!(
                        "  {} {:.1} s",
                        kind.label(),
                        started.elapsed().as_secs_f64()
                    )
                }
                Err(e) => {
                    line += &format!("  {} FAILED", kind.label());
                    eprintln!("{} run {}: {e:#}", kind.label(), run + 1);
                    results.note(kind, "errors", format!("run {}: {e:#}", run + 1));
                }
            }
        }
        eprintln!("{line}");
    }
    for &n in &opts.agents {
        let mut line = format!("agents N={n}:");
        for kind in KINDS {
            let started = Instant::now();
            match agents(env, site, kind, n, opts.loops, &mut results).await {
                Ok(()) => {
                    line += &format!(
                        "  {} {:.1} s",
                        kind.label(),
                        started.elapsed().as_secs_f64()
                    )
                }
                Err(e) => {
                    line += &format!("  {} n/a", kind.label());
                    eprintln!("{} with {n} agents: {e:#}", kind.label());
                    results.note(kind, &format!("agents{n}"), format!("{e:#}"));
                }
            }
        }
        eprintln!("{line}");
    }
    Ok(results)
}

/// One run of one server: spawn, first navigation (cold start), the warm operations on the
/// small page, snapshots of the big page, memory; then the server and its browser end.
async fn one_run(
    env: &Env,
    site: &str,
    kind: Kind,
    run: usize,
    inner: usize,
    real_pages: bool,
    results: &mut Results,
) -> anyhow::Result<()> {
    let first = run == 0;
    let spawned = Instant::now();
    let server = Server::start(env, kind, false).await?;
    let sampler = BrowserSampler::start(server.pid);
    let outcome = async {
        let opened = server.navigate(&format!("{site}/small?cold={run}")).await?;
        results.push(kind, "cold", ms(spawned.elapsed()));
        results.push(kind, "chars:cold", opened.chars() as f64);
        if first {
            let (count, list) = crate::servers::tools_list(server.peer()).await?;
            results.push(kind, "tools_count", count as f64);
            results.push(kind, "tools_bytes", list.len() as f64);
            results.push(
                kind,
                "tools_bytes_per_tool",
                list.len() as f64 / count as f64,
            );
            results.push(kind, "tools_tokens", tokens(&list) as f64);
        }
        for i in 0..inner {
            let count_tokens = first && i == 0;
            let navigated = server
                .navigate(&format!("{site}/small?run={run}&i={i}"))
                .await?;
            results.reply(kind, "navigate", &navigated, count_tokens);
            let snapshot = server.snapshot().await?;
            results.reply(kind, "snapshot_small", &snapshot, count_tokens);
            results.push(
                kind,
                "navigate_snapshot",
                ms(navigated.elapsed + snapshot.elapsed),
            );
            let go = server.find(&snapshot, "button", "Go")?;
            let name = server.find(&snapshot, "textbox", "Name")?;
            let clicked = server.click(&go).await?;
            results.reply(kind, "click", &clicked, count_tokens);
            let typed = server.type_text(&name, "hello").await?;
            results.reply(kind, "type", &typed, count_tokens);
            let (evaluated, value) = server.evaluate("window.clicks").await?;
            results.reply(kind, "evaluate", &evaluated, count_tokens);
            ensure!(
                value == "1",
                "the page counted {value:?} clicks, expected 1"
            );
            tokio::time::sleep(frame_phase(run * inner + i)).await;
            let shot = server.screenshot().await?;
            results.reply(kind, "screenshot", &shot, count_tokens);
            ensure!(shot.image_chars > 0, "the screenshot reply has no image");
            if first && i == 0 {
                let (_, typed) = server
                    .evaluate("document.getElementById('name').value")
                    .await?;
                ensure!(typed.contains("hello"), "the field holds {typed:?}");
            }
            // The same small snapshot once the page has settled, as an agent's next call
            // meets it: Chrome DevTools MCP's own navigation waits for that inside itself.
            server
                .navigate(&format!("{site}/small?run={run}&i={i}&settled"))
                .await?;
            tokio::time::sleep(AGENT_PAUSE).await;
            let settled = server.snapshot().await?;
            results.reply(kind, "snapshot_settled", &settled, false);
        }
        if first {
            // The fidelity corpus, each page whole, as each server snapshots it.
            for page in crate::pages::CORPUS {
                server.navigate(&format!("{site}/corpus/{page}")).await?;
                let snapshot = server.snapshot_whole().await?;
                results.push(
                    kind,
                    &format!("chars:corpus:{page}"),
                    snapshot.chars() as f64,
                );
            }
        }
        if first && real_pages {
            // Real pages nobody here wrote, each whole; tabwire's complete scan beside.
            for page in crate::pages::REAL {
                server.navigate(&format!("{site}/real/{page}")).await?;
                let snapshot = server.snapshot_whole().await?;
                results.push(kind, &format!("chars:real:{page}"), snapshot.chars() as f64);
                if kind == Kind::Tabwire {
                    let whole = server.snapshot_complete().await?;
                    results.push(
                        kind,
                        &format!("chars:real-complete:{page}"),
                        whole.chars() as f64,
                    );
                }
            }
        }
        server.navigate(&format!("{site}/big?run={run}")).await?;
        for i in 0..inner {
            let count_tokens = first && i == 0;
            let snapshot = server.snapshot().await?;
            results.reply(kind, "snapshot_big", &snapshot, count_tokens);
            if matches!(kind, Kind::Tabwire | Kind::TabwireChrome) {
                let whole = server.snapshot_complete().await?;
                results.reply(kind, "snapshot_big_complete", &whole, count_tokens);
            }
        }
        results.push(kind, "mem_server", server_peak_kib(server.pid) as f64);
        results.push(kind, "mem_browser", sampler.finish(server.pid) as f64);
        anyhow::Ok(())
    }
    .await;
    sampler.finish(server.pid);
    server.stop().await;
    outcome
}

/// N agents, each on its own tab, each looping click-then-read; per-iteration latency as
/// the agent sees it, throughput, and memory.
async fn agents(
    env: &Env,
    site: &str,
    kind: Kind,
    n: usize,
    loops: usize,
    results: &mut Results,
) -> anyhow::Result<()> {
    let server = Server::start(env, kind, true).await?;
    let sampler = BrowserSampler::start(server.pid);
    let outcome = async {
        let (latencies, wall) = match kind {
            Kind::Tabwire => agents_tabwire(&server, site, n, loops).await?,
            Kind::Playwright => agents_playwright(&server, site, n, loops).await?,
            Kind::DevTools => agents_devtools(&server, site, n, loops).await?,
            Kind::TabwireChrome => anyhow::bail!("measured for the btap face only"),
        };
        for l in latencies {
            results.push(kind, &format!("agents{n}"), l);
        }
        results.push(
            kind,
            &format!("agents{n}_throughput"),
            (n * loops) as f64 / wall.as_secs_f64(),
        );
        results.push(
            kind,
            &format!("agents{n}_mem_server"),
            server_peak_kib(server.pid) as f64,
        );
        results.push(
            kind,
            &format!("agents{n}_mem_browser"),
            sampler.finish(server.pid) as f64,
        );
        anyhow::Ok(())
    }
    .await;
    sampler.finish(server.pid);
    server.stop().await;
    outcome
}

/// Runs the agents at once; each returns its iteration latencies (ms).
async fn together<F>(agents: Vec<F>) -> anyhow::Result<(Vec<f64>, Duration)>
where
    F: std::future::Future<Output = anyhow::Result<Vec<f64>>> + Send + 'static,
{
    let started = Instant::now();
    let handles: Vec<_> = agents.into_iter().map(tokio::spawn).collect();
    let mut all = Vec::new();
    for handle in handles {
        all.extend(handle.await.context("agent task")??);
    }
    Ok((all, started.elapsed()))
}

fn check_count(value: &str, expected: usize) -> anyhow::Result<()> {
    ensure!(
        value == expected.to_string(),
        "an agent read {value:?} clicks on its tab, expected {expected}"
    );
    Ok(())
}

/// tabwire: one `tabwire --http`, one MCP session per agent (each has its own tab).
async fn agents_tabwire(
    server: &Server,
    site: &str,
    n: usize,
    loops: usize,
) -> anyhow::Result<(Vec<f64>, Duration)> {
    let mut clients = Vec::new();
    for i in 0..n {
        let client = server.http_client().await?;
        call_ok(
            &client,
            "open_url",
            json!({ "url": format!("{site}/small?agent={i}") }),
        )
        .await?;
        clients.push(client);
    }
    let tasks = clients
        .into_iter()
        .map(|client| async move {
            let mut latencies = Vec::new();
            for k in 0..loops {
                let t = Instant::now();
                call_ok(
                    &client,
                    "page_click",
                    json!({ "selector": { "role": "button", "name": "Go", "exact": true } }),
                )
                .await?;
                let read =
                    call_ok(&client, "execute_js", json!({ "script": "window.clicks" })).await?;
                latencies.push(ms(t.elapsed()));
                check_count(&evaluated_value(Kind::Tabwire, &read.text), k + 1)?;
            }
            let _ = client.cancel().await;
            anyhow::Ok(latencies)
        })
        .collect();
    together(tasks).await
}

/// Playwright MCP: one client (its tools act on the current tab), tabs from `browser_tabs`;
/// each iteration selects the agent's tab, clicks and reads, holding the client meanwhile so
/// no other agent switches tabs in between.
async fn agents_playwright(
    server: &Server,
    site: &str,
    n: usize,
    loops: usize,
) -> anyhow::Result<(Vec<f64>, Duration)> {
    let peer = server.peer().clone();
    server.navigate(&format!("{site}/small?agent=0")).await?;
    for i in 1..n {
        call_ok(
            &peer,
            "browser_tabs",
            json!({ "action": "new", "url": format!("{site}/small?agent={i}") }),
        )
        .await?;
    }
    let turn = Arc::new(tokio::sync::Mutex::new(()));
    let tasks = (0..n)
        .map(|i| {
            let (peer, turn) = (peer.clone(), turn.clone());
            async move {
                let mut latencies = Vec::new();
                for k in 0..loops {
                    let t = Instant::now();
                    let held = turn.lock().await;
                    call_ok(
                        &peer,
                        "browser_tabs",
                        json!({ "action": "select", "index": i }),
                    )
                    .await?;
                    call_ok(
                        &peer,
                        "browser_click",
                        json!({ "target": "#go", "element": "Go button" }),
                    )
                    .await?;
                    let read = call_ok(
                        &peer,
                        "browser_evaluate",
                        json!({ "function": "() => window.clicks" }),
                    )
                    .await?;
                    drop(held);
                    latencies.push(ms(t.elapsed()));
                    check_count(&evaluated_value(Kind::Playwright, &read.text), k + 1)?;
                }
                anyhow::Ok(latencies)
            }
        })
        .collect();
    together(tasks).await
}

/// Chrome DevTools MCP: one client, its page-id routing (every page tool takes `pageId`), one
/// page per agent; calls go out concurrently.
async fn agents_devtools(
    server: &Server,
    site: &str,
    n: usize,
    loops: usize,
) -> anyhow::Result<(Vec<f64>, Duration)> {
    let peer = server.peer().clone();
    let mut pages = Vec::new();
    for i in 0..n {
        let opened = call_ok(
            &peer,
            "new_page",
            json!({ "url": format!("{site}/small?agent={i}") }),
        )
        .await?;
        let page = crate::servers::selected_page_id(&opened.text)
            .with_context(|| format!("no selected page in {}", opened.text))?;
        let snapshot = call_ok(&peer, "take_snapshot", json!({ "pageId": page })).await?;
        let Some(Handle::Ref(uid, _)) = find_handle(Kind::DevTools, &snapshot.text, "button", "Go")
        else {
            anyhow::bail!("no Go button in page {page}'s snapshot");
        };
        pages.push((page, uid));
    }
    let tasks = pages
        .into_iter()
        .map(|(page, uid)| {
            let peer = peer.clone();
            async move {
                let mut latencies = Vec::new();
                for k in 0..loops {
                    let t = Instant::now();
                    call_ok(&peer, "click", json!({ "pageId": page, "uid": uid })).await?;
                    let read = call_ok(
                        &peer,
                        "evaluate_script",
                        json!({ "pageId": page, "function": "() => window.clicks" }),
                    )
                    .await?;
                    latencies.push(ms(t.elapsed()));
                    check_count(&evaluated_value(Kind::DevTools, &read.text), k + 1)?;
                }
                anyhow::Ok(latencies)
            }
        })
        .collect();
    together(tasks).await
}
