//! `bench task`: one scripted task on a small admin app, done by each server with its own
//! tools the way an agent would, and what it cost the agent: tool calls, the characters of
//! every reply it read, and the characters of `tools/list`.
//!
//! The app is `benches/pages/task` (served by pages.rs): a login form posted to the bench's
//! server, which redirects to a dashboard with a role `<select>`, a range slider, a
//! role-less "Refresh" span, a table of users with a checkbox a row and a "Delete
//! selected" button. The task: sign in, filter to editors of 30 or over, refresh, delete
//! Carol and Frank, and read that two rows were deleted. Each server finds its handles in
//! its own snapshot (Playwright MCP refs, Chrome DevTools MCP uids, tabwire's refs or
//! locators), and the last read must show the app's own account of every step, or the
//! server is reported as not having completed the task.
//!
//! tabwire is measured in more ways than the peers: both faces, exact and lean; lean with
//! `--tools core` (the same steps, a shorter tool list); and its command line, the task
//! done by `tabwire call` processes as a coding agent's shell runs them (shell.rs), whose
//! agent reads `tabwire skill` once instead of tools/list.
//!
//! Writes docs/task-benchmark.md.

use std::fmt::Write as _;

use anyhow::{Context, bail};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};

use crate::lean::{self, Config};
use crate::mcp::{Reply, call_ok, clip};
use crate::pages::{TASK_PASSWORD, TASK_USER};
use crate::servers::{Env, Kind};
use crate::shell::Shell;

/// How the agent reaches a server.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// An MCP session, with every tool the server serves unless told otherwise.
    Mcp,
    /// An MCP session to tabwire started with `--tools core`.
    McpCore,
    /// `tabwire call` processes from a shell, one a step: the btap face, lean text.
    Cli,
}

/// One row of the report: a server as the agent reads it (`config`: which replies, so
/// which handles to look for) and how the agent reaches it.
#[derive(Clone, Copy)]
struct Row {
    config: Config,
    access: Access,
}

const fn row(kind: Kind, lean: bool, access: Access) -> Row {
    Row {
        config: Config { kind, lean },
        access,
    }
}

/// The rows, in the report's order. The command line prints the btap face's lean text,
/// so its agent reads and acts as the btap lean row's does.
const ROWS: [Row; 9] = [
    row(Kind::Playwright, false, Access::Mcp),
    row(Kind::DevTools, false, Access::Mcp),
    row(Kind::Tabwire, true, Access::Mcp),
    row(Kind::Tabwire, true, Access::McpCore),
    row(Kind::Tabwire, false, Access::Mcp),
    row(Kind::TabwireChrome, true, Access::Mcp),
    row(Kind::TabwireChrome, true, Access::McpCore),
    row(Kind::TabwireChrome, false, Access::Mcp),
    row(Kind::Tabwire, true, Access::Cli),
];

impl Row {
    fn label(self) -> String {
        match self.access {
            Access::Mcp => self.config.label(),
            Access::McpCore => format!("{} --tools core", self.config.label()),
            Access::Cli => "tabwire CLI (btap)".into(),
        }
    }

    /// Whether the agent has a form tool to fill a step's fields in one call: every
    /// server serves one (the btap face page_fill, which its command line calls too), but
    /// `--tools core` leaves both faces' out (page_fill, chrome_computer).
    fn has_form_tool(self) -> bool {
        self.access != Access::McpCore
    }

    /// The flags after the server's own command line.
    fn extra_flags(self) -> &'static [&'static str] {
        match self.access {
            Access::McpCore => &["--tools", "core"],
            Access::Mcp | Access::Cli => &[],
        }
    }
}

/// How the agent fills the form fields of a step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// One call a field, with each server's single-field tools (the task as scripted).
    StepByStep,
    /// The fields of a step in one call, with the server's form tool where it has one
    /// (Playwright MCP's browser_fill_form, Chrome DevTools MCP's fill_form, the btap
    /// face's page_fill, the chrome face's chrome_computer fill_form; none with `--tools
    /// core`).
    FormTool,
}

const STYLES: [Style; 2] = [Style::StepByStep, Style::FormTool];

impl Style {
    fn title(self) -> &'static str {
        match self {
            Style::StepByStep => "One call a field (the task as scripted)",
            Style::FormTool => "With each server's form-filling tool",
        }
    }

    /// The style in a few words, for a heading.
    fn short(self) -> &'static str {
        match self {
            Style::StepByStep => "one call a field",
            Style::FormTool => "form-filling tools",
        }
    }

    fn slug(self) -> &'static str {
        match self {
            Style::StepByStep => "step-by-step",
            Style::FormTool => "form-tool",
        }
    }
}

/// A control the agent looks for in a read, by role and name as the read shows it. An
/// empty role is a role-less clickable, found by the words it shows.
#[derive(Clone, Copy)]
struct Control {
    role: &'static str,
    name: &'static str,
}

const USERNAME: Control = Control {
    role: "textbox",
    name: "Username",
};
const PASSWORD: Control = Control {
    role: "textbox",
    name: "Password",
};
const SIGN_IN: Control = Control {
    role: "button",
    name: "Sign in",
};
const ROLE: Control = Control {
    role: "combobox",
    name: "Role",
};
const AGE: Control = Control {
    role: "slider",
    name: "Minimum age",
};
const REFRESH: Control = Control {
    role: "",
    name: "Refresh",
};
const CAROL: Control = Control {
    role: "checkbox",
    name: "Select Carol",
};
const FRANK: Control = Control {
    role: "checkbox",
    name: "Select Frank",
};
const DELETE: Control = Control {
    role: "button",
    name: "Delete selected",
};

/// What the last read must show: the app's own account of each step. The app keeps its
/// filters from the input/change events it hears, so the refresh line proves the select
/// and the slider were set as a user sets them; reaching the dashboard at all proves the
/// user name and password (the server checks them).
const DELETED: &str = "Deleted 2 rows";
const REFRESHED: &str = "Refreshed: 2 users match role Editor, age 30 or over.";
const GONE: [&str; 2] = ["Carol", "Frank"];

/// A form field's new value, by the kind of control it is.
enum Setting {
    Text(&'static str),
    Option(&'static str),
    Slider(&'static str),
    Checked,
}

/// One call the agent made, and what its reply cost it.
#[derive(Clone)]
struct Made {
    tool: String,
    chars: usize,
    /// Base64 characters of image content (not text the model reads; noted, not counted).
    image_chars: usize,
}

/// One run of the task: every call, in order.
#[derive(Clone, Default)]
struct Run {
    calls: Vec<Made>,
}

impl Run {
    fn chars(&self) -> usize {
        self.calls.iter().map(|c| c.chars).sum()
    }

    fn image_chars(&self) -> usize {
        self.calls.iter().map(|c| c.image_chars).sum()
    }
}

/// A style's two runs, cold and warm, or why the task was not completed.
type Runs = Result<(Run, Run), String>;

/// One server's results.
struct Outcome {
    label: String,
    /// Why it was not measured at all.
    not_run: Option<String>,
    /// What the agent reads once to know its tools, and its characters: tools/list (the
    /// number of tools; the tools array as JSON), or for the command line `tabwire skill`.
    tools: (String, usize),
    /// Per style: the cold and warm runs, or why the task was not completed.
    runs: Vec<(Style, Runs)>,
    /// Things the agent had to do differently on this server, worth a line in the report.
    notes: Vec<String>,
}

pub async fn run(env: &Env, site: &str, peers: Result<(), String>) -> anyhow::Result<()> {
    let root = crate::workspace();
    let mut outcomes = Vec::new();
    // BENCH_TASK_SERVERS=word measures only the servers whose label has it (a look, not
    // a report: the report is written all the same).
    let only = std::env::var("BENCH_TASK_SERVERS").unwrap_or_default();
    for row in ROWS {
        let label = row.label();
        if !label.contains(only.as_str()) {
            continue;
        }
        let is_peer = matches!(row.config.kind, Kind::Playwright | Kind::DevTools);
        if let (true, Err(reason)) = (is_peer, &peers) {
            eprintln!("{label}: not run: {reason}");
            outcomes.push(Outcome::not_run(label, reason.clone()));
            continue;
        }
        eprintln!("{label} …");
        outcomes.push(measure(env, row, site).await);
    }
    let report = report(&outcomes, env);
    let path = root.join("docs/task-benchmark.md");
    std::fs::write(&path, &report).with_context(|| path.display().to_string())?;
    print!("{report}");
    eprintln!("wrote {}", path.display());
    if outcomes.iter().any(|o| o.not_run.is_none() && o.failed()) {
        bail!("a server did not complete the task (see the report)");
    }
    Ok(())
}

impl Outcome {
    fn new(label: String) -> Outcome {
        Outcome {
            label,
            not_run: None,
            tools: (String::new(), 0),
            runs: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn not_run(label: String, reason: String) -> Outcome {
        Outcome {
            not_run: Some(reason),
            ..Outcome::new(label)
        }
    }

    /// The warm run of a style, if the task was completed.
    fn warm(&self, style: Style) -> Option<&Run> {
        self.runs
            .iter()
            .find(|(s, _)| *s == style)
            .and_then(|(_, r)| r.as_ref().ok())
            .map(|(_, warm)| warm)
    }

    fn failed(&self) -> bool {
        self.runs.iter().any(|(_, r)| r.is_err())
    }
}

/// For each style: starts the server afresh (so both styles' runs are a session's first
/// and second: the servers number their handles by session), reads its tool list (the
/// command line: its skill), does the task twice (the first run warms the browser and the
/// server; the second is the one reported) and stops it.
async fn measure(env: &Env, row: Row, site: &str) -> Outcome {
    let label = row.label();
    let mut outcome = Outcome::new(label.clone());
    for style in STYLES {
        let result = match row.access {
            Access::Mcp | Access::McpCore => over_mcp(env, row, site, style, &mut outcome).await,
            Access::Cli => over_cli(env, row, site, style, &mut outcome).await,
        };
        if let Some(reason) = &outcome.not_run {
            eprintln!("  {label}: not run: {reason}");
            return Outcome::not_run(label, reason.clone());
        }
        if let Err(reason) = &result {
            eprintln!("  {label}, {}: NOT COMPLETED: {reason}", style.title());
        }
        outcome.runs.push((style, result));
    }
    outcome
}

/// One style over a fresh MCP session: tools/list, the task twice, and a check that every
/// tool called was listed (what `--tools core` must keep).
async fn over_mcp(env: &Env, row: Row, site: &str, style: Style, outcome: &mut Outcome) -> Runs {
    let (client, mut child) = match lean::start_with(env, row.config, row.extra_flags()).await {
        Ok(started) => started,
        Err(error) => {
            let reason = format!("did not start: {error:#}");
            outcome.not_run = Some(reason.clone());
            return Err(reason);
        }
    };
    let peer = client.peer().clone();
    let result = match crate::servers::tools_list(&peer).await {
        Ok((count, json)) => {
            outcome.tools = (count.to_string(), json.chars().count());
            let result = attempt(Via::Mcp(&peer), row, site, style, outcome).await;
            result.and_then(|runs| all_listed(&runs, &json).map(|()| runs))
        }
        Err(error) => Err(format!("tools/list failed: {error:#}")),
    };
    let _ = client.cancel().await;
    crate::procs::end_tree(&mut child).await;
    result
}

/// Every tool the runs called is named in tools/list (a tool left out of a profile is
/// not callable either, so a call of one would have failed already; this says so plainly).
fn all_listed((cold, warm): &(Run, Run), tools_json: &str) -> Result<(), String> {
    let listed: Vec<String> = serde_json::from_str::<Value>(tools_json)
        .ok()
        .and_then(|tools| tools.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    match cold
        .calls
        .iter()
        .chain(&warm.calls)
        .find(|c| !listed.contains(&c.tool))
    {
        Some(call) => Err(format!(
            "it called {}, which tools/list does not list",
            call.tool
        )),
        None => Ok(()),
    }
}

/// One style on the command line: a fresh scratch profile (so its refs start afresh as a
/// new MCP session's do), `tabwire skill` read once, the task twice, the browser stopped.
async fn over_cli(env: &Env, row: Row, site: &str, style: Style, outcome: &mut Outcome) -> Runs {
    let dir = env.scratch.join(format!("cli-{}", style.slug()));
    let shell = match Shell::new(&env.tabwire, &dir) {
        Ok(shell) => shell,
        Err(error) => {
            let reason = format!("no scratch profile: {error:#}");
            outcome.not_run = Some(reason.clone());
            return Err(reason);
        }
    };
    let result = match shell.skill().await {
        Ok(skill) => {
            outcome.tools = ("skill".into(), skill.chars().count());
            attempt(Via::Cli(&shell), row, site, style, outcome).await
        }
        Err(error) => Err(format!("{error:#}")),
    };
    // Stopped whatever happened: the broker would keep the browser up for 10 minutes.
    let stopped = shell.stop().await.map_err(|e| format!("{e:#}"));
    result.and_then(|runs| stopped.map(|()| runs))
}

/// The task twice by one agent; a server that never answered a call did not get going
/// (its browser did not start, say): that is "not run", not a task it failed.
async fn attempt(via: Via<'_>, row: Row, site: &str, style: Style, outcome: &mut Outcome) -> Runs {
    let mut agent = Agent {
        via,
        config: row.config,
        form_tool: row.has_form_tool(),
        tab: None,
        run: Run::default(),
        answered: false,
        notes: std::mem::take(&mut outcome.notes),
    };
    let result = twice(&mut agent, site, style).await;
    outcome.notes = agent.notes;
    if let (false, Err(reason)) = (agent.answered, &result) {
        outcome.not_run = Some(reason.clone());
    }
    result
}

/// The task twice on one server: (cold, warm).
async fn twice(agent: &mut Agent<'_>, site: &str, style: Style) -> Runs {
    let mut runs = Vec::new();
    for which in ["cold", "warm"] {
        agent.run = Run::default();
        let started = std::time::Instant::now();
        perform(agent, site, style)
            .await
            .map_err(|e| format!("{which} run: {e:#}"))?;
        let run = std::mem::take(&mut agent.run);
        eprintln!(
            "  {}, {which}: {} calls, {} characters read, {:.1} s",
            style.title(),
            run.calls.len(),
            run.chars(),
            started.elapsed().as_secs_f64()
        );
        runs.push(run);
    }
    let warm = runs.pop().unwrap_or_default();
    let cold = runs.pop().unwrap_or_default();
    Ok((cold, warm))
}

/// The task, as an agent does it: read, find the handle, act; and the last read must show
/// the app's account of every step.
async fn perform(agent: &mut Agent<'_>, site: &str, style: Style) -> anyhow::Result<()> {
    agent.open(&format!("{site}/task/login.html")).await?;
    let login = agent.read(&[USERNAME, PASSWORD, SIGN_IN]).await?;
    let (user, password, sign_in) = (
        agent.find(&login, USERNAME)?,
        agent.find(&login, PASSWORD)?,
        agent.find(&login, SIGN_IN)?,
    );
    agent
        .fill(
            &[
                (user, USERNAME, Setting::Text(TASK_USER)),
                (password, PASSWORD, Setting::Text(TASK_PASSWORD)),
            ],
            style,
        )
        .await?;
    agent.click(&sign_in, SIGN_IN).await?;

    let wanted = [ROLE, AGE, REFRESH, CAROL, FRANK, DELETE];
    let dashboard = agent.read(&wanted).await?;
    let role = agent.find(&dashboard, ROLE)?;
    let age = agent.find(&dashboard, AGE)?;
    let refresh = agent.find(&dashboard, REFRESH)?;
    let carol = agent.find(&dashboard, CAROL)?;
    let frank = agent.find(&dashboard, FRANK)?;
    let delete = agent.find(&dashboard, DELETE)?;
    agent
        .fill(
            &[
                (role, ROLE, Setting::Option("Editor")),
                (age, AGE, Setting::Slider("30")),
            ],
            style,
        )
        .await?;
    agent.click(&refresh, REFRESH).await?;
    agent
        .fill(
            &[
                (carol, CAROL, Setting::Checked),
                (frank, FRANK, Setting::Checked),
            ],
            style,
        )
        .await?;
    agent.click(&delete, DELETE).await?;

    let last = agent.read_until_text(DELETED).await?.join("\n");
    let mut missing = Vec::new();
    for shown in [DELETED, REFRESHED] {
        if !last.contains(shown) {
            missing.push(format!("no {shown:?}"));
        }
    }
    for name in GONE {
        if last.contains(name) {
            missing.push(format!("{name} is still listed"));
        }
    }
    if !missing.is_empty() {
        bail!(
            "the last read shows the task undone ({}): {}",
            missing.join(", "),
            clip(&last, 1500)
        );
    }
    Ok(())
}

/// How the agent's calls reach the server.
#[derive(Clone, Copy)]
enum Via<'a> {
    Mcp(&'a Peer<RoleClient>),
    Cli(&'a Shell),
}

/// One agent on one server: its calls so far, and the chrome face's tab.
struct Agent<'a> {
    via: Via<'a>,
    /// The replies it reads (so how it finds handles) and the tools it calls.
    config: Config,
    /// Whether it has a tool that fills several fields in one call.
    form_tool: bool,
    tab: Option<u64>,
    run: Run,
    /// Whether any call of this session has succeeded.
    answered: bool,
    notes: Vec<String>,
}

impl Agent<'_> {
    /// A counted call; an error reply fails the task.
    async fn call(&mut self, tool: &str, args: Value) -> anyhow::Result<Reply> {
        let reply = match self.via {
            Via::Mcp(peer) => call_ok(peer, tool, args).await,
            Via::Cli(shell) => shell.call(tool, &args).await,
        }
        .with_context(|| format!("{} failed", self.config.label()))?;
        self.count(tool, &reply);
        Ok(reply)
    }

    fn count(&mut self, tool: &str, reply: &Reply) {
        // BENCH_TASK_REPLIES=1 shows every reply, as the agent reads it.
        if std::env::var_os("BENCH_TASK_REPLIES").is_some() {
            eprintln!("    {tool} ({} characters):\n{}", reply.chars(), reply.text);
        }
        self.answered = true;
        self.run.calls.push(Made {
            tool: tool.to_owned(),
            chars: reply.chars(),
            image_chars: reply.image_chars,
        });
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    async fn open(&mut self, url: &str) -> anyhow::Result<()> {
        let Via::Mcp(peer) = self.via else {
            // The command line's face is btap's: open_url, counted as any call.
            return self.call("open_url", json!({ "url": url })).await.map(drop);
        };
        let reply = lean::navigate(peer, self.config, url, &mut self.tab).await?;
        let tool = match self.config.kind {
            Kind::Tabwire => "open_url",
            Kind::Playwright => "browser_navigate",
            Kind::DevTools => "navigate_page",
            Kind::TabwireChrome => "chrome_navigate",
        };
        self.count(tool, &reply);
        Ok(())
    }

    /// Reads the page with the server's snapshot tool, as an agent asks for it (default
    /// arguments), and reads on only while a control it needs is not there yet.
    async fn read(&mut self, needed: &[Control]) -> anyhow::Result<Vec<String>> {
        let config = self.config;
        self.read_while(|pages| needed.iter().any(|c| find(config, pages, *c).is_none()))
            .await
    }

    /// Reads the page, on until `text` is shown (or the server has no more to give).
    async fn read_until_text(&mut self, text: &str) -> anyhow::Result<Vec<String>> {
        self.read_while(|pages| !pages.iter().any(|p| p.contains(text)))
            .await
    }

    /// One read, and more while `wanting` says something is missing and the server says
    /// how to read on: tabwire's cursor, or the chrome face's whole-page read (its default
    /// is the viewport).
    async fn read_while(
        &mut self,
        wanting: impl Fn(&[String]) -> bool,
    ) -> anyhow::Result<Vec<String>> {
        let (tool, mut args) = match self.config.kind {
            Kind::Tabwire => ("scan_page", json!({})),
            Kind::Playwright => ("browser_snapshot", json!({})),
            Kind::DevTools => ("take_snapshot", json!({})),
            Kind::TabwireChrome => ("chrome_read_page", json!({})),
        };
        let mut pages = Vec::new();
        loop {
            let reply = self.call(tool, args.clone()).await?;
            pages.push(reply.text.clone());
            if !wanting(&pages) || pages.len() >= 20 {
                return Ok(pages);
            }
            match self.read_on(&reply.text, &args) {
                Some(next) => {
                    self.note(format!(
                        "a read did not show every control the task needs; read on with {tool} {next}"
                    ));
                    args = next;
                }
                None => return Ok(pages),
            }
        }
    }

    /// The arguments that read on from this reply, if the server has more to give.
    fn read_on(&self, text: &str, args: &Value) -> Option<Value> {
        match self.config.kind {
            Kind::Tabwire => lean::cursor_of(self.config, text).map(|c| json!({ "cursor": c })),
            Kind::TabwireChrome => match lean::cursor_of(self.config, text) {
                Some(cursor) => {
                    let mut next = args.clone();
                    next["cursor"] = json!(cursor);
                    Some(next)
                }
                None if args.get("viewportOnly").is_none() => {
                    Some(json!({ "viewportOnly": false }))
                }
                None => None,
            },
            Kind::Playwright | Kind::DevTools => None,
        }
    }

    /// The handle of a control in the pages of a read.
    fn find(&mut self, pages: &[String], control: Control) -> anyhow::Result<Value> {
        let found = find(self.config, pages, control).with_context(|| {
            format!(
                "{}: no {} {:?} in its read: {}",
                self.config.label(),
                if control.role.is_empty() {
                    "clickable"
                } else {
                    control.role
                },
                control.name,
                clip(&pages.join("\n"), 1500)
            )
        })?;
        if self.config.kind == Kind::Playwright
            && found.as_str().is_some_and(|h| h.starts_with("text="))
        {
            self.note(format!(
                "its snapshot gives the role-less {:?} no ref (it is plain text there), so the agent clicks it by a text selector, {found}",
                control.name
            ));
        }
        let unnamed = self.config
            == (Config {
                kind: Kind::Tabwire,
                lean: false,
            })
            && control.role.is_empty()
            && pages
                .iter()
                .find_map(|page| btap_clickable(page, control.name))
                .is_some_and(|(_, named)| !named);
        if unnamed {
            self.note(format!(
                "the target it lists for the role-less {:?} has an empty name (the words are only in the content's text), so the agent matches it by its locator, {found}",
                control.name
            ));
        }
        Ok(found)
    }

    /// What to pass as the element: a btap lean ref goes inside a locator object.
    fn target(&self, handle: &Value) -> Value {
        match (self.config.kind, self.config.lean) {
            (Kind::Tabwire, true) => json!({ "ref": handle }),
            _ => handle.clone(),
        }
    }

    async fn click(&mut self, handle: &Value, control: Control) -> anyhow::Result<Reply> {
        let target = self.target(handle);
        match self.config.kind {
            Kind::Tabwire => self.call("page_click", json!({ "selector": target })).await,
            Kind::TabwireChrome => {
                self.call("chrome_click_element", json!({ "ref": target }))
                    .await
            }
            Kind::Playwright => {
                self.call(
                    "browser_click",
                    json!({ "target": target, "element": control.name }),
                )
                .await
            }
            Kind::DevTools => self.call("click", json!({ "uid": target })).await,
        }
    }

    /// Sets the fields of one step: one call a field, or the server's form tool.
    async fn fill(
        &mut self,
        fields: &[(Value, Control, Setting)],
        style: Style,
    ) -> anyhow::Result<()> {
        if style == Style::FormTool && self.form_tool {
            return self.fill_form(fields).await;
        }
        for (handle, control, value) in fields {
            self.fill_one(handle, *control, value).await?;
        }
        Ok(())
    }

    /// One field with the server's most direct single-field tool.
    async fn fill_one(
        &mut self,
        handle: &Value,
        control: Control,
        value: &Setting,
    ) -> anyhow::Result<()> {
        let target = self.target(handle);
        let element = control.name;
        let (tool, args) = match (self.config.kind, value) {
            // A checkbox is ticked by clicking it, on every server.
            (_, Setting::Checked) => return self.click(handle, control).await.map(drop),
            (Kind::Tabwire, Setting::Text(text) | Setting::Slider(text)) => {
                // tabwire's page_type sets a slider with arrow keys, as a person does.
                ("page_type", json!({ "selector": target, "text": text }))
            }
            (Kind::Tabwire, Setting::Option(option)) => (
                "page_select",
                json!({ "selector": target, "options": [option] }),
            ),
            (Kind::TabwireChrome, Setting::Text(v) | Setting::Option(v) | Setting::Slider(v)) => (
                "chrome_fill_or_select",
                json!({ "ref": target, "value": v }),
            ),
            (Kind::Playwright, Setting::Text(text)) => (
                "browser_type",
                json!({ "target": target, "element": element, "text": text }),
            ),
            (Kind::Playwright, Setting::Option(option)) => (
                "browser_select_option",
                json!({ "target": target, "element": element, "values": [option] }),
            ),
            // Playwright MCP's one tool that sets a slider: its form tool, one field.
            (Kind::Playwright, Setting::Slider(v)) => (
                "browser_fill_form",
                json!({ "fields": [{ "target": target, "name": element, "type": "slider", "value": v }] }),
            ),
            (Kind::DevTools, Setting::Text(v) | Setting::Option(v) | Setting::Slider(v)) => {
                ("fill", json!({ "uid": target, "value": v }))
            }
        };
        self.call(tool, args).await.map(drop)
    }

    /// The fields of one step in one call of the server's form tool.
    async fn fill_form(&mut self, fields: &[(Value, Control, Setting)]) -> anyhow::Result<()> {
        let value_text = |value: &Setting| match value {
            Setting::Text(v) | Setting::Option(v) | Setting::Slider(v) => (*v).to_owned(),
            Setting::Checked => "true".to_owned(),
        };
        let (tool, args) = match self.config.kind {
            Kind::Playwright => {
                let fields: Vec<Value> = fields
                    .iter()
                    .map(|(handle, control, value)| {
                        let kind = match value {
                            Setting::Text(_) => "textbox",
                            Setting::Option(_) => "combobox",
                            Setting::Slider(_) => "slider",
                            Setting::Checked => "checkbox",
                        };
                        json!({ "target": handle, "name": control.name, "type": kind, "value": value_text(value) })
                    })
                    .collect();
                ("browser_fill_form", json!({ "fields": fields }))
            }
            Kind::DevTools => {
                let elements: Vec<Value> = fields
                    .iter()
                    .map(|(handle, _, value)| json!({ "uid": handle, "value": value_text(value) }))
                    .collect();
                ("fill_form", json!({ "elements": elements }))
            }
            Kind::TabwireChrome => {
                let elements: Vec<Value> = fields
                    .iter()
                    .map(|(handle, _, value)| {
                        let value = match value {
                            Setting::Checked => json!(true),
                            other => json!(value_text(other)),
                        };
                        json!({ "ref": handle, "value": value })
                    })
                    .collect();
                (
                    "chrome_computer",
                    json!({ "action": "fill_form", "elements": elements }),
                )
            }
            Kind::Tabwire => {
                let fields: Vec<Value> = fields
                    .iter()
                    .map(|(handle, _, value)| {
                        let value = match value {
                            Setting::Checked => json!(true),
                            other => json!(value_text(other)),
                        };
                        json!({ "selector": self.target(handle), "value": value })
                    })
                    .collect();
                ("page_fill", json!({ "fields": fields }))
            }
        };
        self.call(tool, args).await.map(drop)
    }
}

/// The handle of `control` in a read's pages, as the server takes it back.
fn find(config: Config, pages: &[String], control: Control) -> Option<Value> {
    pages.iter().find_map(|page| {
        if control.role.is_empty() {
            clickable(config, page, control.name)
        } else {
            lean::handle(config, page, control.role, Some(control.name))
        }
    })
}

/// A role-less clickable, by the words it shows: the first line (or btap target) that
/// shows them with a handle. Playwright MCP's snapshot writes such an element as plain
/// text without a ref; its tools take a selector instead, and `text=` is the one an agent
/// can write from what it read.
fn clickable(config: Config, page: &str, words: &str) -> Option<Value> {
    if config.kind == Kind::Tabwire && !config.lean {
        return btap_clickable(page, words).map(|(locator, _)| locator);
    }
    let outline = if config.kind == Kind::TabwireChrome && !config.lean {
        serde_json::from_str::<Value>(page).ok()?["pageContent"]
            .as_str()?
            .to_owned()
    } else {
        page.to_owned()
    };
    let mut shown = false;
    for line in outline.lines().filter(|l| l.contains(words)) {
        shown = true;
        if let Some(at) = line.find("uid=") {
            return line[at + 4..].split(' ').next().map(|uid| json!(uid));
        }
        if let Some(at) = line.find("[ref=") {
            return line[at + 5..].split(']').next().map(|r| json!(r));
        }
        // A lean outline ends a line with its ref: `clickable span "⟳ Refresh" e7`.
        let last = line.rsplit(' ').next().unwrap_or_default();
        if last.len() > 1 && last.starts_with('e') && last[1..].chars().all(|c| c.is_ascii_digit())
        {
            return Some(json!(last));
        }
    }
    (shown && config.kind == Kind::Playwright).then(|| json!(format!("text={words}")))
}

/// A role-less clickable in a btap envelope (tabwire lists them in `more_targets`): its
/// locator, and whether the target is named with the words (else the words are found in
/// the locator's CSS, an id an agent can read them from).
fn btap_clickable(page: &str, words: &str) -> Option<(Value, bool)> {
    let envelope: Value = serde_json::from_str(page).ok()?;
    let observation = &envelope["data"]["observation"];
    let targets: Vec<&Value> = ["targets", "more_targets"]
        .iter()
        .filter_map(|list| observation[*list].as_array())
        .flatten()
        .collect();
    let named = targets
        .iter()
        .find(|t| t["name"].as_str().is_some_and(|n| n.contains(words)));
    if let Some(target) = named {
        return Some((target["locator"].clone(), true));
    }
    let lower = words.to_lowercase();
    targets
        .iter()
        .find(|t| {
            t["locator"]["css"]
                .as_str()
                .is_some_and(|css| css.to_lowercase().contains(&lower))
        })
        .map(|t| (t["locator"].clone(), false))
}

fn report(outcomes: &[Outcome], env: &Env) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# One task, nine ways in: what an agent spends\n\n\
         Written by `cargo run -p bench --release -- task` on {}: Playwright MCP {}, Chrome \
         DevTools MCP {} and tabwire (both faces, both reply modes, lean with `--tools core`, \
         and its command line), all on Debian's Chromium, headless; every MCP server through \
         the same rmcp client. tabwire: {}, built from commit {}; {}.\n",
        lean::today(),
        crate::install::PLAYWRIGHT_MCP,
        crate::install::DEVTOOLS_MCP,
        crate::output(&env.tabwire.display().to_string(), &["--version"]),
        crate::built_from(&crate::workspace()),
        crate::output(crate::servers::CHROMIUM, &["--version"]),
    );
    let _ = writeln!(
        out,
        "## The task\n\n\
         A small admin app written for this bench (`benches/pages/task/`, served on loopback \
         by the bench): a login page that posts to the bench's server and is redirected to a \
         dashboard (a real navigation); the dashboard has a native `<select>` \"Role\" (four \
         options), a \"Minimum age\" `input type=range` whose input/change handlers update a \
         label, a group of column checkboxes, a role-less \"⟳ Refresh\" `<span>` with a click \
         listener and a pointer cursor, a table of ten users with a checkbox a row, a \
         \"Delete selected\" button and a status line.\n\n\
         Every server does, with its own tools and the handles its own read gives (Playwright \
         MCP refs, Chrome DevTools MCP uids, tabwire refs or locators):\n\n\
         1. open the login page; 2. read it; 3. type the user name; 4. type the password; \
         5. click \"Sign in\"; 6. read the dashboard; 7. choose \"Editor\" in \"Role\"; 8. set \
         \"Minimum age\" to 30; 9. click \"Refresh\"; 10–11. tick Carol's and Frank's rows; \
         12. click \"Delete selected\"; 13. read the page.\n\n\
         A read is one call of the server's snapshot tool with its default arguments \
         (`browser_snapshot`, `take_snapshot`, `scan_page`, `chrome_read_page`); it would read \
         on (tabwire's cursor, the chrome face's whole page) only if a control the task needs \
         were not in it (the Notes say when one did).\n\n\
         **Verified:** the last read must show \"{DELETED}\" and \"{REFRESHED}\", and no longer \
         name Carol or Frank. The app keeps its filters from the input/change events it \
         hears, so that line shows the select and the slider were set as a user sets them and \
         that Refresh was clicked; the dashboard is reached only with the right user name and \
         password (the bench's server checks them). A server that fails a call or does not \
         show all of it is reported as not having completed the task, with no figures.\n\n\
         **Counted:** tool calls; the characters of every text content of every reply, \
         navigation replies included (images are noted under Notes, not counted); and the characters of `tools/list` (the tools array as JSON), \
         which an agent reads once a session. The task runs twice on each server; the \
         figures are the second (warm) run's, and the bench checks the two runs agree.\n"
    );
    ways_in(&mut out);
    let _ = writeln!(
        out,
        "## How to run\n\n```\ncargo build --release && cargo build --release -p bench\n./target/release/bench task\n```\n\n\
         It needs `/usr/bin/chromium` and, for the peers, Node.js and npm (the peers are \
         installed into `bench-peers/` on first use). The figures are calls and characters, \
         so they do not depend on the machine.\n"
    );
    for style in STYLES {
        let _ = writeln!(out, "## {}\n", style.title());
        if style == Style::FormTool {
            let _ = writeln!(
                out,
                "The same task, with the fields of a step in one call where the server has a \
                 form tool: the user name and password; the role and the slider; the two \
                 rows' checkboxes (Playwright MCP's `browser_fill_form`, Chrome DevTools MCP's \
                 `fill_form` — whose description says to ALWAYS prefer it over several \
                 `fill` or `click` calls —, tabwire's `page_fill` in the btap face and on its \
                 command line, and the chrome face's `chrome_computer` `fill_form`). Neither \
                 face's form tool is a core tool, so the `--tools core` rows make the same \
                 calls as above.\n"
            );
        } else {
            let _ = writeln!(
                out,
                "Each field with the server's most direct single-field tool: Playwright MCP \
                 `browser_type`, `browser_select_option`, `browser_fill_form` with one slider \
                 field (its only tool that sets a slider), `browser_click`; Chrome DevTools MCP \
                 `fill`, `click`; tabwire btap `page_type` (a slider too: it sets it with arrow \
                 keys), `page_select`, `page_click`; the chrome face `chrome_fill_or_select`, \
                 `chrome_click_element`. A checkbox is ticked with a click everywhere.\n"
            );
        }
        table(&mut out, outcomes, style);
    }
    for style in STYLES {
        calls_list(&mut out, outcomes, style);
    }
    let mut notes = Vec::new();
    for outcome in outcomes {
        for note in &outcome.notes {
            notes.push(format!("{}: {note}", outcome.label));
        }
        if let Some(reason) = &outcome.not_run {
            notes.push(format!("{}: not run: {reason}", outcome.label));
        }
        for (style, result) in &outcome.runs {
            match result {
                Err(reason) => notes.push(format!(
                    "{}, {}: did not complete the task: {reason}",
                    outcome.label,
                    style.title().to_lowercase()
                )),
                Ok((cold, warm)) => {
                    if !agree(cold, warm) {
                        notes.push(format!(
                            "{}, {}: the cold and warm runs differ: {} and {} calls, {} and {} characters",
                            outcome.label,
                            style.title().to_lowercase(),
                            cold.calls.len(),
                            warm.calls.len(),
                            cold.chars(),
                            warm.chars()
                        ));
                    }
                    if warm.image_chars() > 0 {
                        notes.push(format!(
                            "{}: replies carried {} base64 characters of images (not counted)",
                            outcome.label,
                            warm.image_chars()
                        ));
                    }
                }
            }
        }
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "\n## Notes\n");
        for note in notes {
            // A failure quotes the server's read: its lines go in a block under the note.
            match note.split_once('\n') {
                Some((first, rest)) => {
                    let _ = writeln!(out, "- {first}\n\n  ```");
                    for line in rest.lines() {
                        let _ = writeln!(out, "  {line}");
                    }
                    let _ = writeln!(out, "  ```");
                }
                None => {
                    let _ = writeln!(out, "- {note}");
                }
            }
        }
    }
    command_lines(&mut out, env);
    out
}

/// Each row's calls in a style's warm run, with the characters of each reply.
fn calls_list(out: &mut String, outcomes: &[Outcome], style: Style) {
    // A blank line between this and what came before, whichever section that was.
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "## Each server's calls (warm run, {})\n\nThe characters of each reply in brackets.\n",
        style.short()
    );
    for outcome in outcomes {
        let Some(warm) = outcome.warm(style) else {
            continue;
        };
        let calls: Vec<String> = warm
            .calls
            .iter()
            .map(|c| format!("{} ({})", c.tool, c.chars))
            .collect();
        let _ = writeln!(out, "- **{}**: {}", outcome.label, calls.join(", "));
    }
}

/// What the `--tools core` rows and the command-line row are, and how they are counted.
fn ways_in(out: &mut String) {
    let _ = writeln!(
        out,
        "## tabwire's other ways in\n\n\
         **`--tools core`** (the rows so named): the same server and the same calls, with \
         only each face's everyday tools served (btap: open_url, scan_page, page_click, \
         page_type, page_press, page_select, wait_for, capture_page_screenshot, list_tabs, \
         switch_tab, execute_js; chrome: chrome_navigate, chrome_read_page, \
         chrome_click_element, chrome_fill_or_select, chrome_keyboard, chrome_screenshot, \
         get_windows_and_tabs, chrome_switch_tab, chrome_javascript); the bench checks that \
         every tool a run called is in the tools/list it read. Neither face's form tool \
         (`page_fill`, `chrome_computer`) is a core tool, so with the form-filling style \
         the core rows fill one field a call.\n\n\
         **tabwire CLI (btap)**: the task done as a coding agent with a shell does it: one \
         `tabwire call TOOL 'JSON'` process a step (the Command lines below), refs read \
         from the outline `tabwire call scan_page` prints, every process of a style's two \
         runs on one scratch profile (`cli-step-by-step`, `cli-form-tool`) whose broker \
         keeps the browser up between them. Calls are the \
         processes run for the task; characters read are all each one printed, stdout and \
         stderr (the btap lean row's replies, each ended by a newline); the tools/list column is the characters of `tabwire skill`'s output, the \
         document the agent reads once instead. The browser is stopped (`tabwire browser \
         stop`, not counted) after the two runs of a style.\n"
    );
}

/// Each row's command line, the scratch dir and the checkout written as names.
fn command_lines(out: &mut String, env: &Env) {
    let _ = writeln!(out, "\n## Command lines\n");
    let anonymous = |line: String| {
        line.replace(&env.scratch.display().to_string(), "$SCRATCH")
            .replace(&format!("{}/", crate::workspace().display()), "")
    };
    for row in ROWS {
        let line = match row.access {
            Access::Cli => Shell::at(&env.tabwire, &env.scratch.join("cli-STYLE")).command_line(),
            Access::Mcp | Access::McpCore => {
                let mut line = env.command_line(row.config.kind, false);
                if row.config.lean {
                    line.extend(["--replies".to_owned(), "lean".to_owned()]);
                }
                line.extend(row.extra_flags().iter().map(|flag| (*flag).to_owned()));
                line.join(" ")
            }
        };
        let _ = writeln!(out, "- {}: `{}`", row.label(), anonymous(line));
    }
}

/// Whether a server's two runs agree: the same calls, characters within 3%.
fn agree(cold: &Run, warm: &Run) -> bool {
    let (a, b) = (cold.chars() as f64, warm.chars() as f64);
    cold.calls.len() == warm.calls.len() && (a - b).abs() <= 0.03 * a.max(b)
}

/// One table: a row a server, the warm run's figures, ratios to Playwright MCP.
fn table(out: &mut String, outcomes: &[Outcome], style: Style) {
    let _ = writeln!(
        out,
        "| server | tool calls | characters read | tools/list (tools) or skill | read + tools/list | read vs Playwright MCP | total vs Playwright MCP |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let base = outcomes
        .iter()
        .find(|o| o.label == Kind::Playwright.label())
        .and_then(|o| {
            o.warm(style)
                .map(|run| (run.chars(), run.chars() + o.tools.1))
        });
    for outcome in outcomes {
        let label = &outcome.label;
        if let Some(reason) = &outcome.not_run {
            let _ = writeln!(
                out,
                "| {label} | not run: {} | | | | | |",
                clip(reason, 120).replace('|', "/")
            );
            continue;
        }
        let Some(run) = outcome.warm(style) else {
            let _ = writeln!(
                out,
                "| {label} | did not complete the task (see Notes) | | | | | |"
            );
            continue;
        };
        let (read, tools) = (run.chars(), outcome.tools.1);
        let ratio = |n: usize, of: usize| format!("{:.2}×", n as f64 / of.max(1) as f64);
        let (read_ratio, total_ratio) = match base {
            Some((base_read, base_total)) => {
                (ratio(read, base_read), ratio(read + tools, base_total))
            }
            None => ("—".into(), "—".into()),
        };
        let _ = writeln!(
            out,
            "| {label} | {} | {read} | {tools} ({}) | {} | {read_ratio} | {total_ratio} |",
            run.calls.len(),
            outcome.tools.0,
            read + tools,
        );
    }
    let _ = writeln!(out);
}
