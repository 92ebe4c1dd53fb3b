//! `bench search`: tab search's retrieval quality and cost on real pages.
//!
//! The corpus is documentation pages from Debian packages (`benches/search/corpus.json`,
//! fetched into `target/search-corpus` by `scripts/fetch-search-corpus.sh`), each opened
//! as a tab of the release binary's browser; the queries (`benches/search/queries.json`)
//! were written by hand to paraphrase the page they want, to name an identifier it holds,
//! or to ask in another language; `benches/search/concept-queries.json` adds queries that
//! share no word with their page (`benches/search/check-concept.py` checks it), each
//! also in Chinese, German and Spanish. `--set heldout` measures 30 other pages
//! (`benches/search/heldout/`) with queries written from them without running any search:
//! concept queries as a user types them, and ones that share no word with their page.
//! Reports recall@1, recall@3 and MRR for words
//! alone, meaning alone and both; indexing time and CPU; query latency at 50 tabs;
//! whether indexing slows a page tool; memory before the first search and at peak; and
//! what the model adds to the binary. Writes `docs/search-benchmark.md` (with `--set`:
//! `docs/search-benchmark-NAMES.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::stats::Samples;
use crate::{Client, call, procs, tabwire_binary, workspace};

/// Tabs open while query latency is timed (the figure).
const LATENCY_TABS: usize = 50;
const MODES: &[(&str, &str)] = &[
    ("words", "words alone (BM25)"),
    ("meaning", "meaning alone (embeddings)"),
    ("hybrid", "hybrid (both, fused)"),
];

struct Query {
    text: String,
    kind: String,
    answer: String,
}

#[derive(Default, Clone)]
struct Scores {
    queries: usize,
    at1: usize,
    at3: usize,
    reciprocal: f64,
}

impl Scores {
    fn add(&mut self, rank: Option<usize>) {
        self.queries += 1;
        if let Some(rank) = rank {
            self.at1 += usize::from(rank == 1);
            self.at3 += usize::from(rank <= 3);
            self.reciprocal += 1.0 / rank as f64;
        }
    }
    fn cell(&self) -> String {
        let n = self.queries.max(1) as f64;
        format!(
            "{:.2} / {:.2} / {:.3}",
            self.at1 as f64 / n,
            self.at3 as f64 / n,
            self.reciprocal / n
        )
    }
}

/// One model's run.
struct Run {
    label: String,
    /// mode → kind ("all" too) → scores.
    scores: BTreeMap<String, BTreeMap<String, Scores>>,
    misses: Vec<String>,
    open_ms: Samples,
    first_search_ms: f64,
    /// Passages the first search could not wait for.
    first_not_embedded: u64,
    /// From the first search until no passage waited for the encoder.
    embed_wall_ms: f64,
    /// The server's CPU time over the same span.
    embed_cpu_ms: u64,
    passages_embedded: u64,
    tool_while_embedding: Samples,
    rss_before_search_kib: u64,
    indexing_ms_total: u64,
    tabs_read: u64,
    chunks: u64,
    index_bytes: u64,
    model_bytes: u64,
    query_at_50: Samples,
    tool_idle: Samples,
    tool_while_indexing: Samples,
    peak_kib: u64,
    vector_search: bool,
}

/// A set of pages and the queries written for them: `main` is `benches/search/` (the
/// pages the ranking was developed on), any other name a folder under it (`heldout`:
/// other pages, with queries written without looking at any ranking).
struct QuerySet {
    name: String,
    dir: PathBuf,
}

impl QuerySet {
    fn named(root: &Path, name: &str) -> anyhow::Result<QuerySet> {
        let dir = match name {
            "main" => root.join("benches/search"),
            other => root.join("benches/search").join(other),
        };
        if !dir.join("corpus.json").is_file() {
            bail!(
                "no query set '{name}': {} has no corpus.json",
                dir.display()
            );
        }
        Ok(QuerySet {
            name: name.to_owned(),
            dir,
        })
    }

    /// Every JSON file of the folder but the corpus holds queries.
    fn query_files(&self) -> anyhow::Result<Vec<PathBuf>> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| {
                path.extension().is_some_and(|e| e == "json")
                    && path.file_name().is_some_and(|n| n != "corpus.json")
            })
            .collect();
        files.sort();
        Ok(files)
    }
}

pub async fn run(sets: &[String], models: &[String], compare: &[String]) -> anyhow::Result<()> {
    let root = workspace();
    let names: Vec<String> = if sets.is_empty() {
        vec!["main".to_owned()]
    } else {
        sets.to_vec()
    };
    let sets: Vec<QuerySet> = names
        .iter()
        .map(|name| QuerySet::named(&root, name))
        .collect::<anyhow::Result<_>>()?;
    let mut ids: Vec<String> = Vec::new();
    let mut queries: Vec<Query> = Vec::new();
    for set in &sets {
        let corpus = read_json(&set.dir.join("corpus.json"))?;
        let set_ids: Vec<String> = corpus
            .iter()
            .filter_map(|p| p["id"].as_str().map(str::to_owned))
            .collect();
        fetch_corpus_of(&root, &set.dir.join("corpus.json"), &set_ids)?;
        ids.extend(set_ids);
        for file in set.query_files()? {
            for q in read_json(&file)? {
                let kind = q["kind"].as_str().unwrap_or_default();
                // Concept queries by language: `concept-en` shares no word with its
                // page; the others ask for the same English page in another language.
                let kind = match q["lang"].as_str() {
                    Some(lang) => format!("{kind}-{lang}"),
                    None => kind.to_owned(),
                };
                queries.push(Query {
                    text: q["query"].as_str().unwrap_or_default().to_owned(),
                    // With several sets, each set's kinds are reported apart.
                    kind: if sets.len() > 1 {
                        format!("{} {kind}", set.name)
                    } else {
                        kind
                    },
                    answer: q["answer"].as_str().unwrap_or_default().to_owned(),
                });
            }
        }
    }
    let pages = root.join("target/search-corpus/pages");
    let site = serve_dir(pages.clone()).await?;
    println!(
        "{} pages, {} queries; tabwire: {}",
        ids.len(),
        queries.len(),
        tabwire_binary()?.display()
    );
    let mut runs = Vec::new();
    let this = tabwire_binary()?;
    let mut configs = vec![("shipped model".to_owned(), this.clone(), Vec::new())];
    for dir in models {
        configs.push((
            format!("model {dir}"),
            this.clone(),
            vec!["--embed-model".into(), dir.clone()],
        ));
    }
    for binary in compare {
        configs.push((format!("tabwire {binary}"), binary.into(), Vec::new()));
    }
    for (label, binary, args) in configs {
        println!("\n== {label}");
        runs.push(run_one(&label, &binary, &args, &site, &ids, &queries).await?);
    }
    println!("\n== tab search off (the baseline for a page tool while a tab opens)");
    let base = baseline(&site, &ids).await?;
    let report = render(&runs, &names, &ids, &queries, &base);
    println!("\n{report}");
    let file = match names.as_slice() {
        [only] if only == "main" => "docs/search-benchmark.md".to_owned(),
        _ => format!("docs/search-benchmark-{}.md", names.join("-")),
    };
    std::fs::write(root.join(&file), report)?;
    println!("written: {file}");
    Ok(())
}

async fn run_one(
    label: &str,
    binary: &Path,
    args: &[String],
    site: &str,
    ids: &[String],
    queries: &[Query],
) -> anyhow::Result<Run> {
    let (client, child) = start_binary(binary, args).await?;
    let pid = child.id().unwrap_or(0);
    let url = |id: &str| format!("{site}/p/{id}.html");
    let mut open_ms = Samples::default();
    let mut tool_while_indexing = Samples::default();
    // The first page in this session's own tab, the rest in new tabs; after each open,
    // a page tool on the first tab while the index reads the new one.
    for (i, id) in ids.iter().enumerate() {
        let started = Instant::now();
        if i == 0 {
            call(&client, "open_url", json!({ "url": url(id) })).await?;
        } else {
            call(&client, "open_new_tab", json!({ "url": url(id) })).await?;
        }
        open_ms.push(started.elapsed());
        let started = Instant::now();
        call(&client, "execute_js", json!({ "script": "1 + 1" })).await?;
        tool_while_indexing.push(started.elapsed());
    }
    // Every tab read (a search by words alone loads no model), then the memory.
    call(
        &client,
        "search_tabs",
        json!({ "query": "warm-up", "mode": "words" }),
    )
    .await?;
    let rss_before_search_kib = procs::server_rss_kib(pid);
    // The first search loads the encoder and waits for the outlines of the tabs.
    let cpu_before = procs::cpu_ms(pid);
    let started = Instant::now();
    let first = call(&client, "search_tabs", json!({ "query": "warm-up" }))
        .await?
        .0;
    let first_search_ms = started.elapsed().as_secs_f64() * 1000.0;
    let first_not_embedded = first["not_embedded_yet"].as_u64().unwrap_or(0);
    println!(
        "opened {} tabs; first search waited for {} tabs read, took {first_search_ms:.0} ms, \
         {first_not_embedded} outlines not embedded",
        ids.len(),
        first["waited_for_tabs"]
    );
    // A page tool while the encoder works through the rest in the background.
    let mut tool_while_embedding = Samples::default();
    let mut passages_embedded = 0;
    loop {
        let status = call(&client, "get_setup_status", json!({})).await?.0;
        let search = &status["tab_search"];
        passages_embedded = search["passages_embedded"]
            .as_u64()
            .unwrap_or(passages_embedded);
        if search["passages_waiting"].as_u64().unwrap_or(0) == 0 {
            break;
        }
        let started = Instant::now();
        call(&client, "execute_js", json!({ "script": "1 + 1" })).await?;
        tool_while_embedding.push(started.elapsed());
        // Paced like an agent's calls, so the samples spread over the whole run.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let embed_wall_ms = started.elapsed().as_secs_f64() * 1000.0;
    let embed_cpu_ms = procs::cpu_ms(pid).saturating_sub(cpu_before);
    println!(
        "{passages_embedded} passages embedded in {embed_wall_ms:.0} ms ({embed_cpu_ms} ms of CPU)"
    );
    let mut tool_idle = Samples::default();
    for _ in 0..ids.len() {
        let started = Instant::now();
        call(&client, "execute_js", json!({ "script": "1 + 1" })).await?;
        tool_idle.push(started.elapsed());
    }

    let mut scores: BTreeMap<String, BTreeMap<String, Scores>> = BTreeMap::new();
    let mut misses = Vec::new();
    for (mode, _) in MODES {
        for query in queries {
            let found = call(
                &client,
                "search_tabs",
                json!({ "query": query.text, "mode": mode, "max_results": 10 }),
            )
            .await?
            .0;
            let want = format!("/p/{}.html", query.answer);
            let rank = found["results"]
                .as_array()
                .into_iter()
                .flatten()
                .position(|r| r["url"].as_str().is_some_and(|u| u.ends_with(&want)))
                .map(|i| i + 1);
            let by_kind = scores.entry((*mode).to_owned()).or_default();
            by_kind.entry(query.kind.clone()).or_default().add(rank);
            by_kind.entry("all".into()).or_default().add(rank);
            if *mode == "hybrid" && rank != Some(1) {
                let got = found["results"][0]["url"]
                    .as_str()
                    .and_then(|u| u.rsplit('/').next())
                    .unwrap_or("nothing")
                    .to_owned();
                misses.push(format!(
                    "{} `{}` → {} (rank {})",
                    query.kind,
                    query.text,
                    got,
                    rank.map_or("-".into(), |r| r.to_string())
                ));
            }
        }
    }

    // Up to 50 tabs (pages opened again), then query latency.
    let mut open = ids.len();
    while open < LATENCY_TABS {
        let id = &ids[open % ids.len()];
        call(
            &client,
            "open_new_tab",
            json!({ "url": format!("{}?copy={open}", url(id)) }),
        )
        .await?;
        open += 1;
    }
    call(&client, "search_tabs", json!({ "query": "warm-up" })).await?;
    let mut query_at_50 = Samples::default();
    for query in queries {
        let started = Instant::now();
        call(&client, "search_tabs", json!({ "query": query.text })).await?;
        query_at_50.push(started.elapsed());
    }
    let status = call(&client, "get_setup_status", json!({})).await?.0;
    let search = &status["tab_search"];
    let stats = call(&client, "search_tabs", json!({ "query": "warm-up" }))
        .await?
        .0;
    let peak_kib = procs::server_peak_kib(pid);
    drop(client);
    drop(child);
    Ok(Run {
        label: label.to_owned(),
        scores,
        misses,
        open_ms,
        first_search_ms,
        first_not_embedded,
        embed_wall_ms,
        embed_cpu_ms,
        passages_embedded,
        tool_while_embedding,
        rss_before_search_kib,
        indexing_ms_total: search["indexing_ms"].as_u64().unwrap_or(0),
        tabs_read: search["tabs_read"].as_u64().unwrap_or(0),
        chunks: search["chunks"].as_u64().unwrap_or(0),
        index_bytes: search["index_bytes"].as_u64().unwrap_or(0),
        model_bytes: search["model_bytes"].as_u64().unwrap_or(0),
        query_at_50,
        tool_idle,
        tool_while_indexing,
        peak_kib,
        vector_search: stats["vector_search"] == true,
    })
}

/// The same opening sequence with tab search off: how long the page tool takes while a
/// new tab loads when nothing is indexed (the baseline for `tool_while_indexing`).
async fn baseline(site: &str, ids: &[String]) -> anyhow::Result<Samples> {
    let (client, _child) = start(&["--no-tab-search".to_owned()]).await?;
    let mut after_open = Samples::default();
    for (i, id) in ids.iter().enumerate() {
        let url = format!("{site}/p/{id}.html");
        if i == 0 {
            call(&client, "open_url", json!({ "url": url })).await?;
        } else {
            call(&client, "open_new_tab", json!({ "url": url })).await?;
        }
        let started = Instant::now();
        call(&client, "execute_js", json!({ "script": "1 + 1" })).await?;
        after_open.push(started.elapsed());
    }
    Ok(after_open)
}

fn render(
    runs: &[Run],
    sets: &[String],
    ids: &[String],
    queries: &[Query],
    base: &Samples,
) -> String {
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for q in queries {
        *kinds.entry(q.kind.as_str()).or_default() += 1;
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Tab search benchmark\n\n`cargo build --release -p tabwire -p bench && ./target/release/bench search{}`\n\n\
         {} real pages (Debian documentation packages, {}), each in a tab; \
         {} hand-written queries ({}). Cells are recall@1 / recall@3 / MRR.\n",
        sets.iter()
            .filter(|s| sets.len() > 1 || s.as_str() != "main")
            .map(|s| format!(" --set {s}"))
            .collect::<String>(),
        ids.len(),
        sets.iter()
            .map(|s| match s.as_str() {
                "main" => "`benches/search/corpus.json`".to_owned(),
                other => format!("`benches/search/{other}/corpus.json`"),
            })
            .collect::<Vec<_>>()
            .join(" and "),
        queries.len(),
        kinds
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for run in runs {
        let _ = writeln!(
            out,
            "## {}{}\n",
            run.label,
            if run.vector_search {
                ""
            } else {
                " (vector search off: every ranking is words alone)"
            }
        );
        let mut header = "| ranking | all |".to_owned();
        let mut rule = "|---|---|".to_owned();
        for kind in kinds.keys() {
            let _ = write!(header, " {kind} |");
            rule.push_str("---|");
        }
        let _ = writeln!(out, "{header}\n{rule}");
        for (mode, name) in MODES {
            let Some(by_kind) = run.scores.get(*mode) else {
                continue;
            };
            let mut row = format!(
                "| {name} | {} |",
                by_kind.get("all").cloned().unwrap_or_default().cell()
            );
            for kind in kinds.keys() {
                let _ = write!(
                    row,
                    " {} |",
                    by_kind.get(*kind).cloned().unwrap_or_default().cell()
                );
            }
            let _ = writeln!(out, "{row}");
        }
        let per_tab = run.indexing_ms_total as f64 / run.tabs_read.max(1) as f64;
        let _ = writeln!(
            out,
            "\n- Indexing: {} tab reads, {:.1} ms a tab on average (read and chunk; off the call path), \
             {} chunks. The first search (it loads the encoder and waits for each tab's outline) took {:.0} ms \
             and could not wait for {} outlines. The encoder then read {} passages in the background \
             in {:.1} s, using {:.1} s of CPU; a page tool meanwhile: {}.\n\
             - Query latency with {LATENCY_TABS} tabs indexed, through MCP: {}.\n\
             - A page tool (`execute_js`) right after each tab opened, while the index reads it: {}; \
             the same with tab search off (`--no-tab-search`): {} (difference: median {:+.1} ms, p90 {:+.1} ms); \
             when idle: {}.\n\
             - Opening a tab (`open_new_tab`): {}.\n\
             - Memory: index ~{:.1} MiB; server RSS before the first search {:.0} MiB, peak {:.0} MiB (model included).\n\
             - Size the model adds to the binary: {:.1} MB.\n",
            run.tabs_read,
            per_tab,
            run.chunks,
            run.first_search_ms,
            run.first_not_embedded,
            run.passages_embedded,
            run.embed_wall_ms / 1000.0,
            run.embed_cpu_ms as f64 / 1000.0,
            run.tool_while_embedding.tail_summary(),
            run.query_at_50.tail_summary(),
            run.tool_while_indexing.tail_summary(),
            base.tail_summary(),
            run.tool_while_indexing.median() - base.median(),
            run.tool_while_indexing.p90() - base.p90(),
            run.tool_idle.tail_summary(),
            run.open_ms.summary(),
            run.index_bytes as f64 / 1048576.0,
            run.rss_before_search_kib as f64 / 1024.0,
            run.peak_kib as f64 / 1024.0,
            run.model_bytes as f64 / 1e6,
        );
        if !run.misses.is_empty() {
            let _ = writeln!(
                out,
                "<details><summary>hybrid: {} queries not ranked first</summary>\n",
                run.misses.len()
            );
            for miss in &run.misses {
                let _ = writeln!(out, "- {miss}");
            }
            let _ = writeln!(out, "\n</details>\n");
        }
    }
    out
}

/// A JSON file holding a list.
fn read_json(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a JSON list", path.display()))
}

/// The corpus pages' folder, fetched first if a page is missing.
pub(crate) fn fetch_corpus(root: &Path, ids: &[String]) -> anyhow::Result<PathBuf> {
    fetch_corpus_of(root, &root.join("benches/search/corpus.json"), ids)
}

/// The pages of `corpus` (a list shaped like `benches/search/corpus.json`), fetched
/// into `target/search-corpus/pages` if one is missing; that folder.
fn fetch_corpus_of(root: &Path, corpus: &Path, ids: &[String]) -> anyhow::Result<PathBuf> {
    let target = root.join("target/search-corpus");
    let pages = target.join("pages");
    if ids
        .iter()
        .any(|id| !pages.join(format!("{id}.html")).exists())
    {
        println!("fetching the corpus (scripts/fetch-search-corpus.sh)…");
        let status = std::process::Command::new(root.join("scripts/fetch-search-corpus.sh"))
            .arg(&target)
            .env("CORPUS", corpus)
            .status()
            .context("cannot run scripts/fetch-search-corpus.sh")?;
        if !status.success() {
            bail!("scripts/fetch-search-corpus.sh failed");
        }
    }
    Ok(pages)
}

/// Serves `/p/NAME.html` from `dir` (query strings ignored); returns the base URL.
async fn serve_dir(dir: PathBuf) -> anyhow::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let dir = dir.clone();
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]);
                let name = request
                    .strip_prefix("GET /p/")
                    .and_then(|rest| rest.split([' ', '?']).next())
                    .filter(|n| !n.contains('/') && !n.contains(".."));
                let body = name.and_then(|n| std::fs::read(dir.join(n)).ok());
                let head = match &body {
                    Some(b) => format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        b.len()
                    ),
                    None => {
                        "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_owned()
                    }
                };
                let _ = socket.write_all(head.as_bytes()).await;
                if let Some(body) = body {
                    let _ = socket.write_all(&body).await;
                }
            });
        }
    });
    Ok(base)
}

async fn start(extra: &[String]) -> anyhow::Result<(Client, tokio::process::Child)> {
    start_binary(&tabwire_binary()?, extra).await
}

async fn start_binary(
    binary: &Path,
    extra: &[String],
) -> anyhow::Result<(Client, tokio::process::Child)> {
    let (client, child) = crate::start_binary_with(binary, extra).await?;
    // The browser starts on the first call; nothing is timed before it is up.
    tokio::time::timeout(
        Duration::from_secs(60),
        call(&client, "list_tabs", json!({})),
    )
    .await
    .context("tabwire did not answer within 60 s")??;
    Ok((client, child))
}
