//! Many agents, one browser: a per-user broker owns the browser link for one profile (or
//! CDP endpoint) and serves every tabwire process that uses it, over a local socket of
//! this user's (`platform::local`: a Unix socket in a private runtime directory, or a
//! named pipe only this user may open on Windows).
//!
//! Each stdio `tabwire` for a shared profile is a relay: it connects to the broker (starting
//! one if there is none), says in one line how its session is to be served (its faces,
//! its profile, the engine settings it was started with), and then copies MCP bytes
//! between its stdin/stdout and the socket. The broker speaks MCP on each connection, so
//! each relay is its own MCP session with its own default tab and its own faces and
//! profile, while ownership, reservations and receipts are decided in one process. A
//! client whose engine settings (output dir, upload roots, …) differ from the broker's is
//! refused with the difference named, rather than silently served with the others'.
//! The broker leaves, with its browser, a short grace period after its last client.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use platform::local::{Endpoint, Listener, Stream};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What a client says first: how its session is served, and the engine settings it
/// expects.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Preamble {
    pub tabwire_client: u32,
    pub faces: String,
    pub profile: String,
    pub allow_blocked_cdp: bool,
    /// `exact` or `lean` (an older client says nothing: exact).
    #[serde(default)]
    pub replies: String,
    /// `--tools` as the client was started with (an older client says nothing: all).
    #[serde(default)]
    pub tools: String,
    /// The agent this connection speaks as, kept by the broker across connections (the
    /// command line's `--session`); None: an agent of its own, gone when it leaves.
    #[serde(default)]
    pub agent: Option<String>,
    /// How long the browser should stay up after this client leaves, at least (the
    /// command line keeps it between calls); None: the broker's own grace.
    #[serde(default)]
    pub keep_s: Option<f64>,
    /// Not a session: `status` (what runs) or `stop` (end the browser and the broker).
    #[serde(default)]
    pub command: Option<String>,
    pub engine: Value,
}

/// How long a client may take to say its preamble.
const PREAMBLE_WAIT: Duration = Duration::from_secs(10);

/// How long a new broker waits for its first client before giving up.
const FIRST_CLIENT_WAIT: Duration = Duration::from_secs(10);

/// Where one broker's socket, lock and log live.
pub struct BrokerPaths {
    pub socket: Endpoint,
    pub lock: PathBuf,
    pub log: PathBuf,
}

/// One broker per browser: the key is a hash of the profile path or endpoint.
pub fn paths_for(link_key: &str) -> anyhow::Result<BrokerPaths> {
    let dir = platform::local::runtime_dir()?;
    let key = &engine::files::sha256_hex(link_key.as_bytes())[..16];
    Ok(BrokerPaths {
        socket: Endpoint::named(&format!("broker-{key}"))?,
        lock: dir.join(format!("broker-{key}.lock")),
        log: dir.join(format!("broker-{key}.log")),
    })
}

/// Holds the broker's exclusive lock for as long as it lives.
pub type BrokerLock = platform::lock::Held;

/// Takes the broker lock, or None if another broker holds it.
pub fn try_lock(paths: &BrokerPaths) -> anyhow::Result<Option<BrokerLock>> {
    platform::lock::try_lock(&paths.lock)
        .with_context(|| format!("cannot open {}", paths.lock.display()))
}

/// Takes the broker lock, waiting while a previous broker finishes shutting down (it
/// holds the lock until its browser has closed the profile). None when a live broker
/// already serves the socket: join it instead.
pub async fn acquire_or_join(paths: &BrokerPaths) -> anyhow::Result<Option<BrokerLock>> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(lock) = try_lock(paths)? {
            return Ok(Some(lock));
        }
        if Stream::connect(&paths.socket).await.is_ok() {
            return Ok(None);
        }
        if tokio::time::Instant::now() > deadline {
            bail!(
                "another tabwire broker holds {} but does not answer",
                paths.lock.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Binds the broker socket (replacing a stale one; we hold the lock, so it is stale).
pub fn bind(paths: &BrokerPaths) -> anyhow::Result<Listener> {
    Ok(Listener::bind(&paths.socket)?)
}

/// What one broker holds for its clients.
#[derive(Default)]
struct BrokerState {
    clients: AtomicUsize,
    left: tokio::sync::Notify,
    /// The longest stay any client asked for after the last one leaves, in ms.
    keep_ms: AtomicU64,
    /// Agents kept by name across connections (the command line's sessions).
    agents: parking_lot::Mutex<HashMap<String, Arc<engine::AgentSession>>>,
    /// Asked to stop (`tabwire browser stop`).
    stop: tokio::sync::Notify,
}

/// Serves MCP sessions on the socket. With a grace period, returns once no client has
/// been connected for that long (or as long as a client asked for, if longer); without
/// one, serves until the process ends. Either way it returns when a client asks it to
/// stop.
pub async fn serve(
    engine: Arc<engine::Engine>,
    settings: Value,
    mut listener: Listener,
    grace: Option<Duration>,
) {
    let state = Arc::new(BrokerState::default());
    // The client that started this broker connects right after "ready"; give it time
    // even when the grace period is zero.
    let mut served_anyone = false;
    loop {
        let wait = match grace {
            Some(grace) if !served_anyone => Some(grace.max(FIRST_CLIENT_WAIT)),
            Some(grace) => {
                let asked = Duration::from_millis(state.keep_ms.load(Ordering::Acquire));
                Some(grace.max(asked))
            }
            None => None,
        };
        // True once nobody has been connected for the whole wait; false when a client
        // left (the wait starts then, in the next round).
        let idle = async {
            match wait {
                Some(wait) if state.clients.load(Ordering::Acquire) == 0 => {
                    tokio::time::sleep(wait).await;
                    true
                }
                _ => {
                    state.left.notified().await;
                    false
                }
            }
        };
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok(Some(stream)) => stream,
                    Ok(None) => {
                        tracing::warn!("refused a broker connection from another user");
                        continue;
                    }
                    Err(error) => {
                        tracing::warn!(%error, "a broker connection failed");
                        continue;
                    }
                };
                state.clients.fetch_add(1, Ordering::AcqRel);
                served_anyone = true;
                let (engine, settings, state) = (engine.clone(), settings.clone(), state.clone());
                tokio::spawn(async move {
                    if let Err(error) = serve_client(engine, &settings, &state, stream).await {
                        tracing::debug!(%error, "broker session ended with an error");
                    }
                    state.clients.fetch_sub(1, Ordering::AcqRel);
                    state.left.notify_one();
                });
            }
            waited_out = idle => {
                if waited_out && state.clients.load(Ordering::Acquire) == 0 {
                    return;
                }
            }
            () = state.stop.notified() => return,
        }
    }
}

/// One client: its preamble checked and answered, then its MCP session (or the
/// command it asked for).
async fn serve_client(
    engine: Arc<engine::Engine>,
    settings: &Value,
    state: &BrokerState,
    stream: Stream,
) -> anyhow::Result<()> {
    let (reader, mut writer) = tokio::io::split(stream);
    let mut reader = BufReader::new(reader);
    let mut line = String::new();
    tokio::time::timeout(PREAMBLE_WAIT, reader.read_line(&mut line))
        .await
        .context("no preamble from the client")??;
    let preamble = serde_json::from_str::<Preamble>(line.trim())
        .map_err(|e| anyhow::anyhow!("the first line is not a tabwire client preamble: {e}"));
    if let Ok(Preamble {
        command: Some(command),
        ..
    }) = &preamble
    {
        let answer = broker_command(command, &engine, state);
        writer.write_all(format!("{answer}\n").as_bytes()).await?;
        writer.flush().await?;
        if command == "stop" && answer["ok"] == true {
            state.stop.notify_one();
        }
        return Ok(());
    }
    let verdict = preamble
        .and_then(|preamble| session_for(&preamble, settings).map(|options| (preamble, options)));
    let (preamble, options) = match verdict {
        Ok(verdict) => {
            writer.write_all(b"{\"ok\":true}\n").await?;
            verdict
        }
        Err(error) => {
            let refusal = json!({ "ok": false, "error": error.to_string() });
            writer.write_all(format!("{refusal}\n").as_bytes()).await?;
            return Err(error);
        }
    };
    if let Some(keep) = preamble.keep_s.filter(|k| k.is_finite() && *k > 0.0) {
        let keep_ms = (keep.min(86_400.0) * 1000.0) as u64;
        state.keep_ms.fetch_max(keep_ms, Ordering::AcqRel);
    }
    let agent = preamble.agent.as_ref().map(|name| {
        let mut agents = state.agents.lock();
        agents
            .entry(name.clone())
            .or_insert_with(|| Arc::new(engine.new_session()))
            .clone()
    });
    mcp::serve_stream_as(engine, options, agent, reader, writer).await?;
    Ok(())
}

/// `status`: what this broker runs; `stop`: ends it (answered first).
fn broker_command(command: &str, engine: &engine::Engine, state: &BrokerState) -> Value {
    let agents: Vec<String> = state.agents.lock().keys().cloned().collect();
    match command {
        "status" | "stop" => json!({
            "ok": true,
            "pid": std::process::id(),
            "clients": state.clients.load(Ordering::Acquire).saturating_sub(1),
            "agents": agents,
            "link": engine.link_name(),
            "browser_running": engine.browser_processes().own_pid.is_some()
                || !engine.browsers.connected_now().is_empty(),
            "browser_pid": engine.browser_processes().own_pid,
            "stays_s": state.keep_ms.load(Ordering::Acquire) as f64 / 1000.0,
        }),
        other => json!({ "ok": false, "error": format!("unknown broker command '{other}'") }),
    }
}

/// The session a preamble asks for, if the broker's engine is the one it expects.
fn session_for(preamble: &Preamble, settings: &Value) -> anyhow::Result<mcp::SessionOptions> {
    if preamble.engine != *settings {
        let differ: Vec<String> = settings
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, value)| preamble.engine.get(key.as_str()) != Some(*value))
            .map(|(key, value)| {
                format!(
                    "{key}: this browser's tabwire has {value}, this client asks for {}",
                    preamble.engine[key.as_str()]
                )
            })
            .collect();
        bail!(
            "a tabwire with other settings already serves this browser ({}); start this one with the same flags, or use --isolated or another --user-data-dir",
            differ.join("; ")
        );
    }
    let faces = mcp::faces::by_names(&preamble.faces).map_err(anyhow::Error::msg)?;
    let profile = match preamble.profile.as_str() {
        "safe" => mcp::Profile::Safe,
        "lab" => mcp::Profile::Lab,
        other => bail!("unknown profile '{other}'"),
    };
    let tools = mcp::ToolSet::parse(&preamble.tools, &faces).map_err(anyhow::Error::msg)?;
    Ok(mcp::SessionOptions {
        faces,
        profile,
        allow_blocked_cdp: preamble.allow_blocked_cdp,
        replies: mcp::Replies::parse(&preamble.replies).map_err(anyhow::Error::msg)?,
        brokered: true,
        tools,
    })
}

/// Accepts linked browsers (through the extension's native host) on their own socket.
pub fn serve_links(engine: Arc<engine::Engine>, socket: Endpoint) -> anyhow::Result<()> {
    let mut listener = Listener::bind(&socket)?;
    let pairing: Arc<str> = crate::pairing::load_or_create()?.into();
    tokio::spawn(async move {
        loop {
            let stream = match listener.accept().await {
                Ok(Some(stream)) => stream,
                Ok(None) => {
                    tracing::warn!("refused an extension link from another user");
                    continue;
                }
                Err(error) => {
                    tracing::warn!(%error, "the extension link socket failed");
                    return;
                }
            };
            let engine = engine.clone();
            let pairing = pairing.clone();
            tokio::spawn(async move {
                let (reader, writer) = tokio::io::split(stream);
                match engine.browsers.attach_link(reader, writer, &pairing).await {
                    Ok(client) => tracing::info!(client, "browser linked"),
                    Err(error) => tracing::warn!(%error, "extension link refused"),
                }
            });
        }
    });
    Ok(())
}

/// Connects to the broker for this link, starting one if none answers.
pub async fn connect_or_start(
    paths: &BrokerPaths,
    broker_args: &[String],
) -> anyhow::Result<Stream> {
    if let Ok(stream) = Stream::connect(&paths.socket).await {
        return Ok(stream);
    }
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&paths.log)?;
    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    // The shared flags are top-level options, so they go before the subcommand.
    command
        .args(broker_args)
        .arg("broker")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log));
    // A session of its own keeps the broker alive when the client that started it (and
    // its process group) goes away.
    platform::process::detach(&mut command);
    let mut broker = command.spawn().context("cannot start the tabwire broker")?;
    let stdout = broker.stdout.take().context("broker stdout")?;
    // The broker says "ready" once it listens, or "busy" if another broker won the race.
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let first = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .context("the broker did not start within 30 s")??;
    match first.as_deref() {
        Some("ready") | Some("busy") => {}
        _ => bail!("the broker failed to start; see {}", paths.log.display()),
    }
    // A broker that lost the race to another is already exiting; the winner listens soon.
    for attempt in 0..100 {
        match Stream::connect(&paths.socket).await {
            Ok(stream) => return Ok(stream),
            Err(_) if attempt < 99 => tokio::time::sleep(Duration::from_millis(50)).await,
            Err(error) => {
                return Err(error).context(format!(
                    "cannot reach the broker at {}",
                    paths.socket.display()
                ));
            }
        }
    }
    unreachable!("the loop returns on its last attempt")
}

/// Says the preamble and reads the broker's answer; then copies MCP bytes between this
/// process's stdin/stdout and the broker until either side closes.
pub async fn relay(stream: Stream, preamble: &Preamble) -> anyhow::Result<()> {
    let (from_broker, mut to_broker) = tokio::io::split(stream);
    let mut from_broker = BufReader::new(from_broker);
    to_broker
        .write_all(format!("{}\n", serde_json::to_string(preamble)?).as_bytes())
        .await?;
    let mut answer = String::new();
    tokio::time::timeout(PREAMBLE_WAIT, from_broker.read_line(&mut answer))
        .await
        .context("the broker did not answer")??;
    let answer: Value = serde_json::from_str(answer.trim()).context("the broker's answer")?;
    if answer["ok"] != true {
        bail!(
            "{}",
            answer["error"]
                .as_str()
                .unwrap_or("the broker refused this client")
        );
    }
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let upstream = async {
        let _ = tokio::io::copy(&mut stdin, &mut to_broker).await;
        // The client is done: tell the broker so it ends this session.
        let _ = to_broker.shutdown().await;
        std::future::pending::<()>().await
    };
    let downstream = tokio::io::copy(&mut from_broker, &mut stdout);
    tokio::select! {
        copied = downstream => { copied.context("broker connection")?; }
        () = upstream => {}
    }
    stdout.flush().await?;
    Ok(())
}

/// Says what the broker startup produced, for the client that spawned it.
pub fn announce(word: &str) {
    println!("{word}");
    // Nothing else goes to stdout; the spawner stops reading after this line.
}

/// A broker key for a link: the canonical profile path, or the endpoint.
pub fn link_key(profile: Option<&Path>, endpoint: Option<&str>) -> Option<String> {
    match (profile, endpoint) {
        (_, Some(endpoint)) => Some(format!("cdp:{endpoint}")),
        (Some(profile), None) => {
            let _ = std::fs::create_dir_all(profile);
            let canonical = profile
                .canonicalize()
                .unwrap_or_else(|_| profile.to_path_buf());
            Some(format!("profile:{}", canonical.display()))
        }
        (None, None) => None,
    }
}
