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
//! Writes docs/task-benchmark.md.

use std::fmt::Write as _;

use anyhow::{Context, bail};
use rmcp::service::{Peer, RoleClient};
use serde_json::{Value, json};

use crate::lean::{self, Config};
use crate::mcp::{Reply, call_ok, clip};
use crate::pages::{TASK_PASSWORD, TASK_USER};
use crate::servers::{Env, Kind};

/// The servers, in the report's order.
const SERVERS: [Config; 6] = [
    Config {
        kind: Kind::Playwright,
        lean: false,
    },
    Config {
        kind: Kind::DevTools,
        lean: false,
    },
    Config {
        kind: Kind::Tabwire,
        lean: true,
    },
    Config {
        kind: Kind::Tabwire,
        lean: false,
    },
    Config {
        kind: Kind::TabwireChrome,
        lean: true,
    },
    Config {
        kind: Kind::TabwireChrome,
        lean: false,
    },
];

/// How the agent fills the form fields of a step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    /// One call a field, with each server's single-field tools (the task as scripted).
    StepByStep,
    /// The fields of a step in one call, with the server's form tool where it has one
    /// (Playwright MCP's browser_fill_form, Chrome DevTools MCP's fill_form, the chrome
    /// face's chrome_computer fill_form; tabwire's btap face has none).
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
    /// tools/list: (tools, characters of the tools array as JSON).
    tools: (usize, usize),
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
    for config in SERVERS {
        let label = config.label();
        if !label.contains(only.as_str()) {
            continue;
        }
        let is_peer = matches!(config.kind, Kind::Playwright | Kind::DevTools);
        if let (true, Err(reason)) = (is_peer, &peers) {
            eprintln!("{label}: not run: {reason}");
            outcomes.push(Outcome::not_run(label, reason.clone()));
            continue;
        }
        eprintln!("{label} …");
        outcomes.push(measure(env, config, site).await);
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
            tools: (0, 0),
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
/// and second: the servers number their handles by session), reads its tool list, does
/// the task twice (the first run warms the browser and the server; the second is the one
/// reported) and stops it.
async fn measure(env: &Env, config: Config, site: &str) -> Outcome {
    let label = config.label();
    let mut outcome = Outcome::new(label.clone());
    for style in STYLES {
        let (client, mut child) = match lean::start(env, config).await {
            Ok(started) => started,
            Err(error) => {
                eprintln!("{label}: not run: {error:#}");
                return Outcome::not_run(label, format!("did not start: {error:#}"));
            }
        };
        let peer = client.peer().clone();
        let result = match crate::servers::tools_list(&peer).await {
            Ok((count, json)) => {
                outcome.tools = (count, json.chars().count());
                let mut agent = Agent {
                    peer: &peer,
                    config,
                    tab: None,
                    run: Run::default(),
                    answered: false,
                    notes: std::mem::take(&mut outcome.notes),
                };
                let result = twice(&mut agent, site, style).await;
                outcome.notes = agent.notes;
                // A server that never answered a call did not get going (its browser did
                // not start, say): that is "not run", not a task it failed.
                if let (false, Err(reason)) = (agent.answered, &result) {
                    outcome.not_run = Some(reason.clone());
                }
                result
            }
            Err(error) => Err(format!("tools/list failed: {error:#}")),
        };
        let _ = client.cancel().await;
        crate::procs::end_tree(&mut child).await;
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

/// One agent on one server: its calls so far, and the chrome face's tab.
struct Agent<'a> {
    peer: &'a Peer<RoleClient>,
    config: Config,
    tab: Option<u64>,
    run: Run,
    /// Whether any call of this session has succeeded.
    answered: bool,
    notes: Vec<String>,
}

impl Agent<'_> {
    /// A counted call; an error reply fails the task.
    async fn call(&mut self, tool: &str, args: Value) -> anyhow::Result<Reply> {
        let reply = call_ok(self.peer, tool, args)
            .await
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
        let reply = lean::navigate(self.peer, self.config, url, &mut self.tab).await?;
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
        let has_form_tool = self.config.kind != Kind::Tabwire;
        if style == Style::FormTool && has_form_tool {
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
            Kind::Tabwire => bail!("the btap face has no form tool"),
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
        "# One task, six servers: what an agent spends\n\n\
         Written by `cargo run -p bench --release -- task` on {}: Playwright MCP {}, Chrome \
         DevTools MCP {} and tabwire (both faces, both reply modes), all on Debian's \
         Chromium, headless, through the same rmcp client. tabwire: {}, built from commit {}; \
         {}.\n",
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
                 `fill` or `click` calls — and the chrome face's `chrome_computer` \
                 `fill_form`). tabwire's btap face has no form tool, so it makes the same \
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
    let _ = writeln!(
        out,
        "## Each server's calls (warm run, one call a field)\n\nThe characters of each reply in brackets.\n"
    );
    for outcome in outcomes {
        let Some((_, Ok((_, warm)))) = outcome
            .runs
            .iter()
            .find(|(style, _)| *style == Style::StepByStep)
        else {
            continue;
        };
        let calls: Vec<String> = warm
            .calls
            .iter()
            .map(|c| format!("{} ({})", c.tool, c.chars))
            .collect();
        let _ = writeln!(out, "- **{}**: {}", outcome.label, calls.join(", "));
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
    let _ = writeln!(out, "\n## Command lines\n");
    for config in SERVERS {
        let mut line = env.command_line(config.kind, false);
        if config.lean {
            line.extend(["--replies".to_owned(), "lean".to_owned()]);
        }
        let line = line
            .join(" ")
            .replace(&env.scratch.display().to_string(), "$SCRATCH")
            .replace(&format!("{}/", crate::workspace().display()), "");
        let _ = writeln!(out, "- {}: `{line}`", config.label());
    }
    out
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
        "| server | tool calls | characters read | tools/list (tools) | read + tools/list | read vs Playwright MCP | total vs Playwright MCP |\n|---|---:|---:|---:|---:|---:|---:|"
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
