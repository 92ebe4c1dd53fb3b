//! Finding a browser's WebSocket debugger URL from an `http://host:port` endpoint.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("unsupported CDP endpoint '{0}': use ws://, wss:// or http://host:port")]
    Scheme(String),
    #[error("cannot reach {endpoint}: {reason}")]
    Unreachable { endpoint: String, reason: String },
    #[error("{endpoint}/json/version did not name a webSocketDebuggerUrl")]
    NoDebuggerUrl { endpoint: String },
}

/// Turns a user-given endpoint into a WebSocket URL: `ws://…` is returned as is;
/// `http://host:port` is asked for `/json/version`.
pub async fn websocket_url(endpoint: &str) -> Result<String, DiscoveryError> {
    if endpoint.starts_with("ws://") || endpoint.starts_with("wss://") {
        return Ok(endpoint.to_owned());
    }
    let Some(rest) = endpoint.strip_prefix("http://") else {
        return Err(DiscoveryError::Scheme(endpoint.to_owned()));
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let unreachable = |reason: String| DiscoveryError::Unreachable {
        endpoint: endpoint.to_owned(),
        reason,
    };
    let body = tokio::time::timeout(
        Duration::from_secs(10),
        http_get(authority, "/json/version"),
    )
    .await
    .map_err(|_| unreachable("no answer within 10 s".into()))?
    .map_err(|e| unreachable(e.to_string()))?;
    let version: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| unreachable(format!("/json/version is not JSON: {e}")))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| DiscoveryError::NoDebuggerUrl {
            endpoint: endpoint.to_owned(),
        })
}

/// A minimal HTTP/1.1 GET. Chromium's DevTools HTTP server keeps the connection open
/// after answering, so the body is read by its Content-Length, not to end of stream.
async fn http_get(authority: &str, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(authority).await?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let read = stream.read(&mut chunk).await?;
        if read == 0 {
            break;
        }
        response.extend_from_slice(&chunk[..read]);
        if let Some(body) = complete_body(&response) {
            return Ok(body);
        }
    }
    Ok(complete_body(&response).unwrap_or_default())
}

/// The body once the headers and Content-Length bytes have all arrived.
fn complete_body(response: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(response);
    let (head, body) = text.split_once("\r\n\r\n")?;
    let length = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(usize::MAX);
    (body.len() >= length).then(|| body.to_owned())
}
