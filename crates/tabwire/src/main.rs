//! The tabwire binary: command line, config printers, doctor and demo. Everything else
//! lives in the library crates; this is the edge where errors become `anyhow`.

mod broker;
mod cli;
mod demo;
mod doctor;
mod extension;
mod mcp_log;
mod native_host;
mod pairing;

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use engine::{Engine, EngineConfig, LaunchOptions, LinkConfig, SessionBrowsers};

#[derive(Parser, Debug)]
#[command(
    name = "tabwire",
    version,
    about = "An MCP server that gives AI agents full, safe control of Chromium-family browsers."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: ServeArgs,
}

/// How this platform separates the paths of a list in one variable (`PATH`'s way).
const PATH_LIST_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

#[derive(clap::Args, Debug, Clone)]
struct ServeArgs {
    /// Serve MCP Streamable HTTP on this address (at /mcp) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Bearer token required from HTTP clients (mandatory on non-loopback addresses).
    #[arg(long, env = "TABWIRE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// HTTP: live MCP sessions at most (the one idle longest is closed to make room).
    #[arg(
        long,
        env = "TABWIRE_MAX_SESSIONS",
        default_value_t = mcp::DEFAULT_MAX_SESSIONS,
        value_name = "N"
    )]
    max_sessions: usize,
    /// HTTP: open connections at most.
    #[arg(
        long,
        env = "TABWIRE_MAX_CONNECTIONS",
        default_value_t = mcp::DEFAULT_MAX_CONNECTIONS,
        value_name = "N"
    )]
    max_connections: usize,
    /// HTTP: a session with no request for this long is closed (and its own browser or
    /// context with it).
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    session_idle: u64,
    /// HTTP: on SIGTERM, how long the calls in flight are waited for (no new sessions
    /// meanwhile; /health answers 503) before the server exits.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    drain_seconds: u64,
    /// Use a throw-away profile instead of the persistent one.
    #[arg(long)]
    isolated: bool,
    /// Show the browser window.
    #[arg(long, conflicts_with = "headless")]
    headed: bool,
    /// Hide the browser window (default when there is no display).
    #[arg(long)]
    headless: bool,
    /// The browser binary (default: Chromium, Chrome, Edge, Brave or Opera on the usual paths).
    #[arg(long, value_name = "PATH")]
    browser_path: Option<PathBuf>,
    /// Attach to a running browser (ws://… or http://host:port) instead of launching one.
    /// Repeated: a pool of endpoints (farms), the least loaded first, one that fails
    /// passed over for 30 s. A farm's token may ride in the URL (`?token=…`).
    #[arg(long = "cdp-endpoint", value_name = "URL", conflicts_with_all = ["isolated", "headed", "headless", "browser_path"])]
    cdp_endpoint: Vec<String>,
    /// Give each MCP session a browser context of its own on the one browser: its own
    /// cookies, storage, permissions and cache, tabs no other session sees, files in its
    /// own folder under the output dir; removed when the session ends.
    #[arg(long, conflicts_with_all = ["extension", "browser_per_session"])]
    isolate_sessions: bool,
    /// Give each MCP session a browser of its own from the --cdp-endpoint farm (one
    /// connection each, opened on its first page call, closed when it ends or idles).
    #[arg(long, requires = "cdp_endpoint", conflicts_with = "extension")]
    browser_per_session: bool,
    /// Drive the user's own browsers through the tabwire extension instead.
    #[arg(long, conflicts_with_all = ["cdp_endpoint", "isolated", "headed", "headless", "browser_path", "user_data_dir"])]
    extension: bool,
    /// The tool surfaces to serve: btap (BrowserTap's), chrome (the Chrome MCP Server's), or both comma-separated.
    #[arg(
        long,
        env = "TABWIRE_FACE",
        default_value = "btap",
        value_name = "FACES"
    )]
    face: String,
    /// How replies are written: exact (the originals' shapes, for drop-in clients) or
    /// lean (plain text for a model: the fewest tokens, the same facts).
    #[arg(
        long,
        env = "TABWIRE_REPLIES",
        default_value = "exact",
        value_name = "exact|lean"
    )]
    replies: String,
    /// Which tools to serve: all (the default: every tool, as the originals serve them),
    /// core (the everyday ones: open, read, click, type, press, select, wait, screenshot,
    /// tabs, run a script), or tool names separated by commas (`core,get_cookies`). Any
    /// list but all is declared compactly.
    #[arg(
        long,
        env = "TABWIRE_TOOLS",
        default_value = "all",
        value_name = "all|core|NAMES"
    )]
    tools: String,
    /// Where screenshots, PDFs and large results are written (default ~/Downloads/tabwire).
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Automation profile: safe refuses risky operations, lab allows them. A session may
    /// tighten it, never loosen it.
    #[arg(long, value_enum, env = "TABWIRE_PROFILE", default_value = "lab")]
    profile: ProfileArg,
    /// Persistent profile directory (default $XDG_DATA_HOME/tabwire/profile).
    #[arg(long, value_name = "DIR", conflicts_with = "isolated")]
    user_data_dir: Option<PathBuf>,
    /// Extra argument passed to the launched browser (repeatable).
    #[arg(long = "browser-arg", value_name = "ARG", allow_hyphen_values = true)]
    browser_args: Vec<String>,
    /// Seconds a shared browser's broker waits after its last client leaves.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    broker_grace: f64,
    /// A directory upload_files may read from (repeatable). The output dir always is one;
    /// nothing else is readable unless named here.
    #[arg(
        long = "upload-root",
        value_name = "DIR",
        env = "TABWIRE_UPLOAD_ROOTS",
        value_delimiter = PATH_LIST_SEPARATOR
    )]
    upload_roots: Vec<PathBuf>,
    /// A directory download_file may save into besides the output dir (repeatable).
    #[arg(
        long = "download-root",
        value_name = "DIR",
        env = "TABWIRE_DOWNLOAD_ROOTS",
        value_delimiter = PATH_LIST_SEPARATOR
    )]
    download_roots: Vec<PathBuf>,
    /// Shortest permission lease in seconds (for tests; leases are 60–600 s).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, hide = true)]
    min_lease_seconds: u64,
    /// Run the browser link in this process even for a shared profile (no broker).
    #[arg(long)]
    no_broker: bool,
    /// Tab search's text encoder: the shipped one (default), `off` (search by words
    /// only), or a directory made by scripts/build-encoder.sh.
    #[arg(long, value_name = "off|DIR", env = "TABWIRE_EMBED_MODEL")]
    embed_model: Option<String>,
    /// Do not read open tabs for tab search (search_tabs and search_tabs_content then
    /// answer that it is off).
    #[arg(long)]
    no_tab_search: bool,
}

impl ServeArgs {
    /// The flags a broker needs to serve the same browser the same way.
    fn broker_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut flag = |name: &str, value: Option<String>| {
            args.push(name.to_owned());
            args.extend(value);
        };
        for endpoint in &self.cdp_endpoint {
            flag("--cdp-endpoint", Some(endpoint.clone()));
        }
        if self.isolate_sessions {
            flag("--isolate-sessions", None);
        }
        if self.browser_per_session {
            flag("--browser-per-session", None);
        }
        if self.extension {
            flag("--extension", None);
        }
        if let Some(dir) = &self.user_data_dir {
            flag("--user-data-dir", Some(dir.display().to_string()));
        }
        if let Some(path) = &self.browser_path {
            flag("--browser-path", Some(path.display().to_string()));
        }
        if self.headed {
            flag("--headed", None);
        }
        if self.headless {
            flag("--headless", None);
        }
        if let Some(dir) = &self.output_dir {
            flag("--output-dir", Some(dir.display().to_string()));
        }
        flag(
            "--profile",
            Some(format!("{:?}", self.profile).to_lowercase()),
        );
        flag("--broker-grace", Some(self.broker_grace.to_string()));
        flag(
            "--min-lease-seconds",
            Some(self.min_lease_seconds.to_string()),
        );
        for root in &self.upload_roots {
            flag("--upload-root", Some(root.display().to_string()));
        }
        for root in &self.download_roots {
            flag("--download-root", Some(root.display().to_string()));
        }
        for arg in &self.browser_args {
            flag("--browser-arg", Some(arg.clone()));
        }
        if let Some(model) = &self.embed_model {
            flag("--embed-model", Some(model.clone()));
        }
        if self.no_tab_search {
            flag("--no-tab-search", None);
        }
        args
    }

    /// The broker key when this browser is shared (a persistent profile or an endpoint).
    fn shared_link_key(&self) -> Option<String> {
        if self.no_broker {
            return None;
        }
        self.link_identity()
    }

    /// What names this browser across runs: its profile path or endpoint (None: a
    /// throw-away profile).
    fn link_identity(&self) -> Option<String> {
        if self.extension {
            return Some("extension".into());
        }
        // A throw-away profile is nobody else's; a farm gives each session a browser of
        // its own, so there is no browser to share (and several servers may use one farm).
        if self.isolated || self.browser_per_session {
            return None;
        }
        let profile = self
            .user_data_dir
            .clone()
            .unwrap_or_else(default_profile_dir);
        let endpoints = (!self.cdp_endpoint.is_empty()).then(|| self.cdp_endpoint.join(" "));
        // Sessions kept apart and sessions sharing are served by different brokers.
        let apart = match self.session_browsers() {
            SessionBrowsers::Shared => "",
            SessionBrowsers::IsolatedContexts => " isolated-contexts",
            SessionBrowsers::PerSession => " browser-per-session",
        };
        broker::link_key(Some(&profile), endpoints.as_deref()).map(|key| format!("{key}{apart}"))
    }

    fn session_browsers(&self) -> SessionBrowsers {
        if self.browser_per_session {
            SessionBrowsers::PerSession
        } else if self.isolate_sessions {
            SessionBrowsers::IsolatedContexts
        } else {
            SessionBrowsers::Shared
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Show the main job end to end: serve a built-in page and drive it through the MCP tools.
    Demo,
    /// Say what is found, what is missing and what to do.
    Doctor,
    /// Serve a shared browser to the tabwire processes that use it (started on demand).
    #[command(hide = true)]
    Broker,
    /// Write out the browser extension and print its folder (load it unpacked).
    ExtensionPath,
    /// Register the extension's native-messaging host for Chrome, Chromium, Edge and Brave.
    InstallNativeHost {
        /// Register it inside this browser profile directory instead (custom --user-data-dir).
        #[arg(long, value_name = "DIR")]
        browser_user_data_dir: Option<PathBuf>,
    },
    /// Run one tool and exit: its reply as lean text on stdout (a failure on stderr,
    /// exit status 1; a call that could not be made, 2). Calls on one profile act as one
    /// agent (its tabs, default tab and refs carry over) in a browser that stays up
    /// between them (--keep), until `tabwire browser stop`.
    Call {
        /// The tool, as `tabwire tools` lists it.
        tool: String,
        /// Its arguments as a JSON object; `-` reads them from standard input.
        arguments: Option<String>,
        /// Print the exact reply (the original's JSON) instead of lean text.
        #[arg(long)]
        json: bool,
        /// The agent this call speaks as: calls with another name have tabs and a default
        /// tab of their own.
        #[arg(long, value_name = "NAME", default_value = "default")]
        session: String,
        /// Seconds the browser stays up after this call, for the next one.
        #[arg(long, value_name = "SECONDS", default_value_t = cli::KEEP_SECONDS)]
        keep: f64,
    },
    /// List the tools (with --face and --tools as given): `tabwire tools NAME` describes
    /// one and its parameters.
    Tools { name: Option<String> },
    /// Print the skill document for coding agents (how to drive a browser with
    /// `tabwire call`), front matter included.
    Skill,
    /// What the command line's browser is doing, or end it.
    Browser {
        #[arg(value_enum)]
        action: BrowserAction,
    },
    /// Print the MCP client configuration for a client.
    PrintConfig {
        #[arg(value_enum)]
        client: Client,
        /// Configure lean replies (`--replies lean`): for an agent that is a model.
        #[arg(long)]
        lean: bool,
        /// The tool surfaces the configured server serves: btap, chrome, or both
        /// comma-separated (default: the --face given before the command, else btap).
        #[arg(long = "face", value_name = "FACES")]
        faces: Option<String>,
        /// The tools it serves: all, core, or names (default: the --tools given before the
        /// command, else all).
        #[arg(long = "tools", value_name = "all|core|NAMES")]
        tools: Option<String>,
    },
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum BrowserAction {
    /// Say whether a browser runs for this profile, and for whom.
    Status,
    /// End the profile's broker and its browser.
    Stop,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum ProfileArg {
    Safe,
    Lab,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum Client {
    Claude,
    Cursor,
    Vscode,
    Hermes,
    Codex,
}

/// Logs go to stderr at TABWIRE_LOG's level (warn by default) and, for MCP clients that
/// asked for logs, tabwire's own crates' events at debug and above (each client filters
/// by its level).
fn init_logging() {
    use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_filter(
            EnvFilter::try_from_env("TABWIRE_LOG").unwrap_or_else(|_| EnvFilter::new("warn")),
        );
    let clients = mcp_log::McpLog.with_filter(EnvFilter::new(
        "warn,engine=debug,mcp=debug,cdp=info,tabwire=debug",
    ));
    tracing_subscriber::registry()
        .with(stderr)
        .with(clients)
        .init();
}

/// Errors are said in one line (with their causes), never as a backtrace.
fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("tabwire: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    // A browser starts the native-messaging host with the extension's origin as argument.
    if let Some(origin) = std::env::args()
        .nth(1)
        .filter(|a| a.starts_with("chrome-extension://"))
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        return runtime
            .block_on(native_host::run(&origin))
            .map(|()| ExitCode::SUCCESS);
    }
    let cli = Cli::parse();
    platform::shutdown::raise_open_file_limit();
    // stdout belongs to MCP; logs go to stderr.
    init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let done = match cli.command {
            None => serve(cli.serve).await,
            Some(Command::Demo) => demo::run().await,
            Some(Command::Broker) => run_broker(cli.serve).await,
            Some(Command::Doctor) => doctor::run(&cli.serve),
            Some(Command::Call {
                tool,
                arguments,
                json,
                session,
                keep,
            }) => {
                let request = cli::CallRequest {
                    tool,
                    arguments,
                    json,
                    session,
                    keep,
                };
                return cli::call(&cli.serve, request).await.map(ExitCode::from);
            }
            Some(Command::Tools { name }) => {
                return match name {
                    Some(name) => cli::show_tool(&cli.serve, &name),
                    None => cli::list_tools(&cli.serve),
                }
                .map(ExitCode::from);
            }
            Some(Command::Skill) => {
                cli::print_skill();
                Ok(())
            }
            Some(Command::Browser { action }) => {
                return match action {
                    BrowserAction::Status => cli::browser_status(&cli.serve).await,
                    BrowserAction::Stop => cli::browser_stop(&cli.serve).await,
                }
                .map(ExitCode::from);
            }
            Some(Command::ExtensionPath) => {
                println!("{}", extension::write_out()?.display());
                Ok(())
            }
            Some(Command::InstallNativeHost {
                browser_user_data_dir,
            }) => install_native_host(browser_user_data_dir),
            Some(Command::PrintConfig {
                client,
                lean,
                faces,
                tools,
            }) => {
                let lean =
                    lean || mcp::Replies::parse(&cli.serve.replies) == Ok(mcp::Replies::Lean);
                let faces = faces.unwrap_or_else(|| cli.serve.face.clone());
                let tools = tools.unwrap_or_else(|| cli.serve.tools.clone());
                let config = print_config(client, &faces, &tools, lean)?;
                // Where it goes on stderr, so stdout stays the configuration alone.
                eprintln!("{}", config_file(client));
                println!("{config}");
                Ok(())
            }
        };
        done.map(|()| ExitCode::SUCCESS)
    })
}

fn engine_config(args: &ServeArgs) -> anyhow::Result<EngineConfig> {
    let link = match args.cdp_endpoint.as_slice() {
        _ if args.extension => LinkConfig::Extension,
        [] => LinkConfig::Managed(LaunchOptions {
            browser_path: args.browser_path.clone(),
            headless: match (args.headed, args.headless) {
                (true, _) => Some(false),
                (_, true) => Some(true),
                _ => None,
            },
            profile_dir: if args.isolated {
                None
            } else {
                Some(
                    args.user_data_dir
                        .clone()
                        .unwrap_or_else(default_profile_dir),
                )
            },
            extra_args: args.browser_args.clone(),
        }),
        endpoints => LinkConfig::Endpoint(endpoints.to_vec()),
    };
    let output_dir = args
        .output_dir
        .clone()
        .unwrap_or_else(platform::dirs::default_output_dir);
    std::fs::create_dir_all(&output_dir)
        .with_context(|| format!("cannot create the output dir {}", output_dir.display()))?;
    let output_dir = platform::fs::canonical(&output_dir).unwrap_or(output_dir);
    // The browser we launch carries the tabwire extension, for the browser-API tools.
    let extension_dir = extension::write_out().ok();
    let link = match (link, &extension_dir) {
        (LinkConfig::Managed(mut options), Some(dir)) => {
            options
                .extra_args
                .push(format!("--load-extension={}", dir.display()));
            LinkConfig::Managed(options)
        }
        (link, _) => link,
    };
    let mut upload_roots = vec![output_dir.clone()];
    upload_roots.extend(args.upload_roots.iter().cloned());
    let download_roots = args
        .download_roots
        .iter()
        .map(|dir| {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create the download root {}", dir.display()))?;
            Ok(platform::fs::canonical(dir).unwrap_or_else(|_| dir.clone()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let state_file = args.link_identity().map(|key| {
        let key = &engine::files::sha256_hex(key.as_bytes())[..16];
        state_dir().join(format!("leases-{key}.json"))
    });
    Ok(EngineConfig {
        extension_id: Some(native_host::EXTENSION_ID.to_owned()),
        extension_stamp: Some(extension::build_stamp()),
        extension_dir,
        backup_dir: state_dir().join("bookmark-backups"),
        state_file,
        min_lease_seconds: args.min_lease_seconds,
        link,
        sessions: args.session_browsers(),
        output_dir,
        upload_roots,
        download_roots,
        embed_model: match args.embed_model.as_deref() {
            None | Some("") => engine::config::EmbedModel::Shipped,
            Some("off") => engine::config::EmbedModel::Off,
            Some(dir) => engine::config::EmbedModel::Dir(dir.into()),
        },
        tab_search: !args.no_tab_search,
    })
}

/// Registers the native-messaging host where browsers look for it.
fn install_native_host(profile: Option<PathBuf>) -> anyhow::Result<()> {
    let binary = std::env::current_exe().context("cannot find this executable's path")?;
    let manifest = serde_json::to_vec_pretty(&native_host::manifest(&binary))?;
    let write = |path: &std::path::Path, bytes: &[u8]| {
        engine::files::write_file_blocking(path, bytes)
            .map(drop)
            .map_err(|e| std::io::Error::other(e.to_string()))
    };
    let host = native_host::HOST_NAME;
    let done = match profile {
        Some(dir) => {
            platform::native_messaging::register_in_profile(&dir, host, &manifest, &write)?
        }
        None => platform::native_messaging::register(host, &manifest, &write)?,
    };
    if done.is_empty() {
        anyhow::bail!(
            "no Chrome, Chromium, Edge or Brave profile found; pass --browser-user-data-dir DIR"
        );
    }
    for registered in done {
        println!("{}: {}", registered.browser, registered.place);
    }
    println!("extension id: {}", native_host::EXTENSION_ID);
    crate::pairing::load_or_create()?;
    println!("pairing secret: {}", crate::pairing::path().display());
    Ok(())
}

/// Where tabwire keeps its data (`platform::dirs`).
fn data_dir() -> PathBuf {
    platform::dirs::data_dir()
}

fn state_dir() -> PathBuf {
    platform::dirs::state_dir()
}

fn default_profile_dir() -> PathBuf {
    data_dir().join("profile")
}

impl ServeArgs {
    /// How this process's MCP sessions are served.
    fn session_options(&self) -> anyhow::Result<mcp::SessionOptions> {
        let faces = mcp::faces::by_names(&self.face).map_err(anyhow::Error::msg)?;
        let tools = mcp::ToolSet::parse(&self.tools, &faces).map_err(anyhow::Error::msg)?;
        Ok(mcp::SessionOptions {
            faces,
            tools,
            profile: match self.profile {
                ProfileArg::Safe => mcp::Profile::Safe,
                ProfileArg::Lab => mcp::Profile::Lab,
            },
            allow_blocked_cdp: std::env::var(mcp::OVERRIDE_ENV).is_ok_and(|v| v == "1"),
            replies: mcp::Replies::parse(&self.replies).map_err(anyhow::Error::msg)?,
            // Sessions a broker relays get theirs from the broker (broker.rs).
            brokered: false,
        })
    }

    /// What a broker client tells the broker: its session, and the engine it expects.
    fn preamble(&self) -> anyhow::Result<broker::Preamble> {
        let options = self.session_options()?;
        Ok(broker::Preamble {
            tabwire_client: 1,
            faces: self.face.clone(),
            profile: options.profile.name().to_owned(),
            allow_blocked_cdp: options.allow_blocked_cdp,
            replies: options.replies.name().to_owned(),
            tools: options.tools.spelling(),
            agent: None,
            keep_s: None,
            command: None,
            engine: self.engine_settings(),
        })
    }

    /// The flags that shape the engine (not a session): clients of one broker must agree.
    fn engine_settings(&self) -> serde_json::Value {
        let canonical = |dirs: &[PathBuf]| -> Vec<String> {
            dirs.iter()
                .map(|d| {
                    platform::fs::canonical(d)
                        .unwrap_or_else(|_| d.clone())
                        .display()
                        .to_string()
                })
                .collect()
        };
        let output_dir = self
            .output_dir
            .clone()
            .unwrap_or_else(platform::dirs::default_output_dir);
        // Made now so that client and broker both name it by its canonical path.
        let _ = std::fs::create_dir_all(&output_dir);
        serde_json::json!({
            "output_dir": canonical(&[output_dir]),
            "upload_roots": canonical(&self.upload_roots),
            "download_roots": canonical(&self.download_roots),
            "browser_path": self.browser_path,
            "headed": self.headed,
            "headless": self.headless,
            "browser_args": self.browser_args,
            "embed_model": self.embed_model,
            "tab_search": !self.no_tab_search,
        })
    }
}

fn new_engine(args: &ServeArgs) -> anyhow::Result<std::sync::Arc<Engine>> {
    Ok(Engine::new(engine_config(args)?))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let shared = args.shared_link_key();
    if args.http.is_none()
        && let Some(key) = &shared
    {
        // A shared browser lives in its broker; this process relays MCP to it.
        let paths = broker::paths_for(key)?;
        let preamble = args.preamble()?;
        let stream = broker::connect_or_start(&paths, &args.broker_args()).await?;
        return tokio::select! {
            relayed = broker::relay(stream, &preamble) => relayed,
            _ = shutdown_signal() => Ok(()),
        };
    }
    let options = args.session_options()?;
    let engine = new_engine(&args)?;
    // An HTTP server for a shared browser is also its broker, so stdio clients of the same
    // profile join it instead of fighting over the profile lock.
    let _broker_lock = match (&args.http, &shared) {
        (Some(_), Some(key)) => {
            let paths = broker::paths_for(key)?;
            let lock = broker::try_lock(&paths)?.with_context(|| {
                format!(
                    "another tabwire already serves this browser (socket {}); use --isolated or another --user-data-dir",
                    paths.socket.display()
                )
            })?;
            tokio::spawn(broker::serve(
                engine.clone(),
                args.engine_settings(),
                broker::bind(&paths)?,
                None,
            ));
            if args.extension {
                broker::serve_links(engine.clone(), native_host::link_socket()?)?;
            }
            Some(lock)
        }
        _ => None,
    };
    let served = match args.http {
        Some(addr) => {
            let mut http = mcp::HttpOptions::new(addr, args.token.clone());
            http.max_sessions = args.max_sessions;
            http.max_connections = args.max_connections;
            http.drain = std::time::Duration::from_secs(args.drain_seconds);
            http.session_idle = std::time::Duration::from_secs(args.session_idle.max(1));
            mcp::serve_http(engine.clone(), options, http, shutdown_signal()).await
        }
        None => {
            tokio::select! {
                served = mcp::serve_stdio(engine.clone(), options) => served,
                _ = shutdown_signal() => Ok(()),
            }
        }
    };
    // The browser goes away with the server, whichever way it ends.
    engine.shutdown().await;
    served.map_err(anyhow::Error::from)
}

/// The hidden `broker` command: owns one shared browser until its last client has gone.
async fn run_broker(args: ServeArgs) -> anyhow::Result<()> {
    let key = args
        .shared_link_key()
        .context("a broker needs a shared profile or endpoint")?;
    let paths = broker::paths_for(&key)?;
    let Some(_lock) = broker::acquire_or_join(&paths).await? else {
        broker::announce("busy");
        return Ok(());
    };
    let listener = broker::bind(&paths)?;
    let engine = new_engine(&args)?;
    if args.extension {
        broker::serve_links(engine.clone(), native_host::link_socket()?)?;
    }
    broker::announce("ready");
    let grace = std::time::Duration::from_secs_f64(args.broker_grace.clamp(0.0, 86_400.0));
    tokio::select! {
        () = broker::serve(engine.clone(), args.engine_settings(), listener, Some(grace)) => {}
        _ = shutdown_signal() => {}
    }
    engine.shutdown().await;
    paths.socket.remove();
    Ok(())
}

async fn shutdown_signal() {
    platform::shutdown::requested().await
}

/// A client's configuration for this binary, with `--face` when it is not the default and
/// `--replies lean` when asked for.
/// Where each client reads its MCP servers from.
fn config_file(client: Client) -> &'static str {
    match client {
        Client::Claude => {
            "# Claude Code: run the `claude mcp add` line, or put the JSON in .mcp.json (this project) or ~/.claude.json (every project)"
        }
        Client::Cursor => {
            "# Cursor: put this in ~/.cursor/mcp.json (every project) or .cursor/mcp.json (this project)"
        }
        Client::Vscode => "# VS Code: put this in .vscode/mcp.json (this workspace)",
        Client::Hermes => "# Hermes: put this in ~/.hermes/config.yaml",
        Client::Codex => "# Codex: put this in ~/.codex/config.toml",
    }
}

fn print_config(client: Client, faces: &str, tools: &str, lean: bool) -> anyhow::Result<String> {
    let served = mcp::faces::by_names(faces).map_err(anyhow::Error::msg)?;
    let tools = mcp::ToolSet::parse(tools, &served)
        .map_err(anyhow::Error::msg)?
        .spelling();
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let exe = exe.display().to_string();
    let mut args: Vec<&str> = if faces == "btap" {
        Vec::new()
    } else {
        vec!["--face", faces]
    };
    if lean {
        args.extend(["--replies", "lean"]);
    }
    if tools != "all" {
        args.extend(["--tools", &tools]);
    }
    let joined = args.join(" ");
    let command_line = if joined.is_empty() {
        exe.clone()
    } else {
        format!("{exe} {joined}")
    };
    let server = serde_json::json!({ "command": exe, "args": args });
    Ok(match client {
        Client::Claude => format!(
            "claude mcp add tabwire -- {command_line}\n\n# or in a client config file:\n{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "mcpServers": { "tabwire": server } })
            )?
        ),
        Client::Cursor => serde_json::to_string_pretty(
            &serde_json::json!({ "mcpServers": { "tabwire": server } }),
        )?,
        Client::Vscode => {
            serde_json::to_string_pretty(&serde_json::json!({ "servers": { "tabwire": server } }))?
        }
        Client::Hermes => format!(
            "mcp_servers:\n  tabwire:\n    command: {exe}\n    args: {}\n    timeout: 120\n    connect_timeout: 60",
            serde_json::to_string(&args)?
        ),
        Client::Codex => format!(
            "[mcp_servers.tabwire]\ncommand = \"{exe}\"\nargs = {}",
            serde_json::to_string(&args)?
        ),
    })
}
