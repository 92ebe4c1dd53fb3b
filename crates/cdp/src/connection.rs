use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::transport;

/// How many events a slow subscriber may fall behind before it starts losing them.
const EVENT_BUFFER: usize = 4096;

#[derive(Debug, Clone, thiserror::Error)]
pub enum CdpError {
    #[error("{method}: {message} (CDP error {code})")]
    Protocol {
        method: String,
        code: i64,
        message: String,
    },
    #[error("{method}: no reply within {timeout:?}")]
    Timeout { method: String, timeout: Duration },
    #[error("the browser connection is closed")]
    Disconnected,
    /// The connection closed after the command was sent: it may have run.
    #[error("{method}: the browser connection closed before it answered; the command may have run")]
    Lost { method: String },
    #[error("cannot connect to the browser: {0}")]
    Connect(String),
}

impl CdpError {
    /// The CDP error message, when the browser answered with one.
    pub fn protocol_message(&self) -> Option<&str> {
        match self {
            CdpError::Protocol { message, .. } => Some(message),
            _ => None,
        }
    }

    /// Whether the JavaScript context a command addressed went away (the document was
    /// replaced or its frame closed) before it ran or while it ran. Chromium says so only
    /// in the message of a generic server error, so this is the one place that reads it.
    pub fn is_context_gone(&self) -> bool {
        const GONE: [&str; 3] = [
            "Cannot find context with specified id",
            "Execution context was destroyed",
            "Inspected target navigated or closed",
        ];
        self.protocol_message()
            .is_some_and(|m| GONE.iter().any(|g| m.starts_with(g)))
    }
}

/// An event from the browser, with the flattened session it came from (None for the
/// browser target itself).
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub session_id: Option<String>,
    pub params: Value,
}

type Waiter = oneshot::Sender<Result<Value, CdpError>>;

struct Shared {
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, (String, Waiter)>>,
    outgoing: mpsc::UnboundedSender<String>,
    events: broadcast::Sender<Arc<Event>>,
    closed: AtomicBool,
    closed_tx: watch::Sender<bool>,
    /// Whether events and replies may arrive out of the order the browser sent them
    /// (the extension relay: chrome.debugger delivers them on separate channels).
    may_reorder: bool,
}

/// A CDP connection to one browser. Cheap to clone; all clones share one reader task.
#[derive(Clone)]
pub struct Connection {
    shared: Arc<Shared>,
}

/// The parts of an incoming message we read. Unknown fields are ignored.
#[derive(Deserialize)]
struct Incoming {
    id: Option<u64>,
    method: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    #[serde(default)]
    params: Value,
    result: Option<Value>,
    error: Option<IncomingError>,
}

#[derive(Deserialize)]
struct IncomingError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<Value>,
}

impl Connection {
    /// A connection over Chromium's `--remote-debugging-pipe`: `to_browser` is the write end
    /// of the browser's descriptor 3, `from_browser` the read end of its 4 (how they are
    /// made is the platform's business: `platform::process`).
    pub fn over_pipe<W, R>(to_browser: W, from_browser: R) -> Connection
    where
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
    {
        let (conn, outgoing, incoming) = Connection::new(false);
        tokio::spawn(transport::pipe_writer(to_browser, outgoing));
        tokio::spawn(transport::pipe_reader(from_browser, incoming));
        conn
    }

    /// A connection over newline-delimited JSON, as relayed by the tabwire extension's
    /// native host: one CDP message a line.
    pub fn over_lines<R, W>(reader: R, writer: W) -> Connection
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let (conn, outgoing, incoming) = Connection::new(true);
        tokio::spawn(transport::line_writer(writer, outgoing));
        tokio::spawn(transport::line_reader(reader, incoming));
        conn
    }

    /// A connection over a WebSocket debugger URL (`ws://host:port/devtools/browser/…`).
    pub async fn over_websocket(url: &str) -> Result<Connection, CdpError> {
        let socket = transport::connect_websocket(url).await?;
        let (conn, outgoing, incoming) = Connection::new(false);
        transport::spawn_websocket(socket, outgoing, incoming);
        Ok(conn)
    }

    fn new(
        may_reorder: bool,
    ) -> (
        Connection,
        mpsc::UnboundedReceiver<String>,
        transport::IncomingSink,
    ) {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (closed_tx, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            outgoing: out_tx,
            events,
            closed: AtomicBool::new(false),
            closed_tx,
            may_reorder,
        });
        let sink = transport::IncomingSink {
            on_message: {
                let shared = shared.clone();
                Box::new(move |text: &str| dispatch(&shared, text))
            },
            on_close: {
                let shared = shared.clone();
                Box::new(move || close(&shared))
            },
        };
        (Connection { shared }, out_rx, sink)
    }

    /// Sends one command and waits for its reply, at most `timeout`.
    pub async fn call(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        if self.is_closed() {
            return Err(CdpError::Disconnected);
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session_id {
            message["sessionId"] = Value::String(session.to_owned());
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.shared.pending).insert(id, (method.to_owned(), tx));
        // Whichever way this call ends (a reply, a timeout, its caller dropping it), its
        // entry goes: a reply that never comes must not keep it forever.
        let _entry = PendingEntry {
            shared: &self.shared,
            id,
        };
        // The reader may have closed between the check above and the insert; re-check so
        // the waiter cannot be stranded.
        if self.is_closed() || self.shared.outgoing.send(message.to_string()).is_err() {
            return Err(CdpError::Disconnected);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Err(CdpError::Disconnected))) | Ok(Err(_)) => Err(CdpError::Lost {
                method: method.to_owned(),
            }),
            Ok(Ok(reply)) => reply,
            Err(_) => Err(CdpError::Timeout {
                method: method.to_owned(),
                timeout,
            }),
        }
    }

    /// How many commands await their reply (for tests and status reports).
    pub fn pending_calls(&self) -> usize {
        lock(&self.shared.pending).len()
    }

    /// Returns once every event the session emitted before the replies received so far
    /// has been dispatched to subscribers. CDP sends events and replies in order on one
    /// channel, so on a pipe or WebSocket this returns at once. The extension relay gets
    /// them on separate channels; there it asks the relay for a fence (`Tabwire.fence`),
    /// which it answers only after an event the browser emitted after those replies.
    /// Returns whether the fence held (false: the relay could not raise an event in time).
    pub async fn settle_events(
        &self,
        session_id: &str,
        timeout: Duration,
    ) -> Result<bool, CdpError> {
        if !self.shared.may_reorder {
            return Ok(true);
        }
        let reply = self
            .call(Some(session_id), "Tabwire.fence", json!({}), timeout)
            .await?;
        Ok(reply["settled"].as_bool().unwrap_or(false))
    }

    /// A stream of every event from now on. Subscribe before sending the command whose
    /// consequence you wait for.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.shared.events.subscribe()
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }

    /// Closes the connection from our side (the browser is known to be gone): every
    /// waiter is answered at once, and later calls fail without being written.
    pub fn close(&self) {
        close(&self.shared);
    }

    /// Resolves when the connection has closed.
    pub async fn closed(&self) {
        let mut rx = self.shared.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while holding this lock cannot leave the map inconsistent, so poisoning is
    // not a reason to stop serving.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn dispatch(shared: &Shared, text: &str) {
    let incoming: Incoming = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(error) => {
            tracing::warn!(%error, "unparseable CDP message ignored");
            return;
        }
    };
    if let Some(id) = incoming.id {
        let Some((method, waiter)) = lock(&shared.pending).remove(&id) else {
            return; // its caller gave up (deadline passed)
        };
        let reply = match incoming.error {
            Some(error) => Err(CdpError::Protocol {
                method,
                code: error.code,
                message: match error.data {
                    Some(Value::String(data)) if !data.is_empty() => {
                        format!("{}: {data}", error.message)
                    }
                    _ => error.message,
                },
            }),
            None => Ok(incoming.result.unwrap_or(Value::Null)),
        };
        let _ = waiter.send(reply);
    } else if let Some(method) = incoming.method {
        let _ = shared.events.send(Arc::new(Event {
            method,
            session_id: incoming.session_id,
            params: incoming.params,
        }));
    }
}

fn close(shared: &Shared) {
    shared.closed.store(true, Ordering::Release);
    let waiters: Vec<_> = lock(&shared.pending).drain().collect();
    for (_, (_, waiter)) in waiters {
        let _ = waiter.send(Err(CdpError::Disconnected));
    }
    shared.closed_tx.send_replace(true);
}

/// A command's place among those awaiting a reply; removed when its call ends.
struct PendingEntry<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        lock(&self.shared.pending).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_its_caller_gave_up_on_leaves_nothing_behind() {
        // A peer that reads commands and never answers.
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (reader, writer) = tokio::io::split(ours);
        let conn = Connection::over_lines(reader, writer);
        let (mut their_reader, _their_writer) = tokio::io::split(theirs);
        tokio::spawn(async move {
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut their_reader, &mut sink).await;
        });
        let call = conn.call(
            None,
            "Runtime.evaluate",
            json!({}),
            Duration::from_secs(600),
        );
        tokio::select! {
            _ = call => panic!("nobody answers"),
            () = tokio::task::yield_now() => {}
        }
        assert_eq!(conn.pending_calls(), 0, "a dropped call's entry stayed");
        let timed_out = conn
            .call(
                None,
                "Runtime.evaluate",
                json!({}),
                Duration::from_millis(1),
            )
            .await;
        assert!(matches!(timed_out, Err(CdpError::Timeout { .. })));
        assert_eq!(conn.pending_calls(), 0, "a timed-out call's entry stayed");
    }
}
