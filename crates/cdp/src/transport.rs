//! The two ways CDP messages travel: NUL-framed JSON over a pipe pair, and WebSocket text
//! frames. Both feed the same [`IncomingSink`].

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::CdpError;

/// The largest message a transport reads (the WebSocket's own limit too): screenshots
/// and large DOM reads arrive as single messages of many megabytes.
pub(crate) const MAX_MESSAGE: usize = 512 << 20;

/// Told of a message that could not be read: its first bytes, and why.
pub(crate) type OnUnreadable = Box<dyn Fn(&[u8], &str) + Send>;

pub(crate) struct IncomingSink {
    pub on_message: Box<dyn Fn(&str) + Send>,
    pub on_unreadable: OnUnreadable,
    pub on_close: Box<dyn Fn() + Send>,
}

impl IncomingSink {
    /// One framed message: text, or said to be unreadable.
    fn deliver(&self, bytes: &[u8]) {
        match std::str::from_utf8(bytes) {
            Ok(text) if text.trim().is_empty() => {}
            Ok(text) => (self.on_message)(text),
            Err(_) => (self.on_unreadable)(bytes, "the message is not UTF-8"),
        }
    }

    fn too_large(&self, head: &[u8], size: usize, limit: usize) {
        let why =
            format!("the message is {size} bytes long, more than the {limit} a message may have");
        (self.on_unreadable)(head, &why);
    }
}

/// How far the writer has got: bytes it has begun to hand to the transport (each
/// message its length and one byte of framing), and whether the connection closed.
///
/// The writer counts a message before it writes it and then looks at `closed`; `close`
/// sets `closed` and then reads the count (all sequentially consistent). So either the
/// writer sees the close and writes nothing more, or the close counts the message as
/// handed over. Bytes the transport holds are never more than the count, so a message
/// the count has not reached was never written.
#[derive(Default)]
pub(crate) struct Progress {
    pub handed: std::sync::atomic::AtomicU64,
    pub closed: std::sync::atomic::AtomicBool,
}

/// What a writer sends, and where it says how far it got.
pub(crate) struct Outgoing {
    pub messages: mpsc::UnboundedReceiver<String>,
    pub progress: std::sync::Arc<Progress>,
    /// Turns true when the connection is closed: the writer then ends, and with it the
    /// transport (a WebSocket says Close), even with no message to write.
    pub closed: tokio::sync::watch::Receiver<bool>,
}

/// A message's size in the units `Progress::written` counts.
pub(crate) fn framed_len(message: &str) -> u64 {
    message.len() as u64 + 1
}

impl Outgoing {
    /// The next message to write, counted as handed over, unless the connection has
    /// closed (see `Progress`).
    async fn next(&mut self) -> Option<String> {
        use std::sync::atomic::Ordering::SeqCst;
        let message = tokio::select! {
            message = self.messages.recv() => message?,
            _ = self.closed.wait_for(|closed| *closed) => return None,
        };
        self.progress.handed.fetch_add(framed_len(&message), SeqCst);
        (!self.progress.closed.load(SeqCst)).then_some(message)
    }
}

pub(crate) async fn pipe_writer<W: tokio::io::AsyncWrite + Unpin>(
    mut pipe: W,
    mut outgoing: Outgoing,
) {
    while let Some(message) = outgoing.next().await {
        let mut frame = message.into_bytes();
        frame.push(0);
        if pipe.write_all(&frame).await.is_err() {
            break;
        }
    }
}

/// Splits a byte stream into messages ended by `terminator`, each at most MAX_MESSAGE
/// long: a longer one is skipped to its end and said to be unreadable, not buffered.
struct Framer {
    terminator: u8,
    limit: usize,
    buffer: Vec<u8>,
    /// Only the bytes after this can hold a new terminator.
    scanned: usize,
    /// Inside a message over the limit: its first bytes and how long it is so far.
    skipping: Option<(Vec<u8>, usize)>,
}

impl Framer {
    fn new(terminator: u8, limit: usize) -> Framer {
        Framer {
            terminator,
            limit,
            buffer: Vec::with_capacity(64 * 1024),
            scanned: 0,
            skipping: None,
        }
    }

    fn feed(&mut self, mut bytes: &[u8], sink: &IncomingSink) {
        while !bytes.is_empty() {
            if let Some((head, size)) = &mut self.skipping {
                match bytes.iter().position(|&b| b == self.terminator) {
                    Some(end) => {
                        *size += end;
                        sink.too_large(head, *size, self.limit);
                        self.skipping = None;
                        bytes = &bytes[end + 1..];
                    }
                    None => {
                        *size += bytes.len();
                        return;
                    }
                }
                continue;
            }
            self.buffer.extend_from_slice(bytes);
            bytes = &[];
            while let Some(offset) = self.buffer[self.scanned..]
                .iter()
                .position(|&b| b == self.terminator)
            {
                let end = self.scanned + offset;
                sink.deliver(&self.buffer[..end]);
                self.buffer.drain(..=end);
                self.scanned = 0;
            }
            self.scanned = self.buffer.len();
            if self.buffer.len() > self.limit {
                let head = self.buffer[..self.buffer.len().min(64)].to_vec();
                self.skipping = Some((head, self.buffer.len()));
                self.buffer = Vec::with_capacity(64 * 1024);
                self.scanned = 0;
            }
        }
    }
}

async fn read_frames<R: tokio::io::AsyncRead + Unpin>(
    mut from: R,
    terminator: u8,
    sink: IncomingSink,
) {
    let mut framer = Framer::new(terminator, MAX_MESSAGE);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => framer.feed(&chunk[..n], &sink),
        }
    }
    (sink.on_close)();
}

pub(crate) async fn pipe_reader<R: tokio::io::AsyncRead + Unpin>(pipe: R, sink: IncomingSink) {
    read_frames(pipe, 0, sink).await;
}

pub(crate) async fn line_writer<W: tokio::io::AsyncWrite + Unpin>(
    mut writer: W,
    mut outgoing: Outgoing,
) {
    while let Some(message) = outgoing.next().await {
        let mut line = message.into_bytes();
        line.push(b'\n');
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
}

pub(crate) async fn line_reader<R: tokio::io::AsyncRead + Unpin>(reader: R, sink: IncomingSink) {
    read_frames(reader, b'\n', sink).await;
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a WebSocket endpoint may take to accept the handshake, unless the caller
/// says otherwise (a farm's queue can hold a connection far longer).
pub(crate) const CONNECT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) async fn connect_websocket(
    url: &str,
    wait: std::time::Duration,
) -> Result<Socket, CdpError> {
    let mut config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default();
    // Screenshots and large DOM reads arrive as single messages of many megabytes.
    config.max_message_size = Some(MAX_MESSAGE);
    config.max_frame_size = Some(MAX_MESSAGE);
    // An endpoint that accepts the connection but never answers the handshake must not
    // hold the caller forever.
    let handshake = tokio_tungstenite::connect_async_with_config(url, Some(config), true);
    // The URL may carry a farm's token: errors name it without its query.
    let shown = without_query(url);
    let (socket, _) = tokio::time::timeout(wait, handshake)
        .await
        .map_err(|_| CdpError::Queued {
            endpoint: shown.clone(),
            waited: wait,
        })?
        .map_err(|error| refusal(&shown, error))?;
    Ok(socket)
}

/// A handshake's failure: an HTTP answer instead of an upgrade (a farm over its limit,
/// a wrong token) keeps its status, the server's words and its `Retry-After`.
fn refusal(shown: &str, error: tokio_tungstenite::tungstenite::Error) -> CdpError {
    use tokio_tungstenite::tungstenite::Error;
    let Error::Http(response) = error else {
        return CdpError::Connect(format!("{shown}: {error}"));
    };
    let body = response
        .body()
        .as_deref()
        .map(|bytes| {
            String::from_utf8_lossy(bytes)
                .trim()
                .chars()
                .take(200)
                .collect()
        })
        .unwrap_or_default();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    CdpError::Refused {
        endpoint: shown.to_owned(),
        status: response.status().as_u16(),
        reason: response
            .status()
            .canonical_reason()
            .unwrap_or_default()
            .to_owned(),
        body,
        retry_after,
    }
}

/// A URL as it may be shown: without its query, where credentials travel.
pub fn without_query(url: &str) -> String {
    match url.split_once('?') {
        Some((base, _)) => format!("{base}?…"),
        None => url.to_owned(),
    }
}

pub(crate) fn spawn_websocket(socket: Socket, mut outgoing: Outgoing, sink: IncomingSink) {
    let (mut write, mut read) = socket.split();
    tokio::spawn(async move {
        while let Some(message) = outgoing.next().await {
            if write.send(Message::Text(message.into())).await.is_err() {
                break;
            }
        }
        let _ = write.close().await;
    });
    tokio::spawn(async move {
        while let Some(frame) = read.next().await {
            match frame {
                Ok(Message::Text(text)) => (sink.on_message)(text.as_str()),
                Ok(Message::Binary(bytes)) => sink.deliver(&bytes),
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
        (sink.on_close)();
    });
}

#[cfg(test)]
mod tests {
    use parking_lot::Mutex;
    use std::sync::Arc;

    use super::*;

    /// A sink that records what it was told.
    fn recording() -> (IncomingSink, Arc<Mutex<Vec<String>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (messages, unreadable, closed) = (seen.clone(), seen.clone(), seen.clone());
        let sink = IncomingSink {
            on_message: Box::new(move |text| messages.lock().push(format!("msg {text}"))),
            on_unreadable: Box::new(move |head, why| {
                let head = String::from_utf8_lossy(head);
                unreadable.lock().push(format!("bad {head} / {why}"))
            }),
            on_close: Box::new(move || closed.lock().push("closed".into())),
        };
        (sink, seen)
    }

    #[test]
    fn messages_split_across_reads_are_joined_and_an_overlong_one_is_skipped_and_named() {
        let (sink, seen) = recording();
        let mut framer = Framer::new(0, 16);
        framer.feed(b"{\"id\":1}\0{\"id\"", &sink);
        framer.feed(b":2}\0{\"id\":3,\"result\":\"", &sink);
        framer.feed(b"far too long for the limit\"}\0{\"id\":4}\0", &sink);
        let seen = seen.lock().clone();
        assert_eq!(seen[0], "msg {\"id\":1}");
        assert_eq!(seen[1], "msg {\"id\":2}");
        assert!(seen[2].starts_with("bad {\"id\":3,"), "{seen:?}");
        assert!(
            seen[2].contains("46 bytes long, more than the 16"),
            "{seen:?}"
        );
        assert_eq!(seen[3], "msg {\"id\":4}");
        assert_eq!(seen.len(), 4);
    }

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_named_and_the_stream_goes_on() {
        let (sink, seen) = recording();
        let bytes: &[u8] = b"{\"id\":1}\n{\"id\":2,\"x\":\"\xff\"}\n{\"id\":3}\n";
        line_reader(bytes, sink).await;
        let seen = seen.lock().clone();
        assert_eq!(seen[0], "msg {\"id\":1}");
        assert!(seen[1].starts_with("bad {\"id\":2"), "{seen:?}");
        assert!(seen[1].ends_with("not UTF-8"), "{seen:?}");
        assert_eq!(seen[2], "msg {\"id\":3}");
        assert_eq!(seen[3], "closed");
    }

    /// One connection to a listener that answers the handshake with `answer`.
    async fn handshake_answered(answer: &'static str) -> CdpError {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "ws://{}/chromium?token=secret",
            listener.local_addr().unwrap()
        );
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = vec![0u8; 4096];
            let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut request).await;
            let _ = tokio::io::AsyncWriteExt::write_all(&mut stream, answer.as_bytes()).await;
        });
        match connect_websocket(&url, CONNECT_DEADLINE).await {
            Err(error) => error,
            Ok(_) => panic!("the handshake was not refused"),
        }
    }

    #[tokio::test]
    async fn a_farm_over_its_limit_is_a_refusal_with_its_words_and_retry_after() {
        let error = handshake_answered(
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Type: text/plain\r\nContent-Length: 17\r\n\r\nToo many requests",
        )
        .await;
        let shown = error.to_string();
        let CdpError::Refused {
            status,
            body,
            retry_after,
            endpoint,
            ..
        } = error
        else {
            panic!("not a refusal: {shown}");
        };
        assert_eq!(
            (status, body.as_str(), retry_after),
            (429, "Too many requests", Some(7))
        );
        // The token in the URL is never shown.
        assert!(
            !endpoint.contains("secret") && !shown.contains("secret"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn a_wrong_token_is_a_refusal_without_a_retry() {
        let error = handshake_answered(
            "HTTP/1.1 401 Unauthorized\r\nContent-Length: 34\r\n\r\nBad or missing authentication.    ",
        )
        .await;
        assert!(
            matches!(
                error,
                CdpError::Refused {
                    status: 401,
                    retry_after: None,
                    ..
                }
            ),
            "{error}"
        );
    }
}
