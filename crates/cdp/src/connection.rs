use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// The connection closed before the browser read the command: it did not run.
    #[error(
        "{method}: the browser connection closed before the browser read the command; it did not run"
    )]
    Undelivered { method: String },
    /// The browser's reply could not be read (too large, or not UTF-8).
    #[error("{method}: the browser's reply could not be read: {why}")]
    Unreadable { method: String, why: String },
    #[error("cannot connect to the browser: {0}")]
    Connect(String),
    /// The endpoint took the connection but gave no browser within the wait (a farm
    /// holds it in its queue until one is free).
    #[error("{endpoint}: no browser within {:.1} s (the endpoint holds the connection, as a farm's queue does); retry, or give the call a longer time limit", waited.as_secs_f64())]
    Queued { endpoint: String, waited: Duration },
    /// The endpoint answered the handshake with an HTTP status instead of a browser (a
    /// farm over its limit says 429, a wrong token 401).
    #[error("{endpoint} refused the connection: HTTP {status} {reason}{}{}", if body.is_empty() { String::new() } else { format!(" ({body})") }, retry_after.map(|s| format!("; retry after {s} s")).unwrap_or_default())]
    Refused {
        endpoint: String,
        status: u16,
        reason: String,
        body: String,
        retry_after: Option<u64>,
    },
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

/// What one caller's commands came to, across connections: how many it handed to a
/// connection, and how many of those provably never reached a browser (the connection
/// was closed, or closed before the browser read them). A caller counts by running its
/// work inside [`Ledger::scope`]; commands sent from other tasks are not counted.
#[derive(Debug, Default)]
pub struct Ledger {
    handed: AtomicU64,
    unsent: AtomicU64,
}

tokio::task_local! {
    static LEDGER: Arc<Ledger>;
}

impl Ledger {
    /// Runs `work` with its commands counted in this ledger.
    pub async fn scope<F: std::future::Future>(self: Arc<Self>, work: F) -> F::Output {
        LEDGER.scope(self, work).await
    }

    /// `work`, counted in the ledger of the task that makes it (for work a caller spawns
    /// on its own behalf, such as an agent's script).
    pub fn carry<F: std::future::Future>(work: F) -> impl std::future::Future<Output = F::Output> {
        let ledger = LEDGER.try_with(Arc::clone).ok();
        async move {
            match ledger {
                Some(ledger) => LEDGER.scope(ledger, work).await,
                None => work.await,
            }
        }
    }

    /// Whether every command counted never reached a browser: running the work again
    /// cannot do anything twice.
    pub fn nothing_reached_a_browser(&self) -> bool {
        self.handed.load(Ordering::SeqCst) == self.unsent.load(Ordering::SeqCst)
    }

    fn count(unsent: bool) {
        let _ = LEDGER.try_with(|ledger| {
            ledger.handed.fetch_add(1, Ordering::SeqCst);
            if unsent {
                ledger.unsent.fetch_add(1, Ordering::SeqCst);
            }
        });
    }

    fn count_unsent_later() {
        let _ = LEDGER.try_with(|ledger| ledger.unsent.fetch_add(1, Ordering::SeqCst));
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

/// A command awaiting its reply.
struct Pending {
    method: String,
    /// Where its bytes start in the stream toward the browser (see `Shared::enqueued`).
    offset: u64,
    waiter: Waiter,
}

/// Asks the transport how many written bytes the browser has not read (a pipe on Linux).
pub type Backlog = Box<dyn Fn() -> Option<u64> + Send + Sync>;

struct Shared {
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    /// Bytes handed to the writer so far (each message counts its length and one byte of
    /// framing); taken with the send, so offsets follow the order of the stream.
    enqueued: Mutex<u64>,
    outgoing: mpsc::UnboundedSender<String>,
    /// What the writer has handed to the transport whole, in the same units, and
    /// whether the connection is closed (the writer stops writing then).
    progress: Arc<transport::Progress>,
    backlog: Option<Backlog>,
    /// Dropped when the connection closes, so every subscriber's stream ends then: a
    /// wait for an event from a browser that went away ends at once, not at its deadline.
    events: Mutex<Option<broadcast::Sender<Arc<Event>>>>,
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
    ///
    /// `backlog` tells how many written bytes the browser has not read, where the system
    /// can: when the browser dies, a command still wholly in the pipe is answered
    /// `Undelivered` (it never ran) instead of `Lost`.
    pub fn over_pipe<W, R>(to_browser: W, from_browser: R, backlog: Option<Backlog>) -> Connection
    where
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
    {
        let (conn, outgoing, incoming) = Connection::new(false, backlog);
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
        let (conn, outgoing, incoming) = Connection::new(true, None);
        tokio::spawn(transport::line_writer(writer, outgoing));
        tokio::spawn(transport::line_reader(reader, incoming));
        conn
    }

    /// A connection over a WebSocket debugger URL (`ws://host:port/devtools/browser/…`).
    pub async fn over_websocket(url: &str) -> Result<Connection, CdpError> {
        Connection::over_websocket_within(url, transport::CONNECT_DEADLINE).await
    }

    /// Connects over a WebSocket, waiting up to `wait` for the handshake (a farm that
    /// queues connections answers it only when a browser is free).
    pub async fn over_websocket_within(
        url: &str,
        wait: std::time::Duration,
    ) -> Result<Connection, CdpError> {
        let socket = transport::connect_websocket(url, wait).await?;
        let (conn, outgoing, incoming) = Connection::new(false, None);
        transport::spawn_websocket(socket, outgoing, incoming);
        Ok(conn)
    }

    fn new(
        may_reorder: bool,
        backlog: Option<Backlog>,
    ) -> (Connection, transport::Outgoing, transport::IncomingSink) {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (closed_tx, _) = watch::channel(false);
        let progress = Arc::new(transport::Progress::default());
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            enqueued: Mutex::new(0),
            outgoing: out_tx,
            progress: progress.clone(),
            backlog,
            events: Mutex::new(Some(events)),
            closed_tx,
            may_reorder,
        });
        let sink = transport::IncomingSink {
            on_message: {
                let shared = shared.clone();
                Box::new(move |text: &str| dispatch(&shared, text))
            },
            on_unreadable: {
                let shared = shared.clone();
                Box::new(move |head: &[u8], why: &str| dispatch_unreadable(&shared, head, why))
            },
            on_close: {
                let shared = shared.clone();
                Box::new(move || close(&shared))
            },
        };
        let outgoing = transport::Outgoing {
            messages: out_rx,
            progress,
            closed: shared.closed_tx.subscribe(),
        };
        (Connection { shared }, outgoing, sink)
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
            Ledger::count(true);
            return Err(CdpError::Disconnected);
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session_id {
            message["sessionId"] = Value::String(session.to_owned());
        }
        let text = message.to_string();
        let (tx, rx) = oneshot::channel();
        // Whichever way this call ends (a reply, a timeout, its caller dropping it), its
        // entry goes: a reply that never comes must not keep it forever.
        let _entry = PendingEntry {
            shared: &self.shared,
            id,
        };
        {
            // The offset is taken with the send, so offsets follow the stream's order.
            let mut enqueued = self.shared.enqueued.lock();
            self.shared.pending.lock().insert(
                id,
                Pending {
                    method: method.to_owned(),
                    offset: *enqueued,
                    waiter: tx,
                },
            );
            // The reader may have closed between the check above and the insert;
            // re-check so the waiter cannot be stranded.
            if self.is_closed() || self.shared.outgoing.send(text.clone()).is_err() {
                Ledger::count(true);
                return Err(CdpError::Disconnected);
            }
            *enqueued += transport::framed_len(&text);
        }
        Ledger::count(false);
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Err(CdpError::Disconnected))) | Ok(Err(_)) => Err(CdpError::Lost {
                method: method.to_owned(),
            }),
            Ok(Ok(Err(undelivered @ CdpError::Undelivered { .. }))) => {
                Ledger::count_unsent_later();
                Err(undelivered)
            }
            Ok(Ok(reply)) => reply,
            Err(_) => Err(CdpError::Timeout {
                method: method.to_owned(),
                timeout,
            }),
        }
    }

    /// Asks the browser for a reply to a command that does nothing, to learn that it is
    /// alive before sending one that does something: a browser that died a moment ago
    /// (its process still tearing down, a link's worker just stopped) answers with the
    /// connection closing. A browser too busy to answer within `timeout` counts as alive.
    pub async fn confirm_alive(&self, timeout: Duration) -> Result<(), CdpError> {
        match self
            .call(None, "Browser.getVersion", json!({}), timeout)
            .await
        {
            Ok(_) | Err(CdpError::Timeout { .. } | CdpError::Protocol { .. }) => Ok(()),
            Err(CdpError::Lost { .. } | CdpError::Undelivered { .. }) => {
                Err(CdpError::Disconnected)
            }
            Err(other) => Err(other),
        }
    }

    /// How many commands await their reply (for tests and status reports).
    pub fn pending_calls(&self) -> usize {
        self.shared.pending.lock().len()
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
        match &*self.shared.events.lock() {
            Some(events) => events.subscribe(),
            // Closed: a stream that has already ended.
            None => broadcast::channel(1).1,
        }
    }

    pub fn is_closed(&self) -> bool {
        self.shared.progress.closed.load(Ordering::SeqCst)
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

fn dispatch(shared: &Shared, text: &str) {
    let incoming: Incoming = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(error) => {
            tracing::warn!(%error, "unparseable CDP message ignored");
            return;
        }
    };
    if let Some(id) = incoming.id {
        let Some(Pending { method, waiter, .. }) = shared.pending.lock().remove(&id) else {
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
        let events = shared.events.lock();
        let Some(events) = events.as_ref() else {
            return;
        };
        let _ = events.send(Arc::new(Event {
            method,
            session_id: incoming.session_id,
            params: incoming.params,
        }));
    }
}

/// A message the transport could not read (too large, not UTF-8): said in the log, and
/// when it is a reply (its head names the id), its caller is told at once instead of
/// waiting out its deadline. The connection goes on.
fn dispatch_unreadable(shared: &Shared, head: &[u8], why: &str) {
    let id = reply_id(head);
    tracing::warn!(?id, why, "unreadable CDP message skipped");
    let Some(id) = id else { return };
    if let Some(Pending { method, waiter, .. }) = shared.pending.lock().remove(&id) {
        let _ = waiter.send(Err(CdpError::Unreadable {
            method,
            why: why.to_owned(),
        }));
    }
}

/// The id of a reply from the first bytes of its text (`{"id":12,…`, as browsers write
/// replies), if they say it.
fn reply_id(head: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(&head[..head.len().min(64)]).ok()?;
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Closes the connection and answers every waiter. A command the browser had not read
/// when the connection closed (never handed to the transport, or still wholly in a
/// pipe whose reader is gone) did not run: its caller is told `Undelivered`. Any other
/// may have run: `Disconnected` (made `Lost` by the caller).
fn close(shared: &Shared) {
    let progress = &shared.progress;
    // Sequentially consistent with the writer (see `transport::Progress`).
    progress.closed.store(true, Ordering::SeqCst);
    let handed = progress.handed.load(Ordering::SeqCst);
    let unread = shared.backlog.as_ref().and_then(|b| b()).unwrap_or(0);
    // What the browser can have read: at most what was handed over, less what the
    // transport still holds. Never less than the truth, so a command it may have read
    // is never called undelivered.
    let read = handed.saturating_sub(unread);
    let waiters: Vec<_> = shared.pending.lock().drain().collect();
    for (_, pending) in waiters {
        let error = if pending.offset >= read {
            CdpError::Undelivered {
                method: pending.method,
            }
        } else {
            CdpError::Disconnected
        };
        let _ = pending.waiter.send(Err(error));
    }
    shared.events.lock().take();
    shared.closed_tx.send_replace(true);
}

/// A command's place among those awaiting a reply; removed when its call ends.
struct PendingEntry<'a> {
    shared: &'a Shared,
    id: u64,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        self.shared.pending.lock().remove(&self.id);
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

    #[tokio::test]
    async fn a_command_the_browser_never_read_did_not_run_and_one_it_read_may_have() {
        use std::sync::atomic::AtomicU64;
        use tokio::io::AsyncReadExt;
        // The browser's side of a pipe: it reads the first command, then dies.
        let (to_browser, mut browser_reads) = tokio::io::duplex(1 << 16);
        let (browser_writes, from_browser) = tokio::io::duplex(1 << 16);
        let unread = Arc::new(AtomicU64::new(0));
        let backlog = {
            let unread = unread.clone();
            Box::new(move || Some(unread.load(Ordering::Acquire))) as Backlog
        };
        let conn = Connection::over_pipe(to_browser, from_browser, Some(backlog));
        let long = Duration::from_secs(60);
        let read = conn.call(None, "Page.navigate", json!({}), long);
        let mut read = Box::pin(read);
        // The first command is read by the browser (it may run)…
        let mut first = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            tokio::select! {
                _ = &mut read => panic!("nobody answers"),
                got = browser_reads.read_exact(&mut byte) => {
                    got.unwrap();
                    if byte[0] == 0 { break }
                    first.push(byte[0]);
                }
            }
        }
        assert!(String::from_utf8_lossy(&first).contains("Page.navigate"));
        // …the second is written but never read: the pipe still holds it when it dies.
        let never = conn.call(None, "Input.dispatchKeyEvent", json!({}), long);
        let mut never = Box::pin(never);
        tokio::select! {
            _ = &mut never => panic!("nobody answers"),
            () = tokio::task::yield_now() => {}
        }
        // Once the writer has taken it, the pipe holds it unread.
        let text = json!({ "id": 2, "method": "Input.dispatchKeyEvent", "params": {} });
        let second = transport::framed_len(&text.to_string());
        let both = first.len() as u64 + 1 + second;
        while conn.shared.progress.handed.load(Ordering::SeqCst) < both {
            tokio::task::yield_now().await;
        }
        unread.store(second, Ordering::Release);
        drop(browser_writes);
        assert!(matches!(read.await, Err(CdpError::Lost { .. })));
        assert!(matches!(never.await, Err(CdpError::Undelivered { .. })));
        // After the close, nothing more is written and a new call fails at once.
        assert!(matches!(
            conn.call(None, "Page.reload", json!({}), long).await,
            Err(CdpError::Disconnected)
        ));
    }

    #[test]
    fn a_replys_id_is_read_from_its_first_bytes() {
        assert_eq!(reply_id(br#"{"id":42,"result":{"data":"#), Some(42));
        assert_eq!(reply_id(br#" { "id" : 7 ,"#), Some(7));
        assert_eq!(reply_id(br#"{"method":"Page.loadEventFired""#), None);
    }
}
