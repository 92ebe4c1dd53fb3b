//! A face is a value: a catalogue of MCP tools (names, parameter schemas, descriptions,
//! annotations), the instructions a client is given, and how the face's replies are
//! shaped. Each tool is a short adapter from its typed parameters to engine calls and
//! from the engine's answer to a [`Reply`]; faces hold no browser logic. The server, the
//! HTTP layer and the broker serve any face without knowing which.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use engine::{AgentSession, Engine, TabInfo};

pub use crate::error::ToolError;
use crate::params::{Args, Param};

pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Reply, ToolError>> + Send>>;

/// Honest hints for every parameter path of a tool.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

pub struct ToolDef {
    pub name: &'static str,
    pub group: &'static str,
    pub description: &'static str,
    pub params: fn() -> &'static [Param],
    pub hints: Hints,
    /// Callable but left out of `tools/list` (as the original does).
    pub listed: bool,
    /// How the payload is written as text, where the face writes it as its original did.
    pub text: TextStyle,
    /// Reads checked arguments into the tool's parameter struct (what `run` does first);
    /// on its own for the parameter layer's property tests.
    pub parses: fn(&Args) -> Result<(), ToolError>,
    pub run: fn(Call) -> ToolFuture,
}

/// How a payload is written as JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    Compact,
    /// Indented, as the Chrome MCP Server writes its history, bookmark and search replies.
    Pretty,
}

/// Declares a tool: its name, group, hints, parameter struct, adapter and description.
/// The adapter is `async fn(Call, Params) -> Result<Reply, ToolError>`. A leading
/// `hidden` leaves it out of `tools/list`; `pretty` writes its payload indented.
#[macro_export]
macro_rules! tool {
    ($name:literal, $group:literal, $hints:expr, $params:ty, $run:path, $doc:literal) => {
        $crate::tool!(@ $name, $group, $hints, $params, $run, $doc, true, Compact)
    };
    (hidden $name:literal, $group:literal, $hints:expr, $params:ty, $run:path, $doc:literal) => {
        $crate::tool!(@ $name, $group, $hints, $params, $run, $doc, false, Compact)
    };
    (pretty $name:literal, $group:literal, $hints:expr, $params:ty, $run:path, $doc:literal) => {
        $crate::tool!(@ $name, $group, $hints, $params, $run, $doc, true, Pretty)
    };
    (@ $name:literal, $group:literal, $hints:expr, $params:ty, $run:path, $doc:literal, $listed:expr, $text:ident) => {
        $crate::face::ToolDef {
            name: $name,
            group: $group,
            description: $doc,
            params: <$params as $crate::params::Params>::params,
            hints: $hints,
            listed: $listed,
            text: $crate::face::TextStyle::$text,
            parses: |args| <$params as $crate::params::Params>::parse(args).map(drop),
            run: |call| {
                Box::pin(async move {
                    let params = <$params as $crate::params::Params>::parse(&call.args)?;
                    $run(call, params).await
                })
            },
        }
    };
}

/// What a tool adapter gets: the calling agent's session, checked arguments and the
/// session's settings.
#[derive(Clone)]
pub struct Call {
    pub session: Arc<AgentSession>,
    pub args: Args,
    /// How long the call may take: its tool's time limit argument (or that argument's
    /// default), else the face's default.
    pub deadline: engine::Deadline,
    pub settings: Arc<SessionSettings>,
    /// Every tool this server serves (for status reports).
    pub catalogue: Arc<Vec<(&'static Face, &'static ToolDef)>>,
    /// Fires when the client cancels this call (or its session ends).
    pub cancelled: tokio_util::sync::CancellationToken,
}

impl Call {
    pub fn engine(&self) -> &Arc<Engine> {
        &self.session.engine
    }
}

/// A tool's successful answer, before its face shapes it.
#[derive(Default)]
pub struct Reply {
    pub data: Value,
    /// The tab it acted on.
    pub target: Option<TabInfo>,
    /// Facts of the call that belong in the face's diagnostics (not the payload).
    pub facts: Map<String, Value>,
    /// Images sent as MCP image content next to the payload: (base64, mime type).
    pub images: Vec<(String, &'static str)>,
    /// The reply in a few words, for lean replies (`--replies lean`): an outline, or
    /// what an input did. None: the payload is encoded as it is (`lean::encode`).
    pub lean: Option<String>,
    /// The failure the tool reports beside its payload (None: it succeeded). Faces
    /// decide success from this alone, never from the payload's words.
    pub failure: Option<SoftFailure>,
    /// Where an input landed (a click's point, a drag's path), in CSS px of the
    /// viewport: a GIF recording marks it.
    pub mark: Option<engine::Mark>,
    /// What the call did to its tab, if anything: an auto GIF recording of the tab takes
    /// a frame after it, labelled from this.
    pub acted: Option<Acted>,
}

/// What a call did to its tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acted {
    /// Acted on the page (a click, typing, a change): labelled with the tool's name.
    OnPage,
    /// Took the tab to a page (opened, went back): labelled with where it went.
    Navigated,
}

impl Reply {
    pub fn data(data: Value) -> Reply {
        Reply {
            data,
            ..Reply::default()
        }
    }

    /// The answer of a call that acted on its tab's page (see `acted`).
    pub fn action(data: Value) -> Reply {
        Reply {
            data,
            acted: Some(Acted::OnPage),
            ..Reply::default()
        }
    }

    /// The answer of a call that took its tab to a page (see `acted`).
    pub fn navigation(data: Value) -> Reply {
        Reply {
            data,
            acted: Some(Acted::Navigated),
            ..Reply::default()
        }
    }

    /// Marks the reply as the tool's own failure, its payload still said.
    pub fn failed(mut self, code: impl Into<String>, message: impl Into<String>) -> Reply {
        self.failure = Some(SoftFailure::new(code, message));
        self
    }

    /// The point an input landed on.
    pub fn at(mut self, x: f64, y: f64) -> Reply {
        self.mark = Some(engine::Mark::Point(x, y));
        self
    }

    /// The path a drag took.
    pub fn dragged(mut self, from: (f64, f64), to: (f64, f64)) -> Reply {
        self.mark = Some(engine::Mark::Drag { from, to });
        self
    }

    pub fn on(mut self, target: TabInfo) -> Reply {
        self.target = Some(target);
        self
    }

    pub fn fact(mut self, name: &str, value: impl Into<Value>) -> Reply {
        self.facts.insert(name.to_owned(), value.into());
        self
    }

    /// The lean text of this reply (used only in lean mode).
    pub fn lean(mut self, text: impl Into<String>) -> Reply {
        self.lean = Some(text.into());
        self
    }
}

/// How a session's replies are written. The facts are the same either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Replies {
    /// The originals' wire shapes, byte for byte: for clients that parse them.
    #[default]
    Exact,
    /// Plain text for a model: no repeated projections, nothing null or default, the
    /// outline with its refs inline, one-line errors.
    Lean,
}

impl Replies {
    pub fn name(self) -> &'static str {
        match self {
            Replies::Exact => "exact",
            Replies::Lean => "lean",
        }
    }

    pub fn parse(text: &str) -> Result<Replies, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "exact" | "" => Ok(Replies::Exact),
            "lean" => Ok(Replies::Lean),
            other => Err(format!("unknown reply mode '{other}': exact or lean")),
        }
    }
}

/// Automation profile: `safe` refuses risky operations outright; `lab` allows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    Lab,
    Safe,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Safe => "safe",
            Profile::Lab => "lab",
        }
    }
}

/// Set to 1 (with the lab profile) to lift the raw CDP policy.
pub const OVERRIDE_ENV: &str = "TABWIRE_ALLOW_BLOCKED_CDP";

/// One MCP session's settings: its profile (which it may tighten, never loosen below
/// what the operator started the server with) and whether the operator allowed blocked
/// raw CDP.
pub struct SessionSettings {
    floor: Profile,
    profile: parking_lot::Mutex<Profile>,
    pub allow_blocked_cdp: bool,
    /// How this session's replies are written.
    pub replies: Replies,
    /// The session is served through a broker other MCP clients share.
    pub brokered: bool,
}

impl SessionSettings {
    pub fn new(
        floor: Profile,
        allow_blocked_cdp: bool,
        replies: Replies,
        brokered: bool,
    ) -> SessionSettings {
        SessionSettings {
            floor,
            profile: parking_lot::Mutex::new(floor),
            allow_blocked_cdp,
            replies,
            brokered,
        }
    }

    pub fn lean(&self) -> bool {
        self.replies == Replies::Lean
    }

    pub fn profile(&self) -> Profile {
        *self.profile.lock()
    }

    /// The operator's profile, below which this session cannot go.
    pub fn floor(&self) -> Profile {
        self.floor
    }

    /// The raw CDP policy this session runs under: lifted only in lab, and only if the
    /// operator allowed it.
    pub fn raw_policy(&self) -> engine::page::raw::Policy {
        engine::page::raw::Policy {
            allow_blocked: self.profile() == Profile::Lab && self.allow_blocked_cdp,
            isolated: false,
        }
    }

    /// Sets this session's profile; loosening below the operator's is refused.
    pub fn set_profile(&self, profile: Profile) -> Result<Profile, Profile> {
        if profile < self.floor {
            return Err(self.floor);
        }
        let mut current = self.profile.lock();
        Ok(std::mem::replace(&mut *current, profile))
    }
}

/// A guide a face serves as an MCP resource (markdown), for an agent to read before it
/// works: how the tools go together, and what to do when one fails.
pub struct Guide {
    pub uri: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    pub text: &'static str,
}

/// A face: its tools and how its replies look.
pub struct Face {
    pub name: &'static str,
    /// Prefixes of its tool names that only say whose tool it is (`chrome_`); a label
    /// that names the tool (a GIF frame's) leaves them out.
    pub tool_prefixes: &'static [&'static str],
    pub tools: &'static [ToolDef],
    /// Its everyday tools, served by `--tools core`: open, read, click, type, press,
    /// select, wait, screenshot, tabs, run a script.
    pub core: &'static [&'static str],
    pub instructions: &'static str,
    /// Its guides, served as resources (`resources/list`, `resources/read`).
    pub guides: &'static [Guide],
    /// Whether it answers `prompts/list` (with none), as its original's server does.
    pub lists_prompts: bool,
    /// Judges a call's outcome as the original would: failed or not, its code and retry
    /// verdict, its payload and the facts beside it.
    /// The tool of this face that runs a page's own tool (`{name, arguments}`): a call
    /// of a page tool listed as `webmcp_<name>` goes through it.
    pub page_tool_runner: Option<&'static str>,
    pub judge: fn(&ToolDef, Result<Reply, ToolError>, &Rendered) -> Answer,
    /// Writes an answer as the original's wire shape (exact replies).
    pub write: fn(&ToolDef, Answer, &Rendered) -> CallToolResult,
    /// The output schema of a tool (None: it declares none).
    pub output_schema: fn(&ToolDef) -> Option<Map<String, Value>>,
    /// Whether each tool's annotations name every hint (BrowserTap declares all four), or
    /// only those that differ from MCP's defaults (read-only false, destructive true,
    /// idempotent false, open-world true): the same facts, for a face whose original
    /// declares none.
    pub every_hint: bool,
    /// The time limit of a call whose tool declares none.
    pub default_time_limit: std::time::Duration,
    /// The keys of its replies that a lean reply leaves out.
    pub quiet: QuietKeys,
}

/// Keys of a face's replies that carry no news in a lean reply (`lean::write`): its
/// original's envelope furniture, and flags that are news only when set.
pub struct QuietKeys {
    /// Never written.
    pub never: &'static [&'static str],
    /// Written only when true.
    pub unless_true: &'static [&'static str],
}

impl QuietKeys {
    /// Whether a key's value says nothing in a lean reply.
    pub fn hides(&self, key: &str, value: &Value) -> bool {
        self.never.contains(&key)
            || (self.unless_true.contains(&key) && *value == Value::Bool(false))
    }
}

impl Face {
    /// A tool's name without the prefix that only says whose it is (`chrome_click_element`
    /// → `click_element`).
    pub fn short_name<'a>(&self, tool: &'a str) -> &'a str {
        self.tool_prefixes
            .iter()
            .find_map(|prefix| tool.strip_prefix(prefix))
            .unwrap_or(tool)
    }
}

/// A call's answer as its face judged it, before it is written. Both writers read only
/// this: whatever decides an agent's next call is here, typed or as the payload's facts.
pub struct Answer {
    /// Why the call failed (None: it succeeded).
    pub fault: Option<Fault>,
    /// What the tool answered: a success's data, or the payload a tool reports its own
    /// failure in. Null for a raised failure.
    pub payload: Value,
    /// Facts beside the payload, in the face's words: the call's own (a tab switched
    /// from, arguments set aside), a raised failure's (the parameter at fault, whether
    /// anything ran), the tool's diagnostics.
    pub facts: Map<String, Value>,
    /// The tab it acted on.
    pub target: Option<TabInfo>,
    /// Images sent as MCP image content: (base64, mime type).
    pub images: Vec<(String, &'static str)>,
    /// The reply in a few words for a lean reply (an outline, what an input did); None:
    /// the payload is written as it is.
    pub lean: Option<String>,
}

/// A failed call, judged.
pub struct Fault {
    /// The code in the face's words (`not_found`, `invalid_request`).
    pub code: String,
    pub message: String,
    /// The face's retry verdict, where its original gives one.
    pub retryable: Option<bool>,
    /// The tool reported it in its payload (true) rather than raising it.
    pub reported: bool,
}

/// What the server knows of a call beyond its outcome.
pub struct Rendered {
    /// The tool the client called (a page tool's `webmcp_` name, where the face's tool
    /// that runs page tools ran it).
    pub called_as: String,
    pub elapsed_ms: u64,
    /// The arguments as the client sent them.
    pub arguments: Map<String, Value>,
    /// Arguments the face did not declare, set aside.
    pub ignored: Vec<String>,
    /// Facts of the call itself, not of its tool (the default tab it switched from),
    /// said in every reply, success or failure.
    pub facts: Map<String, Value>,
}

/// Base64 for image content in a reply.
pub fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A failure an operation reports in its own answer instead of raising: the call ran
/// and has a payload worth reading (the operation id of a script still running, the
/// download that ended without its file), and the payload says it did not succeed.
/// Faces show it as their original does (BrowserTap's `ok: false` with the payload as
/// `legacy`, the Chrome MCP Server's `isError`); nobody reads it back out of the payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SoftFailure {
    /// A stable snake_case code (`timeout`, `requires_user_action`, a download's reason).
    pub code: String,
    pub message: String,
}

impl SoftFailure {
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> SoftFailure {
        SoftFailure {
            code: code.into(),
            message: message.into(),
        }
    }
}
