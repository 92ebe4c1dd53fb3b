//! tabwire's browser engine.
//!
//! Owns the browser link (a Chromium we launch over a pipe, or any CDP endpoint), the
//! tabs and their ownership, per-agent sessions and default tabs, reservations
//! (`target_busy`), operation receipts, and every page operation. Page work is CDP
//! commands plus one injected page script (`page/*.js`), the same for every link.
//!
//! This crate knows nothing of MCP: faces in `crates/mcp` map tool parameters to the calls
//! here and the results back.

mod bookmarks;
mod browser;
mod capture;
mod captures;
mod cookies;
mod engine;
mod error;
mod exec;
mod files;
mod input;
mod keys;
mod launch;
mod link;
mod page;
mod permissions;
mod rawcdp;
mod receipts;
mod scan;
mod script;
mod storage;
mod tabs;
mod transfer;

pub use browser::{Browser, Dialog, DialogPolicy, Tab};
pub use capture::{ImageFormat, PdfRequest, Screenshot, ScreenshotRequest, image_dimensions};
pub use captures::{NetworkFilter, NetworkOptions};
pub use engine::{
    AgentSession, Engine, EngineConfig, LinkConfig, parse_tab_handle, seconds, tab_handle,
};
pub use error::{EngineError, Result};
pub use exec::{INLINE_LIMIT, ScriptRequest, outcome_reply};
pub use files::{confined_path, sha256_hex, write_atomic};
pub use input::ClickTarget;
pub use launch::{LaunchOptions, find_browser, running_as_root};
pub use link::{LINK_WAIT, LinkHello};
pub use page::{FrameContext, Page, check_url_scheme};
pub use permissions::LEASE_RANGE;
pub use receipts::{MAX_COMPLETED, RETENTION, ReceiptState};
pub use scan::ScanRequest;
pub use storage::StoragePage;
pub use tabs::OpenTabRequest;
pub use transfer::DownloadRequest;
