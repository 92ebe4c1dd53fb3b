//! The rmcp server: lists a face's tools, checks arguments, runs adapters and wraps their
//! answers. Stdio serves one MCP session; HTTP serves many, each with its own agent session.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListResourcesRequestMethod, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourcesCapability, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use serde_json::{Map, Value, json};

use engine::{AgentSession, Engine};

use crate::face::{
    Acted, Call, Face, Guide, Profile, Rendered, Replies, Reply, SessionSettings, ToolDef,
    ToolError,
};
use crate::logging;
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
    #[error(
        "refusing to serve HTTP on non-loopback {0} without a --token (an empty or blank one is none)"
    )]
    NoToken(SocketAddr),
}

/// How one MCP session is served: which faces, and its settings' starting point.
#[derive(Clone)]
pub struct SessionOptions {
    pub faces: Vec<&'static Face>,
    /// The operator's profile; a session may tighten it, never loosen it.
    pub profile: Profile,
    /// The operator allowed blocked raw CDP (lab only).
    pub allow_blocked_cdp: bool,
    /// How replies are written (exact by default).
    pub replies: Replies,
    /// Sessions reach this server through a broker that other MCP clients share (the
    /// browser is held by another process than the client started).
    pub brokered: bool,
    /// Which of the faces' tools are served.
    pub tools: crate::ToolSet,
}

impl SessionOptions {
    /// What sessions served this way share, built once (the catalogue and its schemas).
    pub fn shared(&self) -> SharedSession {
        // Serving starts here: this is the executable a status report compares with.
        crate::identity::note_start();
        let catalogue: Vec<(&'static Face, &'static ToolDef)> = self
            .faces
            .iter()
            .flat_map(|face| face.tools.iter().map(move |tool| (*face, tool)))
            .filter(|(face, tool)| self.tools.serves(face, tool))
            .collect();
        let listed = catalogue
            .iter()
            .filter(|(_, tool)| tool.listed)
            .map(|(face, tool)| describe(face, tool, self.replies, self.tools.compact()))
            .collect();
        let instructions = self
            .faces
            .iter()
            .map(|face| face.instructions)
            .collect::<Vec<_>>()
            .join("\n\n");
        SharedSession {
            catalogue: Arc::new(catalogue),
            listed: Arc::new(listed),
            instructions: instructions.into(),
            profile: self.profile,
            allow_blocked_cdp: self.allow_blocked_cdp,
            replies: self.replies,
            brokered: self.brokered,
        }
    }
}

/// The part of a session that sessions served one way share.
#[derive(Clone)]
pub struct SharedSession {
    catalogue: Arc<Vec<(&'static Face, &'static ToolDef)>>,
    listed: Arc<Vec<Tool>>,
    instructions: Arc<str>,
    profile: Profile,
    allow_blocked_cdp: bool,
    replies: Replies,
    brokered: bool,
}

/// One MCP session's handler.
#[derive(Clone)]
pub struct TabwireServer {
    session: Arc<AgentSession>,
    settings: Arc<SessionSettings>,
    catalogue: Arc<Vec<(&'static Face, &'static ToolDef)>>,
    listed: Arc<Vec<Tool>>,
    instructions: Arc<str>,
    /// The level this session's client asked logs at (None: it did not).
    log_level: Arc<parking_lot::Mutex<Option<LoggingLevel>>>,
    /// Where this session's log notices queue, in the order they are made, for the one
    /// task that sends them (started when the client sets a level).
    notices: Arc<std::sync::OnceLock<tokio::sync::mpsc::Sender<LogNotice>>>,
    calls: Arc<InFlight>,
    /// Set once this session's client is told when its current tab's page tools change.
    announcing_page_tools: Arc<std::sync::OnceLock<()>>,
}

/// This session's calls still running. A call that comes after the client cancelled an
/// earlier one waits for that one to let go of what it held (its tab), instead of racing
/// the cancelled call's teardown and finding the tab busy.
#[derive(Default)]
struct InFlight {
    next: std::sync::atomic::AtomicU64,
    running: parking_lot::Mutex<Vec<RunningCall>>,
}

struct RunningCall {
    id: u64,
    cancelled: tokio_util::sync::CancellationToken,
    finished: tokio::sync::watch::Receiver<bool>,
}

/// Marks a call finished however its future ends.
struct CallDone {
    calls: Arc<InFlight>,
    id: u64,
    finished: tokio::sync::watch::Sender<bool>,
}

impl Drop for CallDone {
    fn drop(&mut self) {
        let _ = self.finished.send(true);
        self.calls.running.lock().retain(|c| c.id != self.id);
    }
}

impl InFlight {
    fn begin(self: &Arc<Self>, cancelled: tokio_util::sync::CancellationToken) -> CallDone {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (finished, receiver) = tokio::sync::watch::channel(false);
        self.running.lock().push(RunningCall {
            id,
            cancelled,
            finished: receiver,
        });
        CallDone {
            calls: self.clone(),
            id,
            finished,
        }
    }

    /// Waits (a bounded time) for the cancelled calls still tearing down.
    async fn settle_cancelled(&self) {
        let waiting: Vec<tokio::sync::watch::Receiver<bool>> = self
            .running
            .lock()
            .iter()
            .filter(|c| c.cancelled.is_cancelled())
            .map(|c| c.finished.clone())
            .collect();
        for mut finished in waiting {
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(10),
                finished.wait_for(|done| *done),
            )
            .await;
        }
    }
}

impl TabwireServer {
    pub fn new(engine: &Arc<Engine>, options: &SessionOptions) -> TabwireServer {
        TabwireServer::with(engine, &options.shared())
    }

    pub fn with(engine: &Arc<Engine>, shared: &SharedSession) -> TabwireServer {
        TabwireServer::speaking_as(Arc::new(engine.new_session()), shared)
    }

    /// A session handler for an agent that may outlive it (the command line's).
    fn speaking_as(session: Arc<AgentSession>, shared: &SharedSession) -> TabwireServer {
        TabwireServer {
            session,
            settings: Arc::new(SessionSettings::new(
                shared.profile,
                shared.allow_blocked_cdp,
                shared.replies,
                shared.brokered,
            )),
            catalogue: shared.catalogue.clone(),
            listed: shared.listed.clone(),
            instructions: shared.instructions.clone(),
            log_level: Arc::default(),
            notices: Arc::default(),
            calls: Arc::default(),
            announcing_page_tools: Arc::default(),
        }
    }
}

fn describe(face: &Face, tool: &ToolDef, replies: Replies, compact: bool) -> Tool {
    let hints = &tool.hints;
    let mut annotations = ToolAnnotations::new();
    let mut any = false;
    // MCP's defaults: read-only false, destructive true, idempotent false, open-world true.
    let mut said = |value: bool, default: bool| {
        let say = (face.every_hint && !compact) || value != default;
        any |= say;
        say
    };
    if said(hints.read_only, false) {
        annotations = annotations.read_only(hints.read_only);
    }
    if said(hints.destructive, true) {
        annotations = annotations.destructive(hints.destructive);
    }
    if said(hints.idempotent, false) {
        annotations = annotations.idempotent(hints.idempotent);
    }
    if said(hints.open_world, true) {
        annotations = annotations.open_world(hints.open_world);
    }
    let mut schema = params::schema((tool.params)());
    if compact {
        schema = crate::tools::compact_schema(schema);
    }
    let mut described = Tool::new(tool.name, tool.description, Arc::new(schema));
    if any {
        described = described.with_annotations(annotations);
    }
    // A lean reply is text, not structured content, so it declares no output schema.
    // A compact list leaves out an output schema that says no more than "an object".
    let says_more = |schema: &Map<String, Value>| !compact || schema.len() > 1;
    if let Some(schema) = (face.output_schema)(tool)
        .filter(|_| replies == Replies::Exact)
        .filter(says_more)
    {
        described = described.with_raw_output_schema(Arc::new(schema));
    }
    described
}

impl TabwireServer {
    /// The faces this session serves, each once.
    fn faces(&self) -> Vec<&'static Face> {
        let mut faces: Vec<&'static Face> = Vec::new();
        for (face, _) in self.catalogue.iter() {
            if !faces.iter().any(|f| std::ptr::eq(*f, *face)) {
                faces.push(face);
            }
        }
        faces
    }

    /// Every guide the served faces offer.
    fn guides(&self) -> impl Iterator<Item = &'static Guide> {
        self.faces().into_iter().flat_map(|face| face.guides.iter())
    }
}

/// How a guide is listed as a resource.
fn listed_guide(guide: &Guide) -> Resource {
    Resource::new(guide.uri, guide.name)
        .with_description(guide.description)
        .with_mime_type(GUIDE_MIME)
}

/// Guides are markdown.
const GUIDE_MIME: &str = "text/markdown";

impl ServerHandler for TabwireServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        // Resources and prompts are declared only where a face serves them.
        if self.guides().next().is_some() {
            capabilities.resources = Some(ResourcesCapability::default());
        }
        if self.faces().iter().any(|face| face.lists_prompts) {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("tabwire", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.to_string())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if self.guides().next().is_none() {
            return Err(ErrorData::method_not_found::<ListResourcesRequestMethod>());
        }
        Ok(ListResourcesResult::with_all_items(
            self.guides().map(listed_guide).collect(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some(guide) = self.guides().find(|guide| guide.uri == request.uri) else {
            return Err(ErrorData::resource_not_found(
                format!("no resource '{}'", request.uri),
                Some(json!({ "uri": request.uri })),
            ));
        };
        let contents = ResourceContents::TextResourceContents {
            uri: guide.uri.to_owned(),
            mime_type: Some(GUIDE_MIME.to_owned()),
            text: guide.text.to_owned(),
            meta: None,
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.listed.as_ref().clone();
        let page_tools = self.page_tools_listed();
        if self.runs_page_tools() {
            // From the first list on, the client hears when the page's tools change.
            if self.announcing_page_tools.set(()).is_ok() {
                tokio::spawn(announce_page_tools(
                    Arc::downgrade(&self.session),
                    context.peer.clone(),
                    page_tools.iter().map(|t| t.name.to_string()).collect(),
                ));
            }
            tools.extend(page_tools);
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // As listed; a tool served but not listed (as its original hides it) in full.
        self.listed
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
            .or_else(|| {
                self.catalogue
                    .iter()
                    .find(|(_, tool)| tool.name == name)
                    .map(|(face, tool)| describe(face, tool, self.settings.replies, false))
            })
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let first = self.log_level.lock().replace(request.level).is_none();
        if first {
            let (queue, notices) = tokio::sync::mpsc::channel(NOTICE_QUEUE);
            if self.notices.set(queue.clone()).is_ok() {
                tokio::spawn(send_notices(context.peer.clone(), notices));
                tokio::spawn(forward_logs(queue, self.log_level.clone()));
            }
        }
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let called = request.name.to_string();
        let found = self
            .catalogue
            .iter()
            .find(|(_, tool)| tool.name == request.name)
            .copied();
        let (face, tool, request) = match found {
            Some((face, tool)) => (face, tool, request),
            None => self.page_tool_call(request)?,
        };
        self.calls.settle_cancelled().await;
        let _running = self.calls.begin(context.ct.clone());
        let started = Instant::now();
        let arguments = request.arguments.clone().unwrap_or_default();
        // What the call gave that the tool does not take is said, a refusal included.
        let ignored = params::undeclared((tool.params)(), &arguments);
        let outcome = match params::check((tool.params)(), request.arguments) {
            Ok(args) => self.run(face, tool, args, &context).await,
            Err(error) => Err(error),
        };
        let call = Rendered {
            called_as: called,
            elapsed_ms: started.elapsed().as_millis() as u64,
            arguments,
            ignored,
            facts: Map::new(),
        };
        Ok(self.render(face, tool, outcome, call))
    }
}

impl TabwireServer {
    /// Whether a face served runs page tools (then the current tab's are listed).
    fn runs_page_tools(&self) -> bool {
        self.faces()
            .iter()
            .any(|face| face.page_tool_runner.is_some())
    }

    /// The current tab's page tools, as tools/list shows them.
    fn page_tools_listed(&self) -> Vec<rmcp::model::Tool> {
        match self.session.current_page_tools() {
            Some((tab, tools)) => tools
                .iter()
                .zip(crate::page_tools::exposed_names(&tools))
                .map(|(tool, name)| crate::page_tools::listed(&tab, tool, name))
                .collect(),
            None => Vec::new(),
        }
    }

    /// A call of a page tool listed as `webmcp_<name>`, as the call of the face's tool
    /// that runs page tools.
    fn page_tool_call(
        &self,
        request: CallToolRequestParams,
    ) -> Result<(&'static Face, &'static ToolDef, CallToolRequestParams), ErrorData> {
        let unknown =
            || ErrorData::invalid_params(format!("unknown tool '{}'", request.name), None);
        if !request.name.starts_with(crate::page_tools::PREFIX) {
            return Err(unknown());
        }
        let runner = self
            .catalogue
            .iter()
            .find(|(face, tool)| face.page_tool_runner == Some(tool.name));
        let Some((face, tool)) = runner.copied() else {
            return Err(unknown());
        };
        let tools = self
            .session
            .current_page_tools()
            .map(|(_, tools)| tools)
            .unwrap_or_default();
        let Some(page_tool) = crate::page_tools::named(&tools, &request.name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "the current tab's page offers no tool listed as '{}' now (it may have navigated); list the tools again",
                    request.name
                ),
                None,
            ));
        };
        let mut arguments = Map::new();
        arguments.insert("name".into(), json!(page_tool.name));
        arguments.insert(
            "arguments".into(),
            Value::Object(request.arguments.unwrap_or_default()),
        );
        let mut routed = CallToolRequestParams::new(tool.name);
        routed.arguments = Some(arguments);
        Ok((face, tool, routed))
    }

    /// Runs a checked call in a task of its own: a panic inside one tool must not take
    /// the server down with it, and a cancelled call stops its work at once (what it
    /// held is let go).
    async fn run(
        &self,
        face: &Face,
        tool: &'static ToolDef,
        args: params::Args,
        context: &RequestContext<RoleServer>,
    ) -> Result<Reply, ToolError> {
        let limit = params::time_limit((tool.params)(), &args);
        let call = Call {
            session: self.session.clone(),
            deadline: engine::Deadline::after(limit.unwrap_or(face.default_time_limit)),
            args,
            settings: self.settings.clone(),
            catalogue: self.catalogue.clone(),
            cancelled: context.ct.clone(),
        };
        self.log(
            LoggingLevel::Debug,
            json!({ "call": tool.name, "state": "started" }),
        );
        let ticker = progress_ticker(context, tool.name, limit);
        // A browser that died since the last call is found out before this one sends it
        // anything (see `AgentSession::run_call`).
        let session = self.session.clone();
        let deadline = call.deadline;
        let short_name = face.short_name(tool.name);
        let mut work = tokio::spawn(async move {
            let outcome = session
                .run_call(
                    deadline,
                    || (tool.run)(call.clone()),
                    ToolError::engine_error,
                )
                .await;
            let engine = &session.engine;
            // An action on a tab that an auto GIF recording follows adds its frame.
            if let Ok(reply) = &outcome
                && let Some(acted) = reply.acted
                && let Some(tab) = &reply.target
            {
                let overlay = engine::Overlay {
                    mark: reply.mark,
                    label: Some(action_label(short_name, acted, reply.mark, &tab.url)),
                };
                engine.recordings.gifs.after_action(tab, overlay).await;
            }
            outcome
        });
        let joined = tokio::select! {
            joined = &mut work => Some(joined),
            () = context.ct.cancelled() => None,
        };
        if let Some(ticker) = ticker {
            ticker.abort();
        }
        match joined {
            Some(Ok(outcome)) => outcome,
            Some(Err(join)) => Err(engine::EngineError::Io(format!(
                "internal error in {}: {join}",
                tool.name
            ))
            .into()),
            None => {
                // Dropping its future lets go of what it held (its tab); wait for that so
                // the next call finds the tab free.
                work.abort();
                let _ = work.await;
                Err(engine::EngineError::page(
                    engine::ErrorCode::Cancelled,
                    "the client cancelled the call; its work was stopped",
                    Value::Null,
                )
                .may_have_run()
                .into())
            }
        }
    }

    /// The call's outcome as its face (and reply mode) writes it, with the facts of the
    /// call itself; its finish is logged.
    fn render(
        &self,
        face: &Face,
        tool: &ToolDef,
        outcome: Result<Reply, ToolError>,
        mut rendered: Rendered,
    ) -> CallToolResponse {
        if let Err(error) = &outcome {
            tracing::debug!(tool = tool.name, %error, "tool failed");
        }
        // A default tab that closed and was replaced is a fact of this call, whether it
        // then succeeded or not.
        let mut facts = serde_json::Map::new();
        if let Some(switch) = self.session.take_switch() {
            facts.insert("switched_session".into(), json!(switch.to));
            facts.insert("switched_from".into(), json!(switch.from));
        }
        // So is a browser lost since the last reply: what it held is gone, and this
        // call ran in a new one (or could not).
        if let Some(loss) = self.session.loss_to_reply() {
            facts.insert("browser_lost".into(), json!(loss));
            facts.insert("state_carried_over".into(), json!(false));
        }
        rendered.facts = facts;
        // A failure the tool reports in its own result is a failure too.
        let ok = outcome.as_ref().is_ok_and(|reply| reply.failure.is_none());
        self.log(
            if ok {
                LoggingLevel::Info
            } else {
                LoggingLevel::Warning
            },
            json!({
                "call": tool.name, "state": "finished", "ok": ok,
                "elapsed_ms": rendered.elapsed_ms,
                "error": outcome.as_ref().err().map(ToString::to_string),
            }),
        );
        written(face, tool, outcome, &rendered, self.settings.replies).into()
    }
}

impl TabwireServer {
    /// Sends one log line about this session's own call to its client, if it asked for
    /// that level.
    fn log(&self, level: LoggingLevel, data: Value) {
        use rmcp::model::LoggingMessageNotificationParam;
        let wanted = *self.log_level.lock();
        if wanted.is_some_and(|w| logging::rank(level) >= logging::rank(w))
            && let Some(queue) = self.notices.get()
        {
            let param =
                LoggingMessageNotificationParam::new(level, data).with_logger("tabwire::call");
            // A client too slow to take its notices loses the newest, not the server's
            // memory.
            let _ = queue.try_send(param);
        }
    }
}

/// Tells a session's client each time the page tools of its current tab change (a page
/// registered or dropped one, the tab navigated, the session switched tabs), until the
/// session or the client goes away.
async fn announce_page_tools(
    session: std::sync::Weak<AgentSession>,
    peer: rmcp::Peer<RoleServer>,
    mut announced: Vec<String>,
) {
    let Some(engine) = session.upgrade().map(|s| s.engine.clone()) else {
        return;
    };
    let mut changes = engine.browsers.registry().watch_changes();
    while changes.changed().await.is_ok() {
        let Some(session) = session.upgrade() else {
            return;
        };
        let now: Vec<String> = session
            .current_page_tools()
            .map(|(_, tools)| crate::page_tools::exposed_names(&tools))
            .unwrap_or_default();
        drop(session);
        if now != announced {
            if peer.notify_tool_list_changed().await.is_err() {
                return;
            }
            announced = now;
        }
    }
}

/// One log notice for a client.
type LogNotice = rmcp::model::LoggingMessageNotificationParam;

/// Log notices a session may have queued for a slow client.
const NOTICE_QUEUE: usize = 1024;

/// Sends a session's log notices, one at a time, in the order they were made.
async fn send_notices(
    peer: rmcp::Peer<RoleServer>,
    mut notices: tokio::sync::mpsc::Receiver<LogNotice>,
) {
    while let Some(notice) = notices.recv().await {
        if peer.notify_logging_message(notice).await.is_err() {
            return;
        }
    }
}

/// Sends the client the engine's log lines (about the browser all sessions share) at its
/// level and above, until it goes away.
#[allow(deprecated)]
async fn forward_logs(
    queue: tokio::sync::mpsc::Sender<LogNotice>,
    level: Arc<parking_lot::Mutex<Option<LoggingLevel>>>,
) {
    use rmcp::model::LoggingMessageNotificationParam;
    let mut lines = logging::subscribe();
    loop {
        let line = match lines.recv().await {
            Ok(line) => line,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(_) => return,
        };
        let wanted = *level.lock();
        let line_level = logging::mcp_level(line.level);
        if wanted.is_none_or(|w| logging::rank(line_level) < logging::rank(w)) {
            continue;
        }
        let data = serde_json::from_str(&line.message).unwrap_or(Value::String(line.message));
        let param = LoggingMessageNotificationParam::new(line_level, data).with_logger(line.target);
        match queue.try_send(param) {
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => return,
            // A client too slow to take its notices loses the newest.
            Ok(()) | Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {}
        }
    }
}

/// While a call runs, tells a client that asked (a `progressToken`) how many seconds it
/// has run and, when its tool declares a time limit, of how many.
fn progress_ticker(
    context: &RequestContext<RoleServer>,
    tool: &'static str,
    limit: Option<std::time::Duration>,
) -> Option<tokio::task::JoinHandle<()>> {
    use rmcp::model::ProgressNotificationParam;
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    let total = limit.map(|limit| limit.as_secs_f64());
    Some(tokio::spawn(async move {
        let started = Instant::now();
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        tick.tick().await;
        loop {
            tick.tick().await;
            let elapsed = started.elapsed().as_secs_f64().floor();
            let mut param = ProgressNotificationParam::new(token.clone(), elapsed)
                .with_message(format!("{tool}: running for {elapsed} s"));
            if let Some(total) = total {
                param = param.with_total(total);
            }
            if peer.notify_progress(param).await.is_err() {
                return;
            }
        }
    }))
}

/// Serves one MCP session over stdin/stdout until the client goes away.
pub async fn serve_stdio(engine: Arc<Engine>, options: SessionOptions) -> Result<(), ServeError> {
    serve_stream(engine, options, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves one MCP session over any byte stream (a broker's Unix socket connection, say)
/// until the client goes away. Each call is its own agent session.
pub async fn serve_stream<R, W>(
    engine: Arc<Engine>,
    options: SessionOptions,
    reader: R,
    writer: W,
) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    serve_stream_as(engine, options, None, reader, writer).await
}

/// An MCP session on a byte stream that speaks as `agent` when given: an agent kept
/// across connections (its default tab, its tabs), as the command line's calls are.
pub async fn serve_stream_as<R, W>(
    engine: Arc<Engine>,
    options: SessionOptions,
    agent: Option<Arc<AgentSession>>,
    reader: R,
    writer: W,
) -> Result<(), ServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let server = match agent {
        Some(agent) => TabwireServer::speaking_as(agent, &options.shared()),
        None => TabwireServer::new(&engine, &options),
    };
    let (reader, writer) = crate::stream::guard_initialize(reader, writer);
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

/// The MCP result of a call: judged by its face, then written exactly (by the face) or
/// leanly (by `lean::write`, the same for every face) from that one judgement.
pub(crate) fn written(
    face: &Face,
    tool: &ToolDef,
    outcome: Result<Reply, ToolError>,
    call: &Rendered,
    replies: Replies,
) -> CallToolResult {
    let answer = (face.judge)(tool, outcome, call);
    match replies {
        Replies::Exact => (face.write)(tool, answer, call),
        Replies::Lean => crate::lean::write(answer, &face.quiet),
    }
}

/// What a GIF frame after an action calls it: `CLICK` or `DRAG` where it landed,
/// `→ host` after a navigation, else the tool's name without its face's prefix. The face
/// says which is which (`Reply::navigation`, `Face::tool_prefixes`); no tool is named here.
fn action_label(short_name: &str, acted: Acted, mark: Option<engine::Mark>, url: &str) -> String {
    match mark {
        Some(engine::Mark::Point(..)) => return "CLICK".into(),
        Some(engine::Mark::Drag { .. }) => return "DRAG".into(),
        None => {}
    }
    if acted == Acted::Navigated
        && let Some(place) = engine::urls::authority_of(url)
    {
        return format!("\u{2192} {place}");
    }
    short_name.replace('_', " ").to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::{Acted, action_label};
    use crate::faces;

    #[test]
    fn a_frame_is_labelled_from_what_the_reply_says_it_did() {
        let click = Some(engine::Mark::Point(1.0, 2.0));
        assert_eq!(
            action_label("click", Acted::OnPage, click, "https://a.example/"),
            "CLICK"
        );
        let went = action_label(
            "navigate",
            Acted::Navigated,
            None,
            "http://127.0.0.1:8080/x",
        );
        assert_eq!(went, "\u{2192} 127.0.0.1:8080");
        // A navigation to a page without a host is named by the tool.
        assert_eq!(
            action_label("open_url", Acted::Navigated, None, "about:blank"),
            "OPEN URL"
        );
        assert_eq!(
            action_label("fill_or_select", Acted::OnPage, None, "https://a.example/"),
            "FILL OR SELECT"
        );
    }

    #[test]
    fn a_tool_is_named_without_its_faces_prefix() {
        assert_eq!(
            faces::chrome::FACE.short_name("chrome_click_element"),
            "click_element"
        );
        assert_eq!(faces::btap::FACE.short_name("page_click"), "click");
        assert_eq!(faces::btap::FACE.short_name("open_url"), "open_url");
    }
}
