//! `tabwire` started by the browser as the extension's native-messaging host.
//!
//! Chrome runs the host with the calling extension's origin as its first argument and
//! speaks native messaging on stdin/stdout (each message a 32-bit native-endian length and
//! JSON). The host relays every message, as one line, to the extension-link socket of the
//! process that owns the engine, and every line back as a message. Only our extension's
//! origin is served; the socket lives in the user's private runtime dir.

use std::time::Duration;

use anyhow::{Context, bail};
use platform::local::{Endpoint, Stream};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The extension's id, fixed by the public key in extension/manifest.json.
pub const EXTENSION_ID: &str = "ppccifgifikdledggbjmlefilliimeen";
/// The native-messaging host name the extension connects to.
pub const HOST_NAME: &str = "dev.tabwire.link";
/// Chrome refuses messages from a host larger than 1 MiB; longer lines go as chunks of
/// this many bytes, which JSON escaping at most doubles (see `chunks`).
const CHUNK_BYTES: usize = 400 * 1024;

/// The socket linked browsers reach the engine owner through.
pub fn link_socket() -> anyhow::Result<Endpoint> {
    Ok(Endpoint::named("extension-link")?)
}

pub async fn run(origin: &str) -> anyhow::Result<()> {
    let expected = format!("chrome-extension://{EXTENSION_ID}/");
    if origin != expected {
        bail!("refusing native-messaging caller {origin}: only {expected} may use this host");
    }
    let pairing = crate::pairing::load_or_create()?;
    let socket = link_socket()?;
    // The engine's owner may be starting; wait a little, then let the extension retry.
    let mut stream = None;
    for _ in 0..50 {
        match Stream::connect(&socket).await {
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
    let (from_engine, to_engine) = tokio::io::split(stream);
    // Both directions may write to the engine: relayed messages, and our own refusals.
    let to_engine = tokio::sync::Mutex::new(to_engine);
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let upstream = async {
        let mut first = true;
        loop {
            let mut length = [0u8; 4];
            if stdin.read_exact(&mut length).await.is_err() {
                return Ok::<(), anyhow::Error>(());
            }
            let mut message = vec![0u8; u32::from_ne_bytes(length) as usize];
            stdin.read_exact(&mut message).await?;
            if std::mem::take(&mut first) {
                message = paired_hello(&message, &pairing)?;
            }
            // One message a line: JSON never holds a raw newline outside strings.
            message.retain(|&b| b != b'\n');
            message.push(b'\n');
            to_engine.lock().await.write_all(&message).await?;
        }
    };
    let downstream = async {
        let mut lines = BufReader::new(from_engine).lines();
        while let Some(line) = lines.next_line().await? {
            for message in chunks(line) {
                stdout
                    .write_all(&(message.len() as u32).to_ne_bytes())
                    .await?;
                stdout.write_all(message.as_bytes()).await?;
            }
            stdout.flush().await?;
        }
        Ok::<(), anyhow::Error>(())
    };
    tokio::select! {
        done = upstream => done,
        done = downstream => done,
    }
}

/// The extension's hello with the pairing secret added: the extension never holds it, so
/// nothing that can talk to the extension can learn it.
fn paired_hello(message: &[u8], pairing: &str) -> anyhow::Result<Vec<u8>> {
    let mut hello: serde_json::Value =
        serde_json::from_slice(message).context("the extension's first message is not JSON")?;
    let Some(fields) = hello.as_object_mut() else {
        bail!("the extension's first message is not a hello");
    };
    fields.insert("pairing".into(), pairing.into());
    Ok(serde_json::to_vec(&hello)?)
}

/// One line as native messages. A line within CHUNK_BYTES goes as it is; a longer one
/// (a large script or storage value) goes as `{"tabwire_chunk": "<part>", "last": bool}`
/// messages, cut at character boundaries, which link.js joins back into the line.
fn chunks(line: String) -> Vec<String> {
    if line.len() <= CHUNK_BYTES {
        return vec![line];
    }
    let mut parts = Vec::new();
    let mut rest = line.as_str();
    while !rest.is_empty() {
        let mut cut = rest.len().min(CHUNK_BYTES);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (part, tail) = rest.split_at(cut);
        parts.push(
            serde_json::json!({ "tabwire_chunk": part, "last": tail.is_empty() }).to_string(),
        );
        rest = tail;
    }
    parts
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_line_goes_whole() {
        assert_eq!(chunks("{\"id\":1}".into()), vec!["{\"id\":1}".to_string()]);
    }

    #[test]
    fn a_long_line_goes_in_parts_under_the_browser_limit_and_joins_back() {
        // Quotes double under JSON escaping; multi-byte characters must not be split.
        let value = "\"é\\".repeat(300_000);
        let line = serde_json::json!({ "id": 7, "params": { "value": value } }).to_string();
        let parts = chunks(line.clone());
        assert!(parts.len() > 1);
        let mut joined = String::new();
        for (i, part) in parts.iter().enumerate() {
            assert!(part.len() < 1024 * 1024, "part {i} is {} bytes", part.len());
            let message: serde_json::Value = serde_json::from_str(part).unwrap();
            assert_eq!(message["last"], i + 1 == parts.len());
            joined.push_str(message["tabwire_chunk"].as_str().unwrap());
        }
        assert_eq!(joined, line);
    }
}
