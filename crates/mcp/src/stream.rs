//! A byte-stream transport (stdio, a broker connection) that follows the protocol before
//! `initialize`: a notification or a response that arrives first is ignored, a `ping` is
//! answered (the protocol allows pings at any time), another request other than
//! `initialize` is answered "not initialized", a line that is not JSON is
//! answered with a parse error; the session starts with the first `initialize`. rmcp's
//! own transport only ever sees a well-formed start.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};

/// JSON-RPC's code for a request made before the server is initialized.
const NOT_INITIALIZED: i64 = -32002;
/// JSON-RPC's code for a message that is not JSON.
const PARSE_ERROR: i64 = -32700;

/// Buffer between the guard and rmcp.
const PIPE: usize = 1 << 20;

/// Wraps a client's byte streams; rmcp reads and writes the returned pair.
pub fn guard_initialize<R, W>(reader: R, writer: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (rmcp_reads, mut feed) = tokio::io::duplex(PIPE);
    let (rmcp_writes, mut replies) = tokio::io::duplex(PIPE);
    let (early_tx, mut early_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let mut lines = BufReader::new(reader);
        let mut line = String::new();
        // Until the first initialize, each line is looked at; after it, bytes flow.
        loop {
            line.clear();
            match lines.read_line(&mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            match answer_before_initialize(line.trim()) {
                Early::Initialize => {
                    if feed.write_all(line.as_bytes()).await.is_err() {
                        return;
                    }
                    break;
                }
                Early::Ignore => {}
                Early::Reply(reply) => {
                    let _ = early_tx.send(reply);
                }
            }
        }
        drop(early_tx);
        let _ = tokio::io::copy_buf(&mut lines, &mut feed).await;
        let _ = feed.shutdown().await;
    });
    tokio::spawn(async move {
        let mut writer = writer;
        // rmcp says nothing before initialize, so the early answers go first.
        while let Some(reply) = early_rx.recv().await {
            if writer
                .write_all(format!("{reply}\n").as_bytes())
                .await
                .is_err()
            {
                return;
            }
            let _ = writer.flush().await;
        }
        let _ = copy_flushing(&mut replies, &mut writer).await;
    });
    (rmcp_reads, rmcp_writes)
}

/// Copies and flushes after every chunk, so each reply reaches the client at once.
async fn copy_flushing<W: AsyncWrite + Unpin>(
    from: &mut DuplexStream,
    to: &mut W,
) -> std::io::Result<()> {
    use tokio::io::AsyncReadExt;
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = from.read(&mut buffer).await?;
        if read == 0 {
            return Ok(());
        }
        to.write_all(&buffer[..read]).await?;
        to.flush().await?;
    }
}

enum Early {
    Initialize,
    Ignore,
    Reply(String),
}

fn answer_before_initialize(line: &str) -> Early {
    if line.is_empty() {
        return Early::Ignore;
    }
    let Ok(message) = serde_json::from_str::<Value>(line) else {
        return Early::Reply(error(
            Value::Null,
            PARSE_ERROR,
            "Parse error: the line is not JSON",
        ));
    };
    let id = message.get("id").cloned();
    match (message["method"].as_str(), id) {
        (Some("initialize"), Some(_)) => Early::Initialize,
        (Some("ping"), Some(id)) => Early::Reply(pong(id)),
        // A request before initialize: the protocol says it may not be served yet.
        (Some(method), Some(id)) => Early::Reply(error(
            id,
            NOT_INITIALIZED,
            &format!("the server is not initialized: send initialize before {method}"),
        )),
        // A notification, or a response to nothing: ignored.
        _ => Early::Ignore,
    }
}

/// The answer to a `ping`: an empty result.
pub(crate) fn pong(id: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "result": {} }).to_string()
}

fn error(id: Value, code: i64, message: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_comes_before_initialize_is_answered_or_ignored() {
        assert!(matches!(
            answer_before_initialize(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#
            ),
            Early::Initialize
        ));
        assert!(matches!(
            answer_before_initialize(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Early::Ignore
        ));
        assert!(matches!(
            answer_before_initialize(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Early::Ignore
        ));
        match answer_before_initialize(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#) {
            Early::Reply(reply) => {
                let reply: Value = serde_json::from_str(&reply).unwrap();
                assert_eq!(reply["id"], 2);
                assert_eq!(reply["error"]["code"], NOT_INITIALIZED);
            }
            _ => panic!("a request before initialize is answered"),
        }
        match answer_before_initialize(r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#) {
            Early::Reply(reply) => {
                let reply: Value = serde_json::from_str(&reply).unwrap();
                assert_eq!(reply["id"], "p1");
                assert_eq!(reply["result"], json!({}));
                assert!(reply.get("error").is_none());
            }
            _ => panic!("a ping before initialize is answered"),
        }
        assert!(matches!(
            answer_before_initialize("not json"),
            Early::Reply(_)
        ));
    }
}
