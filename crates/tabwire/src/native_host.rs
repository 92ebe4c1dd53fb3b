//! `tabwire` started by the browser as the extension's native-messaging host.
//!
//! Chrome runs the host with the calling extension's origin as its first argument and
//! speaks native messaging on stdin/stdout (each message a 32-bit native-endian length and
//! JSON). The host relays every message, as one line, to the extension-link socket of the
//! process that owns the engine, and every line back as a message. Only our extension's
//! origin is served; the socket lives in the user's private runtime dir.

use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::broker;

/// The extension's id, fixed by the public key in extension/manifest.json.
pub const EXTENSION_ID: &str = "ppccifgifikdledggbjmlefilliimeen";
/// The native-messaging host name the extension connects to.
pub const HOST_NAME: &str = "dev.tabwire.link";
/// Chrome refuses messages from a host larger than this.
const MAX_TO_BROWSER: usize = 1024 * 1024;

/// The socket linked browsers reach the engine owner through.
pub fn link_socket() -> anyhow::Result<std::path::PathBuf> {
    Ok(broker::runtime_dir()?.join("extension-link.sock"))
}

pub async fn run(origin: &str) -> anyhow::Result<()> {
    let expected = format!("chrome-extension://{EXTENSION_ID}/");
    if origin != expected {
        bail!("refusing native-messaging caller {origin}: only {expected} may use this host");
    }
    let socket = link_socket()?;
    // The engine's owner may be starting; wait a little, then let the extension retry.
    let mut stream = None;
    for _ in 0..50 {
        match UnixStream::connect(&socket).await {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let stream = stream.with_context(|| {
        format!(
            "no tabwire is serving the extension link at {}",
            socket.display()
        )
    })?;
    let (from_engine, to_engine) = stream.into_split();
    // Both directions may write to the engine: relayed messages, and our own refusals.
    let to_engine = tokio::sync::Mutex::new(to_engine);
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let upstream = async {
        loop {
            let mut length = [0u8; 4];
            if stdin.read_exact(&mut length).await.is_err() {
                return Ok::<(), anyhow::Error>(());
            }
            let mut message = vec![0u8; u32::from_ne_bytes(length) as usize];
            stdin.read_exact(&mut message).await?;
            // One message a line: JSON never holds a raw newline outside strings.
            message.retain(|&b| b != b'\n');
            message.push(b'\n');
            to_engine.lock().await.write_all(&message).await?;
        }
    };
    let downstream = async {
        let mut lines = BufReader::new(from_engine).lines();
        while let Some(line) = lines.next_line().await? {
            if line.len() > MAX_TO_BROWSER {
                // The browser would drop it; answer the command here so its caller gets
                // a clear error rather than a timeout.
                let refusal = too_large(&line);
                to_engine.lock().await.write_all(refusal.as_bytes()).await?;
                continue;
            }
            stdout.write_all(&(line.len() as u32).to_ne_bytes()).await?;
            stdout.write_all(line.as_bytes()).await?;
            stdout.flush().await?;
        }
        Ok::<(), anyhow::Error>(())
    };
    tokio::select! {
        done = upstream => done,
        done = downstream => done,
    }
}

/// A CDP error reply (one line) for a command too large for native messaging.
fn too_large(line: &str) -> String {
    let id = serde_json::from_str::<serde_json::Value>(line)
        .ok()
        .and_then(|m| m["id"].as_u64());
    let message = format!(
        "the command is {} bytes; the extension link carries at most {MAX_TO_BROWSER} bytes a message",
        line.len()
    );
    format!(
        "{}\n",
        serde_json::json!({ "id": id, "error": { "code": -32000, "message": message } })
    )
}

/// The host manifest Chrome-family browsers read to find and trust this host.
pub fn manifest(binary: &std::path::Path) -> serde_json::Value {
    serde_json::json!({
        "name": HOST_NAME,
        "description": "tabwire extension link",
        "path": binary,
        "type": "stdio",
        "allowed_origins": [format!("chrome-extension://{EXTENSION_ID}/")],
    })
}

/// Where each browser looks for per-user native-messaging hosts on this OS.
pub fn manifest_dirs() -> Vec<(&'static str, std::path::PathBuf)> {
    let home = crate::home();
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    if cfg!(target_os = "macos") {
        let support = home.join("Library/Application Support");
        vec![
            ("Chrome", support.join("Google/Chrome/NativeMessagingHosts")),
            ("Chromium", support.join("Chromium/NativeMessagingHosts")),
            ("Edge", support.join("Microsoft Edge/NativeMessagingHosts")),
            (
                "Brave",
                support.join("BraveSoftware/Brave-Browser/NativeMessagingHosts"),
            ),
        ]
    } else {
        vec![
            ("Chrome", config.join("google-chrome/NativeMessagingHosts")),
            ("Chromium", config.join("chromium/NativeMessagingHosts")),
            ("Edge", config.join("microsoft-edge/NativeMessagingHosts")),
            (
                "Brave",
                config.join("BraveSoftware/Brave-Browser/NativeMessagingHosts"),
            ),
        ]
    }
}
