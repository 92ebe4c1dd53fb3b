//! `tabwire demo`: serves a small built-in page on loopback, starts tabwire as an MCP
//! server over stdio (a child process, exactly as an agent's client would), drives the
//! page through the MCP tools, and prints what the agent sees.

use std::process::Stdio;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const PAGE: &str = r#"<!doctype html><title>tabwire demo</title>
<h1>Sign up</h1>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'Welcome, ' + this.elements.name.value + '!'">
<label>Name <input name="name"></label>
<button>Join</button>
</form>
<p id="out"></p>
<ul>
<li><a href="/a">First link</a></li><li><a href="/b">Second link</a></li>
</ul>"#;

struct Client {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Client {
    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line).await? == 0 {
                bail!("the server closed its output");
            }
            let message: Value = serde_json::from_str(&line).context("server sent non-JSON")?;
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    bail!("{method} failed: {error}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    async fn send(&mut self, message: Value) -> anyhow::Result<()> {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await?;
        Ok(())
    }

    /// Calls a tool and returns the envelope it answered with.
    async fn tool(&mut self, name: &str, arguments: Value) -> anyhow::Result<Value> {
        println!("\n→ {name} {arguments}");
        let result = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        let text = result["content"][0]["text"].as_str().unwrap_or("{}");
        let envelope: Value = serde_json::from_str(text)?;
        if envelope["ok"] != true {
            bail!("{name} failed: {}", envelope["error"]);
        }
        Ok(envelope)
    }
}

pub async fn run() -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/", listener.local_addr()?);
    tokio::spawn(serve_page(listener));

    let exe = std::env::current_exe()?;
    let output = std::env::temp_dir().join("tabwire-demo");
    let mut child = Command::new(exe)
        .args(["--isolated", "--output-dir"])
        .arg(&output)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .context("cannot start tabwire")?;
    let stdin = child.stdin.take().context("no stdin")?;
    let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut client = Client {
        _child: child,
        stdin,
        stdout,
        next_id: 0,
    };

    client
        .request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tabwire-demo", "version": "1"}}))
        .await?;
    client
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await?;
    let tools = client.request("tools/list", json!({})).await?;
    println!(
        "tabwire serves {} tools over MCP (stdio).",
        tools["tools"].as_array().map_or(0, Vec::len)
    );

    let opened = client.tool("open_url", json!({ "url": url })).await?;
    println!(
        "  loaded {} ({})",
        opened["data"]["url"], opened["data"]["load_status"]
    );
    let scan = client
        .tool("scan_page", json!({ "max_targets": 5 }))
        .await?;
    println!(
        "  the agent reads:\n{}",
        indent(scan["data"]["content"].as_str().unwrap_or_default())
    );
    for target in scan["data"]["observation"]["targets"]
        .as_array()
        .into_iter()
        .flatten()
    {
        println!(
            "  target {} → {}",
            target["locator"], target["recommended_tool"]
        );
    }
    client
        .tool(
            "page_type",
            json!({ "selector": { "label": "Name" }, "text": "Ada" }),
        )
        .await?;
    let click = client
        .tool(
            "page_click",
            json!({ "selector": { "role": "button", "name": "Join" } }),
        )
        .await?;
    println!(
        "  clicked at ({}, {}), hit_verified={}",
        click["data"]["target"]["x"],
        click["data"]["target"]["y"],
        click["data"]["target"]["hit_verified"]
    );
    client
        .tool("wait_for", json!({ "text": "Welcome, Ada!" }))
        .await?;
    let read = client
        .tool(
            "execute_js",
            json!({ "script": "document.getElementById('out').textContent" }),
        )
        .await?;
    println!("  the page now says: {}", read["data"]["js_return"]);
    let shot = client
        .tool(
            "capture_page_screenshot",
            json!({ "save_path": "demo.png" }),
        )
        .await?;
    println!(
        "  screenshot {}×{} saved to {}",
        shot["data"]["image_width"], shot["data"]["image_height"], shot["data"]["saved_path"]
    );
    println!("\ndemo complete.");
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A loopback HTTP server that answers every request with the demo page.
async fn serve_page(listener: TcpListener) {
    while let Ok((mut socket, _)) = listener.accept().await {
        tokio::spawn(async move {
            let mut buffer = [0u8; 4096];
            let _ = socket.read(&mut buffer).await;
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{PAGE}",
                PAGE.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        });
    }
}
