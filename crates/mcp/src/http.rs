//! MCP Streamable HTTP at `/mcp`, held against hostile pages and careless clients.
//!
//! - Who may talk: Host and Origin are checked so a web page cannot reach a loopback
//!   server through DNS rebinding; a non-loopback address needs a bearer token (an empty
//!   or blank one is none), and with a token any Host is accepted, since remote clients
//!   name the server as they reach it.
//! - What a client can hold: at most `max_sessions` live sessions (the one idle longest
//!   is closed to make room, so a flood of abandoned sessions cannot starve a live
//!   client), idle sessions expire, a session that never initializes is dropped; at most
//!   `max_connections` connections (the one idle longest is closed to let a new one in,
//!   so idle sockets cannot lock a live client out); headers must arrive within a
//!   deadline and a body within another, and a body has a size cap.
//! - A body that is not JSON is answered as JSON-RPC answers it: a parse error. A ping
//!   outside a session (before initialize) is answered.
//! - For a load balancer: `GET /health` answers 200 while serving and 503 while
//!   draining, without a token (it says only counts). On shutdown (SIGTERM) the server
//!   drains: new sessions are refused with 503, the live ones go on until no call is in
//!   flight (at most `drain`), then it exits. A request naming a session this server
//!   does not hold is answered 404, so a client re-initialises, as MCP says.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use http_body_util::BodyExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{RestoreOutcome, SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use engine::Engine;

use crate::server::{ServeError, SessionOptions, TabwireServer};

/// How `--http` serves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required on non-loopback addresses; checked as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Live MCP sessions at most; the one idle longest is closed to make room.
    pub max_sessions: usize,
    /// A session with no request for this long is closed.
    pub session_idle: Duration,
    /// Open connections at most.
    pub max_connections: usize,
    /// On shutdown, how long calls in flight are waited for.
    pub drain: Duration,
}

/// Live sessions at most, unless told otherwise (`--max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 256;
/// Open connections at most, unless told otherwise (`--max-connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

impl HttpOptions {
    pub fn new(addr: SocketAddr, token: Option<String>) -> HttpOptions {
        HttpOptions {
            addr,
            token,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle: Duration::from_secs(30 * 60),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            drain: Duration::from_secs(30),
        }
    }
}

/// Headers of a request must all arrive within this.
const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// A request body must arrive within this…
const BODY_DEADLINE: Duration = Duration::from_secs(30);
/// …and be at most this long.
const BODY_LIMIT: usize = 32 << 20;
/// A session must say `initialize` within this.
const INIT_DEADLINE: Duration = Duration::from_secs(15);

/// Serves until `shutdown` resolves.
pub async fn serve_http(
    engine: Arc<Engine>,
    session: SessionOptions,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let token = options
        .token
        .clone()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    let loopback = options.addr.ip().is_loopback();
    if !loopback && token.is_none() {
        return Err(ServeError::NoToken(options.addr));
    }
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| ServeError::Bind {
            addr: options.addr,
            source,
        })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: options.addr,
        source,
    })?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let origins = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .with_cancellation_token(cancel.clone());
    config = match token {
        // A token proves the client; the Host it uses is its own business.
        Some(_) => config.disable_allowed_hosts(),
        None => config.with_allowed_hosts(["localhost", "127.0.0.1", "::1", "[::1]"]),
    };
    let sessions = Arc::new(BoundedSessions::new(
        options.max_sessions,
        options.session_idle,
    ));
    let shared = session.shared();
    let draining = Arc::new(AtomicBool::new(false));
    let health = {
        let (engine, draining) = (engine.clone(), draining.clone());
        move || health(engine.clone(), draining.clone())
    };
    let service: StreamableHttpService<TabwireServer, BoundedSessions> = StreamableHttpService::new(
        {
            let engine = engine.clone();
            move || Ok(TabwireServer::with(&engine, &shared))
        },
        sessions,
        config,
    );
    let token = token.map(Arc::new);
    let refusing = draining.clone();
    let posts = Arc::new(Gauge::default());
    let counted = posts.clone();
    let mcp = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(session_ended))
        .layer(axum::middleware::from_fn(move |request, next| {
            count_posts(counted.clone(), request, next)
        }))
        .layer(axum::middleware::from_fn(move |request, next| {
            read_body(refusing.clone(), request, next)
        }))
        .layer(axum::middleware::from_fn(move |request, next| {
            check_token(token.clone(), request, next)
        }));
    let router = axum::Router::new()
        .route("/health", axum::routing::get(health))
        .merge(mcp);
    tracing::info!("serving MCP over HTTP at http://{bound}/mcp");
    // Printed for scripts and tests that bind port 0.
    eprintln!("tabwire: listening on http://{bound}/mcp");
    let drained = async move {
        shutdown.await;
        draining.store(true, Ordering::Release);
        let running = engine.calls_in_flight();
        tracing::info!(
            running,
            "draining: no new sessions; waiting for the calls in flight"
        );
        eprintln!("tabwire: draining ({running} calls in flight)");
        // A call's answer is sent after the call: wait for the requests, not the calls.
        if tokio::time::timeout(options.drain, posts.none())
            .await
            .is_err()
        {
            tracing::warn!(
                running = engine.calls_in_flight(),
                "the drain ran out of time; calls still running are cut"
            );
        }
    };
    accept(listener, router, options.max_connections, drained, cancel).await;
    Ok(())
}

/// `GET /health`: 200 while serving, 503 while draining, with the counts a balancer or
/// an operator reads.
async fn health(engine: Arc<Engine>, draining: Arc<AtomicBool>) -> Response {
    let draining = draining.load(Ordering::Acquire);
    let body = serde_json::json!({
        "status": if draining { "draining" } else { "serving" },
        "sessions": engine.live_sessions(),
        "calls_in_flight": engine.calls_in_flight(),
        "link": engine.link_name(),
        "session_browsers": engine.session_browsers(),
    });
    let status = if draining {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Accepts connections until shutdown, each with a header deadline. At the limit, the
/// connection idle longest (no request in flight, no response streaming) is closed to
/// let the new one in; only if every connection is busy is the new one turned away.
async fn accept(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    max_connections: usize,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    cancel: tokio_util::sync::CancellationToken,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let connections = Arc::new(Connections::default());
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let Some(connection) = connections.admit(max_connections.max(1)) else {
            tracing::warn!("every connection is busy; a new one was turned away");
            continue;
        };
        let busy = connection.busy.clone();
        let tracked = tower::ServiceBuilder::new()
            .map_request(move |request: axum::http::Request<hyper::body::Incoming>| {
                busy.enter();
                request.map(axum::body::Body::new)
            })
            .service(router.clone());
        let busy = connection.busy.clone();
        let tracked = tower::ServiceExt::map_response(tracked, move |response: Response| {
            response.map(|body| axum::body::Body::new(Tracked::new(body, busy.clone())))
        });
        let service = hyper_util::service::TowerToHyperService::new(tracked);
        let (cancel, connections) = (cancel.clone(), connections.clone());
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_DEADLINE)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(served);
            tokio::select! {
                done = &mut served => {
                    if let Err(error) = done {
                        tracing::debug!(%error, "HTTP connection ended");
                    }
                }
                () = connection.shed.notified() => {}
                () = cancel.cancelled() => {
                    served.as_mut().graceful_shutdown();
                    let _ = served.await;
                }
            }
            connections.leave(connection.id);
        });
    }
    cancel.cancel();
}

/// How many of something are under way (requests, responses still streaming), and a
/// signal each time none is.
#[derive(Default)]
struct Gauge {
    count: AtomicUsize,
    idle: tokio::sync::Notify,
}

impl Gauge {
    fn enter(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    fn leave(&self) {
        if self.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle.notify_waiters();
        }
    }

    fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Resolves once none is under way (at once if none is).
    async fn none(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.count() == 0 {
                return;
            }
            idle.await;
        }
    }
}

/// Counts the MCP POSTs under way, until each one's response has been sent whole (a
/// call's answer streams after the call itself is done): what a drain waits for.
async fn count_posts(
    posts: Arc<Gauge>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if request.method() != axum::http::Method::POST {
        return next.run(request).await;
    }
    posts.enter();
    let response = next.run(request).await;
    response.map(|body| axum::body::Body::new(Tracked::new(body, posts)))
}

/// A session a client ends with DELETE is gone when the answer comes: 204 No Content, as
/// clients expect of a completed DELETE (the SDK's 202 "accepted" reads as a failure to
/// some, which log "Session termination failed: 202").
async fn session_ended(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == axum::http::StatusCode::ACCEPTED {
        *response.status_mut() = axum::http::StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    response
}

/// The open connections, and which of them are doing something.
#[derive(Default)]
struct Connections {
    next: AtomicU64,
    open: Mutex<Vec<Arc<Connection>>>,
}

struct Connection {
    id: u64,
    /// Requests being handled plus responses still streaming.
    busy: Arc<Gauge>,
    /// Since when nothing has been in flight (its start, at first).
    opened: Instant,
    shed: tokio::sync::Notify,
}

impl Connections {
    /// Room for one more: closes the longest-idle connection if at the limit. None when
    /// every connection is busy.
    fn admit(&self, max: usize) -> Option<Arc<Connection>> {
        let mut open = self.open.lock();
        if open.len() >= max {
            let idle = open
                .iter()
                .enumerate()
                .filter(|(_, c)| c.busy.count() == 0)
                .min_by_key(|(_, c)| c.opened)
                .map(|(at, _)| at)?;
            let shed = open.remove(idle);
            shed.shed.notify_one();
        }
        let connection = Arc::new(Connection {
            id: self.next.fetch_add(1, Ordering::Relaxed),
            busy: Arc::default(),
            opened: Instant::now(),
            shed: tokio::sync::Notify::new(),
        });
        open.push(connection.clone());
        Some(connection)
    }

    fn leave(&self, id: u64) {
        self.open.lock().retain(|c| c.id != id);
    }
}

/// A response body that counts as in flight until it has been sent (or dropped).
struct Tracked {
    body: axum::body::Body,
    busy: Option<Arc<Gauge>>,
}

impl Tracked {
    fn new(body: axum::body::Body, busy: Arc<Gauge>) -> Tracked {
        Tracked {
            body,
            busy: Some(busy),
        }
    }

    fn done(&mut self) {
        if let Some(busy) = self.busy.take() {
            busy.leave();
        }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.done();
    }
}

impl http_body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = std::pin::Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, std::task::Poll::Ready(None)) {
            self.done();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Reads the whole body within its deadline and size cap; a body that should be JSON
/// and is not is answered with a JSON-RPC parse error.
async fn read_body(
    draining: Arc<AtomicBool>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, BODY_LIMIT);
    let bytes = match tokio::time::timeout(BODY_DEADLINE, limited.collect()).await {
        Err(_) => {
            return (
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            )
                .into_response();
        }
        Ok(Err(_)) => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is too large",
            )
                .into_response();
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    let parsed = serde_json::from_slice::<serde_json::Value>(&bytes);
    // A ping outside a session (before initialize) is answered: the protocol allows
    // pings at any time, and there is no session to hand it to.
    if let Ok(message) = &parsed
        && parts.method == axum::http::Method::POST
        && message["method"] == "ping"
        && message.get("id").is_some()
        && !parts.headers.contains_key("mcp-session-id")
    {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            crate::stream::pong(message["id"].clone()),
        )
            .into_response();
    }
    // Draining: a new session belongs on another server (the balancer's health check
    // says so too); the live ones go on.
    if draining.load(Ordering::Acquire)
        && parts.method == axum::http::Method::POST
        && !parts.headers.contains_key("mcp-session-id")
    {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "1")],
            "this server is draining and takes no new sessions; connect again (to another server)",
        )
            .into_response();
    }
    if parts.method == axum::http::Method::POST && parsed.is_err() {
        let error = serde_json::json!({
            "jsonrpc": "2.0", "id": null,
            "error": { "code": -32700, "message": "Parse error: the body is not JSON" },
        });
        return (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            error.to_string(),
        )
            .into_response();
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}

async fn check_token(
    token: Option<Arc<String>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if let Some(token) = token {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !presented.is_some_and(|p| constant_time_eq(p.as_bytes(), token.as_bytes())) {
            return (StatusCode::UNAUTHORIZED, "a bearer token is required").into_response();
        }
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}

/// rmcp's in-memory sessions, bounded in number: when full, the session idle longest is
/// closed to make room. Each session's last activity is kept beside it.
struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    last_active: Mutex<HashMap<SessionId, Instant>>,
}

impl BoundedSessions {
    fn new(max: usize, idle: Duration) -> BoundedSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        inner.session_config.init_timeout = Some(INIT_DEADLINE);
        BoundedSessions {
            inner,
            max: max.max(1),
            last_active: Mutex::new(HashMap::new()),
        }
    }

    fn touch(&self, id: &SessionId) {
        self.last_active.lock().insert(id.clone(), Instant::now());
    }

    /// Closes the sessions idle longest until there is room for one more, forgetting
    /// those the inner manager has already dropped.
    async fn make_room(&self) {
        let live: std::collections::HashSet<SessionId> =
            self.inner.sessions.read().await.keys().cloned().collect();
        let oldest: Vec<SessionId> = {
            let mut last = self.last_active.lock();
            last.retain(|id, _| live.contains(id));
            let mut by_age: Vec<(Instant, SessionId)> =
                last.iter().map(|(id, at)| (*at, id.clone())).collect();
            by_age.sort();
            let over = (live.len() + 1).saturating_sub(self.max);
            by_age.into_iter().take(over).map(|(_, id)| id).collect()
        };
        for id in oldest {
            tracing::info!(session = %id, "closing the session idle longest to make room");
            let _ = self.inner.close_session(&id).await;
            self.last_active.lock().remove(&id);
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        self.touch(&id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.last_active.lock().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<
        impl Stream<Item = rmcp::transport::common::server_side_http::ServerSseMessage> + Send + 'static,
        Self::Error,
    > {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl Stream<Item = rmcp::transport::common::server_side_http::ServerSseMessage> + Send + 'static,
        Self::Error,
    > {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl Stream<Item = rmcp::transport::common::server_side_http::ServerSseMessage> + Send + 'static,
        Self::Error,
    > {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.make_room().await;
        self.touch(&id);
        self.inner.restore_session(id).await
    }
}
