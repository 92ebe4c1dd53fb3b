//! The two ways CDP messages travel: NUL-framed JSON over a pipe pair, and WebSocket text
//! frames. Both feed the same [`IncomingSink`].

use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::CdpError;

pub(crate) struct IncomingSink {
    pub on_message: Box<dyn Fn(&str) + Send>,
    pub on_close: Box<dyn Fn() + Send>,
}

pub(crate) async fn pipe_writer<W: tokio::io::AsyncWrite + Unpin>(
    mut pipe: W,
    mut outgoing: mpsc::UnboundedReceiver<String>,
) {
    while let Some(message) = outgoing.recv().await {
        let mut frame = message.into_bytes();
        frame.push(0);
        if pipe.write_all(&frame).await.is_err() {
            break;
        }
    }
}

pub(crate) async fn pipe_reader<R: tokio::io::AsyncRead + Unpin>(mut pipe: R, sink: IncomingSink) {
    let mut buffer: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut scanned = 0;
    loop {
        let read = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        buffer.extend_from_slice(&chunk[..read]);
        // Only the newly arrived bytes can hold a new terminator.
        while let Some(offset) = buffer[scanned..].iter().position(|&b| b == 0) {
            let end = scanned + offset;
            match std::str::from_utf8(&buffer[..end]) {
                Ok(text) => (sink.on_message)(text),
                Err(_) => tracing::warn!("non-UTF-8 CDP message ignored"),
            }
            buffer.drain(..=end);
            scanned = 0;
        }
        scanned = buffer.len();
    }
    (sink.on_close)();
}

pub(crate) async fn line_writer<W: tokio::io::AsyncWrite + Unpin>(
    mut writer: W,
    mut outgoing: mpsc::UnboundedReceiver<String>,
) {
    while let Some(message) = outgoing.recv().await {
        let mut line = message.into_bytes();
        line.push(b'\n');
        if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
            break;
        }
    }
}

pub(crate) async fn line_reader<R: tokio::io::AsyncRead + Unpin>(reader: R, sink: IncomingSink) {
    use tokio::io::AsyncBufReadExt;
    let mut lines = tokio::io::BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if !line.trim().is_empty() {
            (sink.on_message)(&line);
        }
    }
    (sink.on_close)();
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a WebSocket endpoint may take to accept the handshake.
const CONNECT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) async fn connect_websocket(url: &str) -> Result<Socket, CdpError> {
    let mut config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default();
    // Screenshots and large DOM reads arrive as single messages of many megabytes.
    config.max_message_size = Some(512 << 20);
    config.max_frame_size = Some(512 << 20);
    // An endpoint that accepts the connection but never answers the handshake must not
    // hold the caller forever.
    let handshake = tokio_tungstenite::connect_async_with_config(url, Some(config), true);
    let (socket, _) = tokio::time::timeout(CONNECT_DEADLINE, handshake)
        .await
        .map_err(|_| {
            CdpError::Connect(format!(
                "{url}: no WebSocket handshake within {} s",
                CONNECT_DEADLINE.as_secs()
            ))
        })?
        .map_err(|e| CdpError::Connect(format!("{url}: {e}")))?;
    Ok(socket)
}

pub(crate) fn spawn_websocket(
    socket: Socket,
    mut outgoing: mpsc::UnboundedReceiver<String>,
    sink: IncomingSink,
) {
    let (mut write, mut read) = socket.split();
    tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
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
                Ok(Message::Binary(bytes)) => {
                    if let Ok(text) = std::str::from_utf8(&bytes) {
                        (sink.on_message)(text)
                    }
                }
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(_) => {}
            }
        }
        (sink.on_close)();
    });
}
