//! The rmcp server: lists a face's tools, checks arguments, runs adapters and wraps their
//! answers. Stdio serves one MCP session; HTTP serves many, each with its own agent session.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use engine::AgentSession;

use crate::envelope;
use crate::face::{Call, ServerState};
use crate::params;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("MCP transport: {0}")]
    Transport(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("refusing to serve HTTP on non-loopback {0} without --token")]
    NoToken(SocketAddr),
}

/// One MCP session's handler.
#[derive(Clone)]
pub struct TabwireServer {
    state: Arc<ServerState>,
    session: Arc<AgentSession>,
    catalogue: Arc<Vec<Tool>>,
}

impl TabwireServer {
    pub fn new(state: Arc<ServerState>) -> TabwireServer {
        let catalogue = Arc::new(state.tools.iter().map(describe).collect());
        TabwireServer {
            session: Arc::new(state.engine.new_session()),
            state,
            catalogue,
        }
    }
}

fn describe(tool: &crate::face::ToolDef) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(tool.hints.read_only)
        .destructive(tool.hints.destructive)
        .idempotent(tool.hints.idempotent)
        .open_world(tool.hints.open_world);
    Tool::new(
        tool.name,
        tool.description,
        Arc::new(params::schema(tool.params)),
    )
    .with_annotations(annotations)
}

impl ServerHandler for TabwireServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tabwire", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "tabwire drives a Chromium browser. Each MCP session has its own default tab; \
                 parallel agents should pass session_id. Read pages with scan_page, act with \
                 page_click/page_type, wait with wait_for instead of sleeping.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.catalogue.as_ref().clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.catalogue.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.state.tools.iter().find(|t| t.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{}'", request.name),
                None,
            ));
        };
        let started = Instant::now();
        let target_hint = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("session_id"))
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            });
        let outcome = match params::check(tool.params, request.arguments) {
            Ok(args) => {
                let call = Call {
                    session: self.session.clone(),
                    args,
                    server: self.state.clone(),
                };
                // A panic inside one tool must not take the server down with it.
                match tokio::spawn((tool.run)(call)).await {
                    Ok(outcome) => outcome,
                    Err(join) => Err(engine::EngineError::Io(format!(
                        "internal error in {}: {join}",
                        tool.name
                    ))
                    .into()),
                }
            }
            Err(error) => Err(error),
        };
        let elapsed = started.elapsed().as_millis() as u64;
        let result = match outcome {
            Ok(reply) => {
                let mut content = vec![ContentBlock::text(
                    envelope::success(&reply, elapsed).to_string(),
                )];
                content.extend(
                    reply
                        .images
                        .iter()
                        .map(|(data, mime)| ContentBlock::image(data.clone(), *mime)),
                );
                CallToolResult::success(content)
            }
            Err(error) => {
                tracing::debug!(tool = tool.name, %error, "tool failed");
                CallToolResult::error(vec![ContentBlock::text(
                    envelope::failure(&error, target_hint, elapsed).to_string(),
                )])
            }
        };
        Ok(result.into())
    }
}

/// Serves one MCP session over stdin/stdout until the client goes away.
pub async fn serve_stdio(state: Arc<ServerState>) -> Result<(), ServeError> {
    serve_stream(state, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves one MCP session over any byte stream (a broker's Unix socket connection, say)
/// until the client goes away. Each call is its own agent session.
pub async fn serve_stream<R, W>(
    state: Arc<ServerState>,
    reader: R,
    writer: W,
) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let server = TabwireServer::new(state);
    let running = server
        .serve((reader, writer))
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))?;
    Ok(())
}

pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required on non-loopback addresses; checked as `Authorization: Bearer <token>`.
    pub token: Option<String>,
}

/// Serves MCP Streamable HTTP at `/mcp` until `shutdown` resolves. Host and Origin are
/// checked so a web page cannot reach the server through DNS rebinding.
pub async fn serve_http(
    state: Arc<ServerState>,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let loopback = options.addr.ip().is_loopback();
    if !loopback && options.token.is_none() {
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
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
        "[::1]".to_owned(),
    ];
    if !loopback {
        hosts.push(options.addr.ip().to_string());
    }
    let origins = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];
    let cancel = tokio_util::sync::CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .with_cancellation_token(cancel.clone());
    let service: StreamableHttpService<TabwireServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(TabwireServer::new(state.clone())),
            Default::default(),
            config,
        );
    let token = options.token.map(Arc::new);
    let router =
        axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn(move |request, next| {
                check_token(token.clone(), request, next)
            }));
    tracing::info!("serving MCP over HTTP at http://{bound}/mcp");
    // Printed for scripts and tests that bind port 0.
    eprintln!("tabwire: listening on http://{bound}/mcp");
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            cancel.cancel();
        })
        .await
        .map_err(|e| ServeError::Transport(e.to_string()))
}

async fn check_token(
    token: Option<Arc<String>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if let Some(token) = token {
        let presented = request
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !presented.is_some_and(|p| constant_time_eq(p.as_bytes(), token.as_bytes())) {
            return axum::response::IntoResponse::into_response((
                axum::http::StatusCode::UNAUTHORIZED,
                "a bearer token is required",
            ));
        }
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Base64 for image content.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
