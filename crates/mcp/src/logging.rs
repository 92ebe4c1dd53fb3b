//! MCP logging: a client that sets a level (`logging/setLevel`) is sent what tabwire
//! logs at that level and above while its session lives: each call's start and end with
//! its time, and the engine's own log lines (a browser lost or relaunched, a slow
//! connect, a page script installed late) so it can read why a call is slow.

use std::sync::OnceLock;

use rmcp::model::LoggingLevel;
use tokio::sync::broadcast;

/// One log line, as the binary's log layer hands it over.
#[derive(Debug, Clone)]
pub struct Line {
    pub level: tracing::Level,
    pub target: String,
    pub message: String,
}

fn feed() -> &'static broadcast::Sender<Line> {
    static FEED: OnceLock<broadcast::Sender<Line>> = OnceLock::new();
    FEED.get_or_init(|| broadcast::channel(1024).0)
}

/// Hands a log line to every session that asked for logs (a no-op when none did).
pub fn publish(line: Line) {
    let _ = feed().send(line);
}

/// Whether any session listens, so the log layer can skip formatting otherwise.
pub fn listened() -> bool {
    feed().receiver_count() > 0
}

pub(crate) fn subscribe() -> broadcast::Receiver<Line> {
    feed().subscribe()
}

pub(crate) fn mcp_level(level: tracing::Level) -> LoggingLevel {
    match level {
        tracing::Level::ERROR => LoggingLevel::Error,
        tracing::Level::WARN => LoggingLevel::Warning,
        tracing::Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// Severity order: Debug < Info < Notice < Warning < Error < …
pub(crate) fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
