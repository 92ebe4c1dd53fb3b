//! `bench link`: the same tool calls over the managed link (a Chromium tabwire launched,
//! CDP over a pipe) and the extension link (a Chromium with the tabwire extension,
//! chrome.debugger and native messaging), taking turns call by call, so the relay's cost
//! shows as a ratio measured side by side.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use anyhow::{Context, bail};
use rmcp::ServiceExt;
use serde_json::{Value, json};

use crate::stats::Samples;
use crate::{Client, call, pages, servers, start_tabwire, tabwire_binary};

/// One measured call: a label and the tool call it makes, given the site's base URL and
/// the run number.
type Operation = (&'static str, fn(&str, usize) -> (&'static str, Value));

const OPERATIONS: &[Operation] = &[
    ("open_url (small page)", |site, _| {
        ("open_url", json!({ "url": format!("{site}/small") }))
    }),
    ("scan_page (small page)", |_, _| ("scan_page", json!({}))),
    ("page_click", |_, _| {
        ("page_click", json!({ "selector": "#go" }))
    }),
    ("page_type", |_, n| {
        (
            "page_type",
            json!({ "selector": "#name", "text": format!("run {n}") }),
        )
    }),
    ("execute_js (a value)", |_, _| {
        ("execute_js", json!({ "script": "document.title" }))
    }),
    ("execute_js (navigates)", |site, n| {
        (
            "execute_js",
            json!({ "script": format!("location.href = '{site}/small?run={n}'") }),
        )
    }),
    ("storage_set (2 MiB value)", |_, n| {
        (
            "storage_set",
            json!({ "key": "big", "value": format!("{n}").repeat(2 << 20) }),
        )
    }),
];

pub async fn run(runs: usize) -> anyhow::Result<()> {
    let site = pages::serve().await?;
    let scratch = std::env::temp_dir().join(format!("tabwire-bench-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let (managed, _managed_child) = start_tabwire().await?;
    let linked = LinkedBrowser::start(&scratch).await?;
    // Both start on the small page; the first call over the link waits for it to link.
    for client in [&managed, &linked.client] {
        call(
            client,
            "open_url",
            json!({ "url": format!("{site}/small") }),
        )
        .await?;
    }
    println!("each row: {runs} calls on each link, in turns (managed, extension, managed, …)\n");
    println!(
        "{:<28} {:>16} {:>16} {:>8}",
        "call", "managed median", "extension median", "ratio"
    );
    for (label, make) in OPERATIONS {
        let (mut over_pipe, mut over_link) = (Samples::default(), Samples::default());
        for n in 0..runs {
            for (client, samples) in [(&managed, &mut over_pipe), (&linked.client, &mut over_link)]
            {
                let (tool, args) = make(&site, n);
                let started = Instant::now();
                let (data, _) = call(client, tool, args).await?;
                samples.push(started.elapsed());
                check(label, &data)?;
            }
        }
        println!(
            "{label:<28} {:>13.2} ms {:>13.2} ms {:>7.2}×",
            over_pipe.median(),
            over_link.median(),
            over_link.median() / over_pipe.median()
        );
    }
    drop(linked);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// What each call must have done, so a fast wrong answer cannot pass for a measurement.
fn check(label: &str, data: &Value) -> anyhow::Result<()> {
    let fine = match label {
        "execute_js (navigates)" => data["status"] == "navigated",
        "storage_set (2 MiB value)" => data["verified"] == true,
        "page_click" => data["target"]["hit_verified"] == true,
        _ => true,
    };
    if !fine {
        bail!("{label}: unexpected result {data}");
    }
    Ok(())
}

/// `tabwire --extension` and a headless Chromium that loads the extension, each with its
/// own private dirs under the scratch folder.
struct LinkedBrowser {
    client: Client,
    _server: tokio::process::Child,
    _browser: tokio::process::Child,
}

impl LinkedBrowser {
    async fn start(scratch: &Path) -> anyhow::Result<LinkedBrowser> {
        let profile = scratch.join("profile");
        let extension = tabwire(scratch, &["extension-path"]).await?;
        let profile_arg = profile.display().to_string();
        tabwire(
            scratch,
            &[
                "install-native-host",
                "--browser-user-data-dir",
                &profile_arg,
            ],
        )
        .await?;
        let mut server = with_dirs(tokio::process::Command::new(tabwire_binary()?), scratch);
        let mut server = server
            .args(["--extension", "--broker-grace", "0", "--output-dir"])
            .arg(scratch.join("out"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()?;
        let mut browser = with_dirs(tokio::process::Command::new(servers::CHROMIUM), scratch);
        let browser = browser
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--load-extension={}", extension.trim()))
            .arg("about:blank")
            .env("HOME", scratch.join("home"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot start {}", servers::CHROMIUM))?;
        let stdout = server.stdout.take().context("stdout")?;
        let stdin = server.stdin.take().context("stdin")?;
        let client = ().serve((stdout, stdin)).await?;
        Ok(LinkedBrowser {
            client,
            _server: server,
            _browser: browser,
        })
    }
}

/// The dirs both sides of the link must agree on (socket, pairing secret, extension).
fn with_dirs(mut command: tokio::process::Command, scratch: &Path) -> tokio::process::Command {
    let dir = |name: &str| -> PathBuf { scratch.join(name) };
    command
        .env("XDG_RUNTIME_DIR", dir("run"))
        .env("XDG_CONFIG_HOME", dir("config"))
        .env("XDG_DATA_HOME", dir("data"))
        .env("XDG_STATE_HOME", dir("state"));
    command
}

async fn tabwire(scratch: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = with_dirs(tokio::process::Command::new(tabwire_binary()?), scratch)
        .args(args)
        .output()
        .await?;
    if !output.status.success() {
        bail!(
            "tabwire {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?)
}
