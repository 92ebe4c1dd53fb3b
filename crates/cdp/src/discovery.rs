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
        return Err(DiscoveryError::Scheme(crate::transport::without_query(
            endpoint,
        )));
    };
    // A farm's endpoint carries its credentials in the query (`?token=…`): the discovery
    // request needs them, and so does the WebSocket URL it answers with.
    let (address, query) = match rest.split_once('?') {
        Some((address, query)) => (address, Some(query)),
        None => (rest, None),
    };
    let authority = address.split('/').next().unwrap_or(address);
    let path = match query {
        Some(query) => format!("/json/version?{query}"),
        None => "/json/version".to_owned(),
    };
    // The endpoint as errors show it: its query may hold a farm's token.
    let shown = crate::transport::without_query(endpoint);
    let unreachable = |reason: String| DiscoveryError::Unreachable {
        endpoint: shown.clone(),
        reason,
    };
    let body = tokio::time::timeout(Duration::from_secs(10), http_get(authority, &path))
        .await
        .map_err(|_| unreachable("no answer within 10 s".into()))?
        .map_err(|e| unreachable(e.to_string()))?;
    let version: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| unreachable(format!("/json/version is not JSON: {e}")))?;
    let url =
        version["webSocketDebuggerUrl"]
            .as_str()
            .ok_or_else(|| DiscoveryError::NoDebuggerUrl {
                endpoint: shown.clone(),
            })?;
    Ok(with_query(url, query))
}

/// The WebSocket URL with the endpoint's query added when it names none of its own.
fn with_query(url: &str, query: Option<&str>) -> String {
    match query {
        Some(query) if !query.is_empty() && !url.contains('?') => format!("{url}?{query}"),
        _ => url.to_owned(),
    }
}

/// The status line's code and reason when an answer is not 200 (a farm's 401 or 429).
fn refused(response: &str) -> Option<String> {
    let status = response.lines().next()?;
    let code = status.split_whitespace().nth(1)?;
    (code != "200").then(|| status.trim().to_owned())
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
            return answered(&response, body);
        }
    }
    let body = complete_body(&response).unwrap_or_default();
    answered(&response, body)
}

/// The body of a 200 answer; any other status is an error that names it and what the
/// server said (a farm's `Bad or missing authentication.`).
fn answered(response: &[u8], body: String) -> std::io::Result<String> {
    match refused(&String::from_utf8_lossy(response)) {
        Some(status) => Err(std::io::Error::other(format!(
            "{status}: {}",
            body.trim().chars().take(200).collect::<String>()
        ))),
        None => Ok(body),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_query_goes_with_the_websocket_url() {
        assert_eq!(
            with_query("ws://127.0.0.1:3000", Some("token=t")),
            "ws://127.0.0.1:3000?token=t"
        );
        assert_eq!(
            with_query("ws://h/devtools/browser/1?token=own", Some("token=t")),
            "ws://h/devtools/browser/1?token=own"
        );
        assert_eq!(with_query("ws://h/x", None), "ws://h/x");
        assert_eq!(with_query("ws://h/x", Some("")), "ws://h/x");
    }

    #[test]
    fn a_refusal_is_named_by_its_status_line() {
        assert_eq!(
            refused("HTTP/1.1 401 Unauthorized\r\n\r\nBad"),
            Some("HTTP/1.1 401 Unauthorized".to_owned())
        );
        assert_eq!(refused("HTTP/1.1 200 OK\r\n\r\n{}"), None);
    }
}
