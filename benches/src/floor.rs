//! `bench floor`: the latency floor. The same work done with raw CDP, on a browser
//! launched exactly as tabwire launches one (`engine::browser::launch::launch_connected`,
//! its pipe), beside tabwire's tool doing it through MCP; the two take turns call by
//! call. Where every server sits near this floor (a screenshot is the browser encoding
//! an image), "0.5× the best peer" cannot be had, and the ratio to the floor is the
//! honest figure. Writes `docs/latency-floor.md`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};

use crate::stats::{AGENT_PAUSE, Samples, frame_phase};
use crate::{call, pages, start_tabwire};

const TIMEOUT: Duration = Duration::from_secs(30);

/// A raw CDP page: one tab of a browser tabwire's way, attached with a flat session.
pub(crate) struct RawPage {
    connection: cdp::Connection,
    session: String,
    _browser: engine::browser::launch::Connected,
}

impl RawPage {
    /// With `page_script`, tabwire's page script is registered for every new document in
    /// an isolated world (as tabwire did before it installed the script with a
    /// document's first call): what that costs a navigation shows.
    pub(crate) async fn open(page_script: bool) -> anyhow::Result<RawPage> {
        let options = engine::LaunchOptions::default();
        let browser = engine::browser::launch::launch_connected(&options).await?;
        let connection = browser.connection.clone();
        let target = connection
            .call(
                None,
                "Target.createTarget",
                // In a window of its own, as tabwire opens a tab in a browser it launched.
                json!({ "url": "about:blank", "newWindow": true }),
                TIMEOUT,
            )
            .await?;
        let target_id = target["targetId"].as_str().context("no targetId")?;
        let attached = connection
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target_id, "flatten": true }),
                TIMEOUT,
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .context("no sessionId")?
            .to_owned();
        connection
            .call(Some(&session), "Page.enable", json!({}), TIMEOUT)
            .await?;
        if page_script {
            connection
                .call(
                    Some(&session),
                    "Page.addScriptToEvaluateOnNewDocument",
                    json!({
                        "source": engine::page::page_script::install_source(),
                        "worldName": "tabwire",
                        "runImmediately": true,
                    }),
                    TIMEOUT,
                )
                .await?;
        }
        Ok(RawPage {
            connection,
            session,
            _browser: browser,
        })
    }

    pub(crate) async fn send(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        Ok(self
            .connection
            .call(Some(&self.session), method, params, TIMEOUT)
            .await?)
    }

    /// tabwire's isolated world of the document in `frame`, with the page script
    /// installed in it, as `Page::prepare_world` makes them.
    async fn world_with_script(&self, frame: &str) -> anyhow::Result<i64> {
        let created = self
            .send(
                "Page.createIsolatedWorld",
                json!({ "frameId": frame, "worldName": "tabwire" }),
            )
            .await?;
        let world = created["executionContextId"]
            .as_i64()
            .context("no isolated world")?;
        let install = json!({
            "expression": engine::page::page_script::install_source(),
            "contextId": world,
            "returnByValue": true,
        });
        let installed = self.send("Runtime.evaluate", install).await?;
        anyhow::ensure!(
            installed.get("exceptionDetails").is_none(),
            "the page script did not install: {installed}"
        );
        Ok(world)
    }

    /// The page script's scan with its defaults, its result by value (as tabwire reads it).
    async fn scan(&self, world: i64) -> anyhow::Result<()> {
        let scanned = self
            .send(
                "Runtime.evaluate",
                json!({ "expression": "__tabwire('scan', {})", "contextId": world, "returnByValue": true }),
            )
            .await?;
        anyhow::ensure!(
            scanned["result"]["value"]["content"].is_string(),
            "the scan failed: {scanned}"
        );
        Ok(())
    }

    /// `Page.navigate`, then the load event of this session.
    pub(crate) async fn navigate(&self, url: &str) -> anyhow::Result<()> {
        let mut events = self.connection.subscribe();
        self.send("Page.navigate", json!({ "url": url })).await?;
        loop {
            let event = tokio::time::timeout(TIMEOUT, events.recv())
                .await
                .context("no load event")??;
            if event.method == "Page.loadEventFired"
                && event.session_id.as_deref() == Some(&self.session)
            {
                return Ok(());
            }
        }
    }
}

/// One row: what is timed, the raw CDP way and tabwire's.
struct Row {
    label: &'static str,
    floor: &'static str,
    raw: Samples,
    tabwire: Samples,
}

pub async fn run(runs: usize) -> anyhow::Result<()> {
    let site = pages::serve().await?;
    let raw = RawPage::open(false).await?;
    let scripted = RawPage::open(true).await?;
    let (tabwire, _child) = start_tabwire().await?;
    call(
        &tabwire,
        "open_url",
        json!({ "url": format!("{site}/small") }),
    )
    .await?;
    raw.navigate(&format!("{site}/small")).await?;
    scripted.navigate(&format!("{site}/small")).await?;

    let mut rows = vec![
        Row {
            label: "navigate (small page), until loaded",
            floor: "`Page.navigate`, then `Page.loadEventFired`",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "navigate, raw CDP with tabwire's page script registered",
            floor: "the same, after `Page.addScriptToEvaluateOnNewDocument` of the page script (isolated world)",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "navigate, raw CDP with the page script, then the URL and title read",
            floor: "the same, then `Runtime.evaluate` of `[location.href, document.title]`",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "navigate, raw CDP with the page script, then the history entry read",
            floor: "the same, then `Page.getNavigationHistory` (the browser's record of URL and title)",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "screenshot (viewport, PNG)",
            floor: "`Page.captureScreenshot {format: png}`",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "screenshot (viewport, PNG), fastest encoding",
            floor: "`Page.captureScreenshot {format: png, optimizeForSpeed: true}`",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "navigate, change the page's text, screenshot (timed whole; `bench peers`' case)",
            floor: "`Page.navigate`, the load, `Runtime.evaluate` of the change, `Page.captureScreenshot {format: png, optimizeForSpeed: true}`",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "snapshot the moment a navigation returns",
            floor: "`Accessibility.getFullAXTree` (what Chrome DevTools MCP reads), right after `Page.loadEventFired`",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "snapshot the moment a navigation returns, raw CDP doing tabwire's work",
            floor: "right after the load: `Page.createIsolatedWorld`, `Runtime.evaluate` of the page script, `Runtime.evaluate` of its scan",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "snapshot 200 ms after a navigation (an agent's pause)",
            floor: "`Accessibility.getFullAXTree`, 200 ms after the load",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "snapshot 200 ms after a navigation, raw CDP doing tabwire's work",
            floor: "world and page script made right after the load (untimed), then 200 ms later `Runtime.evaluate` of the scan",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "snapshot of a page already read",
            floor: "`Accessibility.getFullAXTree` again",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
        Row {
            label: "navigate, then snapshot at once (the pair, timed whole)",
            floor: "`Page.navigate`, the load, then the world, the page script and its scan",
            raw: Samples::default(),
            tabwire: Samples::default(),
        },
    ];
    let frame = raw.send("Page.getFrameTree", json!({})).await?["frameTree"]["frame"]["id"]
        .as_str()
        .context("no main frame")?
        .to_owned();
    for n in 0..runs {
        let url = format!("{site}/small?floor={n}");
        let timed = Instant::now();
        raw.navigate(&url).await?;
        rows[0].raw.push(timed.elapsed());
        let timed = Instant::now();
        call(&tabwire, "open_url", json!({ "url": url })).await?;
        let tabwire_navigate = timed.elapsed();
        for row in &mut rows[0..4] {
            row.tabwire.push(tabwire_navigate);
        }
        let timed = Instant::now();
        scripted.navigate(&url).await?;
        rows[1].raw.push(timed.elapsed());
        let expression =
            json!({ "expression": "[location.href, document.title]", "returnByValue": true });
        for (row, method, params) in [
            (2, "Runtime.evaluate", expression),
            (3, "Page.getNavigationHistory", json!({})),
        ] {
            let url = format!("{url}&read={row}");
            let timed = Instant::now();
            scripted.navigate(&url).await?;
            let read = scripted.send(method, params).await?;
            rows[row].raw.push(timed.elapsed());
            // The title of the page just loaded: the evaluate's value, or the current entry.
            let title = match row {
                2 => read["result"]["value"][1].clone(),
                _ => read["entries"][read["currentIndex"].as_u64().unwrap_or(0) as usize]["title"]
                    .clone(),
            };
            anyhow::ensure!(title == "Small", "no title read: {read}");
        }

        for (row, speed) in [(4, false), (5, true)] {
            tokio::time::sleep(frame_phase(2 * n + row)).await;
            let timed = Instant::now();
            raw.send(
                "Page.captureScreenshot",
                json!({ "format": "png", "optimizeForSpeed": speed }),
            )
            .await?;
            rows[row].raw.push(timed.elapsed());
            tokio::time::sleep(frame_phase(2 * n + row)).await;
            let timed = Instant::now();
            call(&tabwire, "capture_page_screenshot", json!({})).await?;
            rows[row].tabwire.push(timed.elapsed());
        }

        // The first capture of a new document, as `bench peers` takes it: the page has
        // just loaded and its text just changed. Timed whole (navigation, change, capture)
        // on both sides, so neither gets longer than the other to draw before its capture.
        let change = "document.getElementById('count').textContent = performance.now()";
        tokio::time::sleep(frame_phase(2 * n + 6)).await;
        let timed = Instant::now();
        raw.navigate(&format!("{url}&shot=raw")).await?;
        raw.send("Runtime.evaluate", json!({ "expression": change }))
            .await?;
        raw.send(
            "Page.captureScreenshot",
            json!({ "format": "png", "optimizeForSpeed": true }),
        )
        .await?;
        rows[6].raw.push(timed.elapsed());
        tokio::time::sleep(frame_phase(2 * n + 6)).await;
        let timed = Instant::now();
        call(
            &tabwire,
            "open_url",
            json!({ "url": format!("{url}&shot=tabwire") }),
        )
        .await?;
        call(&tabwire, "execute_js", json!({ "script": change })).await?;
        call(&tabwire, "capture_page_screenshot", json!({})).await?;
        rows[6].tabwire.push(timed.elapsed());

        for (first, paused) in [(7, false), (9, true)] {
            let url = format!("{url}&snapshot={first}");
            raw.navigate(&format!("{url}&raw=ax")).await?;
            if paused {
                tokio::time::sleep(AGENT_PAUSE).await;
            }
            let timed = Instant::now();
            raw.send("Accessibility.getFullAXTree", json!({})).await?;
            rows[first].raw.push(timed.elapsed());

            let navigating = Instant::now();
            raw.navigate(&format!("{url}&raw=script")).await?;
            let timed = Instant::now();
            let world = raw.world_with_script(&frame).await?;
            if paused {
                tokio::time::sleep(AGENT_PAUSE).await;
            }
            let timed = if paused { Instant::now() } else { timed };
            raw.scan(world).await?;
            rows[first + 1].raw.push(timed.elapsed());
            if !paused {
                rows[12].raw.push(navigating.elapsed());
            }

            let navigating = Instant::now();
            call(&tabwire, "open_url", json!({ "url": url })).await?;
            if paused {
                tokio::time::sleep(AGENT_PAUSE).await;
            }
            let timed = Instant::now();
            call(&tabwire, "scan_page", json!({})).await?;
            let scanned = timed.elapsed();
            rows[first].tabwire.push(scanned);
            rows[first + 1].tabwire.push(scanned);
            if !paused {
                rows[12].tabwire.push(navigating.elapsed());
            }
        }

        // Read once untimed: tabwire's page was just scanned, raw CDP's not yet read.
        raw.send("Accessibility.getFullAXTree", json!({})).await?;
        let timed = Instant::now();
        raw.send("Accessibility.getFullAXTree", json!({})).await?;
        rows[11].raw.push(timed.elapsed());
        let timed = Instant::now();
        call(&tabwire, "scan_page", json!({})).await?;
        rows[11].tabwire.push(timed.elapsed());
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Latency floor: tabwire beside raw CDP\n\n`cargo build --release -p tabwire -p bench && ./target/release/bench floor --runs {runs}`\n\n\
         Each row: {runs} calls each way, in turns. Raw CDP runs on a browser launched as tabwire \
         launches one (same flags, same pipe), one command after another with no MCP in between; \
         tabwire's figure is its tool through MCP over stdio. Medians (p10–p90).\n\n\
         | work | raw CDP | tabwire | tabwire ÷ raw | raw CDP call |\n|---|---:|---:|---:|---|"
    );
    for row in &rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2}× | {} |",
            row.label,
            row.raw.summary().trim_start_matches("median").trim(),
            row.tabwire.summary().trim_start_matches("median").trim(),
            row.tabwire.median() / row.raw.median(),
            row.floor
        );
    }
    let _ = writeln!(
        out,
        "\nThe navigate rows time tabwire's one `open_url` against each raw variant: the second \
         is raw CDP that also registers tabwire's page script for every new document (the part \
         of a navigation that is the script, and the part that is tabwire). The screenshot rows \
         time tabwire's one default capture (PNG, fastest encoding, `Page.getLayoutMetrics` \
         alongside) against each raw variant; before each timed capture, raw or tabwire, both \
         pause the same fraction of a 60 Hz frame (a different one each time), because a \
         capture waits for Chromium's next frame and back-to-back calls would otherwise always \
         meet the frame clock at the same phase. The snapshot rows time tabwire's `scan_page` \
         against Chromium's accessibility tree and against raw CDP doing what tabwire does, at \
         two moments: the instant the navigation returns (the page's main thread is still busy \
         with the load: every first call to the page waits for it) and after a 200 ms pause. \
         At once, raw CDP's timer starts at the load event and tabwire's when `open_url`'s \
         reply arrives, a few ms later, with its world already being made in the background; \
         the last row times both pairs whole, which no such head start flatters."
    );
    println!("{out}");
    std::fs::write(crate::workspace().join("docs/latency-floor.md"), out)?;
    println!("written: docs/latency-floor.md");
    Ok(())
}
