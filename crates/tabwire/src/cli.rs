//! tabwire on the command line: `tabwire call TOOL [JSON]` runs one tool and exits,
//! `tabwire tools` lists them, `tabwire skill` prints the skill document for coding
//! agents, `tabwire browser status|stop` says what runs and ends it.
//!
//! A call is an MCP session like any other, served by the profile's broker (started on
//! the first call) through the same engine and faces: the command line holds no tool of
//! its own. Its calls speak as one agent the broker keeps by name (`--session`, default
//! `default`), so the tabs, default tab and refs one call leaves are there for the next; the
//! broker keeps the browser up for `--keep` seconds after a call (10 minutes unless
//! said), so the next call finds it warm.

use std::io::Write as _;

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::ServeArgs;
use crate::broker;

/// Writes a line to stdout; a reader that went away (`| head`) is not an error.
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($arg)*);
    }};
}

/// How long the browser stays up after a command-line call unless `--keep` says.
pub const KEEP_SECONDS: f64 = 600.0;

/// The skill document: how a coding agent drives a browser with these commands.
pub const SKILL: &str = include_str!("skill.md");

/// What a call asked for, besides the tool.
pub struct CallRequest {
    pub tool: String,
    /// The arguments as JSON text, `-` for standard input; None: no arguments.
    pub arguments: Option<String>,
    /// The exact reply as JSON instead of lean text.
    pub json: bool,
    pub session: String,
    pub keep: f64,
}

/// Exit statuses: the tool answered, the tool failed, the call could not be made.
pub const EXIT_OK: u8 = 0;
pub const EXIT_TOOL_FAILED: u8 = 1;
pub const EXIT_NOT_CALLED: u8 = 2;

/// Runs one tool through the profile's broker; the status to exit with.
pub async fn call(args: &ServeArgs, request: CallRequest) -> anyhow::Result<u8> {
    let arguments = match read_arguments(request.arguments.as_deref()) {
        Ok(arguments) => arguments,
        Err(error) => {
            eprintln!("tabwire: {error:#}");
            return Ok(EXIT_NOT_CALLED);
        }
    };
    let key = shared_key(args)?;
    let paths = broker::paths_for(&key)?;
    let mut preamble = args.preamble()?;
    // Every tool is callable; the reply is lean text unless --json asks for the original's.
    preamble.tools = "all".into();
    preamble.replies = if request.json { "exact" } else { "lean" }.into();
    preamble.agent = Some(format!("cli:{}", request.session));
    preamble.keep_s = Some(request.keep);
    let answer = match ask(&paths, args, &preamble, &request.tool, arguments).await {
        Ok(answer) => answer,
        // No tool ran: the broker could not start or refused this call.
        Err(error) => {
            eprintln!("tabwire: {error:#}");
            return Ok(EXIT_NOT_CALLED);
        }
    };
    if let Some(error) = answer.get("error") {
        eprintln!(
            "tabwire: {}",
            error["message"].as_str().unwrap_or("the call was refused")
        );
        return Ok(EXIT_NOT_CALLED);
    }
    let result = &answer["result"];
    let failed = result["isError"] == true;
    if request.json {
        say!("{}", serde_json::to_string(result)?);
    } else {
        let text = said(result);
        if failed {
            eprintln!("{text}");
        } else {
            say!("{text}");
        }
    }
    let _ = std::io::stdout().flush();
    Ok(if failed { EXIT_TOOL_FAILED } else { EXIT_OK })
}

/// One `tools/call` through the profile's broker (started if none runs): its JSON-RPC
/// answer.
async fn ask(
    paths: &broker::BrokerPaths,
    args: &ServeArgs,
    preamble: &broker::Preamble,
    tool: &str,
    arguments: Map<String, Value>,
) -> anyhow::Result<Value> {
    let stream = broker::connect_or_start(paths, &args.broker_args()).await?;
    let mut session = Session::open(stream, preamble).await?;
    let answer = session
        .request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
        .await?;
    session.close().await;
    Ok(answer)
}

/// What the broker of this profile runs, if one does.
pub async fn browser_status(args: &ServeArgs) -> anyhow::Result<u8> {
    match broker_command(args, "status").await? {
        Some(status) => {
            let agents: Vec<&str> = status["agents"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            say!(
                "running: broker pid {}, {} link, browser {}; {} other client(s); command-line sessions: {}; stays up {} s after the last call",
                status["pid"],
                status["link"].as_str().unwrap_or("?"),
                match status["browser_pid"].as_u64() {
                    Some(pid) => format!("pid {pid}"),
                    None if status["browser_running"] == true => "linked".into(),
                    None => "not started yet".into(),
                },
                status["clients"],
                if agents.is_empty() {
                    "none".into()
                } else {
                    agents.join(", ")
                },
                status["stays_s"],
            );
        }
        None => say!("not running: no tabwire browser for this profile"),
    }
    Ok(EXIT_OK)
}

/// Ends the profile's broker and its browser, if one runs.
pub async fn browser_stop(args: &ServeArgs) -> anyhow::Result<u8> {
    if broker_command(args, "stop").await?.is_none() {
        say!("not running: nothing to stop");
        return Ok(EXIT_OK);
    }
    // The broker holds its lock until its browser has closed the profile: once the lock
    // is free, the profile is the caller's again (to copy, or remove).
    let paths = broker::paths_for(&shared_key(args)?)?;
    let deadline = tokio::time::Instant::now() + STOP_WAIT;
    loop {
        if broker::try_lock(&paths)?.is_some() {
            say!("stopped");
            return Ok(EXIT_OK);
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "the browser was asked to stop but still holds the profile after {} s",
                STOP_WAIT.as_secs()
            );
        }
        tokio::time::sleep(STOP_POLL).await;
    }
}

/// How long `browser stop` waits for the browser to let go of the profile, and how often
/// it looks (the lock has no event to wait on across processes).
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(20);
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(25);

/// Says a command to the broker, if one answers on this profile's socket.
async fn broker_command(args: &ServeArgs, command: &str) -> anyhow::Result<Option<Value>> {
    let paths = broker::paths_for(&shared_key(args)?)?;
    let Ok(stream) = platform::local::Stream::connect(&paths.socket).await else {
        return Ok(None);
    };
    let mut preamble = args.preamble()?;
    preamble.command = Some(command.to_owned());
    let (reader, mut writer) = tokio::io::split(stream);
    writer
        .write_all(format!("{}\n", serde_json::to_string(&preamble)?).as_bytes())
        .await?;
    let mut line = String::new();
    BufReader::new(reader).read_line(&mut line).await?;
    let answer: Value = serde_json::from_str(line.trim()).context("the broker's answer")?;
    if answer["ok"] != true {
        bail!(
            "{}",
            answer["error"].as_str().unwrap_or("the broker refused")
        );
    }
    Ok(Some(answer))
}

/// The broker key of a profile the command line can keep a browser in.
fn shared_key(args: &ServeArgs) -> anyhow::Result<String> {
    args.shared_link_key().context(
        "the command line keeps its browser between calls in a profile: drop --isolated and --no-broker (a throw-away profile of your own: --user-data-dir DIR)",
    )
}

/// The call's arguments: a JSON object given, read from standard input (`-`), or none.
fn read_arguments(given: Option<&str>) -> anyhow::Result<Map<String, Value>> {
    let text = match given {
        None => return Ok(Map::new()),
        Some("-") => std::io::read_to_string(std::io::stdin()).context("reading standard input")?,
        Some(text) => text.to_owned(),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(arguments)) => Ok(arguments),
        Ok(other) => bail!(
            "the arguments must be a JSON object, like '{{\"url\": \"https://example.com\"}}', not {other}"
        ),
        Err(error) => bail!("the arguments are not JSON ({error}): {text}"),
    }
}

/// A result's text, and a line for each image it carries.
fn said(result: &Value) -> String {
    let mut lines = Vec::new();
    for block in result["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => lines.push(block["text"].as_str().unwrap_or_default().to_owned()),
            Some("image") => lines.push(format!(
                "[image {}, {} base64 characters: capture_page_screenshot's save_path writes it to a file]",
                block["mimeType"].as_str().unwrap_or("?"),
                block["data"].as_str().map_or(0, str::len)
            )),
            _ => {}
        }
    }
    lines.join("\n")
}

/// One MCP session over a broker connection, spoken line by line.
struct Session {
    reader: BufReader<tokio::io::ReadHalf<platform::local::Stream>>,
    writer: tokio::io::WriteHalf<platform::local::Stream>,
    next_id: u64,
}

impl Session {
    /// Says the preamble, then initializes MCP.
    async fn open(
        stream: platform::local::Stream,
        preamble: &broker::Preamble,
    ) -> anyhow::Result<Session> {
        let (reader, writer) = tokio::io::split(stream);
        let mut session = Session {
            reader: BufReader::new(reader),
            writer,
            next_id: 1,
        };
        session.send(&serde_json::to_value(preamble)?).await?;
        let answer = session.line().await?;
        if answer["ok"] != true {
            bail!(
                "{}",
                answer["error"]
                    .as_str()
                    .unwrap_or("the broker refused this call")
            );
        }
        let initialized = session
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": { "name": "tabwire-cli", "version": env!("CARGO_PKG_VERSION") },
                }),
            )
            .await?;
        if let Some(error) = initialized.get("error") {
            bail!("the server refused to start the session: {error}");
        }
        session
            .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await?;
        Ok(session)
    }

    /// A request and its answer (notifications meanwhile are passed over).
    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        loop {
            let message = self.line().await?;
            if message["id"] == id {
                return Ok(message);
            }
        }
    }

    async fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        self.writer
            .write_all(format!("{message}\n").as_bytes())
            .await
            .context("the broker connection closed")
    }

    async fn line(&mut self) -> anyhow::Result<Value> {
        let mut line = String::new();
        if self.reader.read_line(&mut line).await? == 0 {
            bail!("the broker closed the connection before answering");
        }
        serde_json::from_str(line.trim()).context("the broker's reply is not JSON")
    }

    /// Ends the session: the broker ends it when the connection closes.
    async fn close(mut self) {
        let _ = self.writer.shutdown().await;
    }
}

/// `tabwire tools`: each tool of the faces and profile given, with its one line.
pub fn list_tools(args: &ServeArgs) -> anyhow::Result<u8> {
    let faces = mcp::faces::by_names(&args.face).map_err(anyhow::Error::msg)?;
    let tools = mcp::ToolSet::parse(&args.tools, &faces).map_err(anyhow::Error::msg)?;
    for face in &faces {
        for tool in face
            .tools
            .iter()
            .filter(|t| t.listed && tools.serves(face, t))
        {
            say!("{:<28} {}", tool.name, first_sentence(tool.description));
        }
    }
    Ok(EXIT_OK)
}

/// `tabwire tools NAME`: one tool's description and parameters.
pub fn show_tool(args: &ServeArgs, name: &str) -> anyhow::Result<u8> {
    let faces = mcp::faces::by_names(&args.face).map_err(anyhow::Error::msg)?;
    let Some(tool) = faces
        .iter()
        .flat_map(|face| face.tools.iter())
        .find(|tool| tool.name == name)
    else {
        eprintln!(
            "tabwire: no tool '{name}' in the face(s) {}; `tabwire tools` lists them",
            args.face
        );
        return Ok(EXIT_NOT_CALLED);
    };
    say!("{}\n\n{}\n", tool.name, tool.description);
    let schema = mcp::input_schema(tool);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (param, property) in schema["properties"].as_object().into_iter().flatten() {
        let kind = match &property["type"] {
            Value::Array(types) => types
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect::<Vec<_>>()
                .join("|"),
            other => other.as_str().unwrap_or("any").to_owned(),
        };
        let mut line = format!("  {param} ({kind})");
        if required.contains(&param.as_str()) {
            line.push_str(" required");
        } else if let Some(default) = property.get("default").filter(|d| !d.is_null()) {
            line.push_str(&format!(" default {default}"));
        }
        if let Some(values) = property["enum"].as_array() {
            let values: Vec<String> = values.iter().map(Value::to_string).collect();
            line.push_str(&format!(" one of {}", values.join(", ")));
        }
        if let Some(doc) = property["description"].as_str() {
            line.push_str(&format!(": {doc}"));
        }
        say!("{line}");
    }
    Ok(EXIT_OK)
}

/// `tabwire skill`.
pub fn print_skill() {
    let _ = std::io::stdout().lock().write_all(SKILL.as_bytes());
}

fn first_sentence(text: &str) -> &str {
    match text.find(". ") {
        Some(end) => &text[..=end],
        None => text,
    }
}
