//! tabwire's browser engine.
//!
//! Rooms, lowest first (each may import only the ones before it):
//! - base: `config`, `error`, `ids`, `files`, `urls`;
//! - `browser`: launching and linking browsers, the tab table, dialogs, browser APIs;
//! - `page`: page operations on one reserved tab, and the page script;
//! - `data`, `recordings` and `search`: browser data, network/console captures, and the
//!   search index of every open tab;
//! - `agents`: the shared [`Engine`] and each agent's [`AgentSession`].
//!
//! Page work is CDP commands plus one injected page script (`page_script/*.js`), the same
//! for every link. This crate knows nothing of MCP: faces in `crates/mcp` map tool
//! parameters to the calls here and the results back.

pub mod agents;
pub mod browser;
pub mod config;
pub mod data;
mod error;
pub mod files;
pub mod ids;
pub mod page;
pub mod recordings;
pub mod search;
pub mod urls;

#[cfg(test)]
mod layering;

// The names faces use most, at the top.
pub use agents::{
    Activated, AgentSession, CloseResult, CloseScope, Engine, OpenTabRequest, Opened, ReceiptState,
    Reused, ScriptAnswer, ScriptRequest, TabEmulation, TabList, Unfinished, Window, WindowTab,
    WindowTarget,
};
pub use browser::emulation::{
    ColorScheme, DeviceViewport, Emulation, Geolocation, NETWORK_PRESETS, NetworkPreset,
};
pub use browser::launch::{find_browser, running_as_root};
pub use browser::userscripts::{
    NewUserScript, RunAt, UserScript, UserScriptHeader, UserScriptWorld, looks_like_css,
};
pub use browser::{
    Browser, DebugTarget, Dialog, DialogAnswer, DialogOutcome, DialogPolicy, ExtensionStatus,
    LINK_WAIT, LinkHello, PageTool, PageToolHints, Tab, TabInfo, link_secret_path,
    parse_tab_handle, tab_handle,
};
pub use cdp::without_query;
pub use config::{EngineConfig, LaunchOptions, LinkConfig, SessionBrowsers};
pub use data::downloads::{
    DownloadRequest, DownloadState, DownloadWait, Downloaded, FoundDownload,
};
pub use data::permissions::{LEASE_RANGE, Lease, LeaseRequest, ManualRecovery, Reset, Restored};
pub use data::routes::{RouteAction, RouteInfo, RouteRequest, RouteScope};
pub use error::{Delivery, EngineError, ErrorCode, Input, Result};
pub use ids::Deadline;
pub use page::aftermath::{Aftermath, Landing, OpenedByPage};
pub use page::agent_js::{INLINE_LIMIT, PageChanges, ScriptRan};
pub use page::choose::{ChoiceKind, Selected};
pub use page::content::{Article, CleanHtml, FetchRequest, FetchResponse, MainContent, Metadata};
pub use page::cookies::{
    Cookie, CookiePartition, CookieScope, CookieSet, Cookies, CookiesDeleted, CookiesSet, SameSite,
};
pub use page::element_info::ElementInfo;
pub use page::forms::{Filled, FilledKind, FormField, FormFilled};
pub use page::inject::ScriptWorld;
pub use page::input::{ClickTarget, Clicked, KeyStep, Pressed, SentStep, Typed};
pub use page::locator::{Find, Locator};
pub use page::navigation::{Condition, Navigated, Readiness, Waited};
pub use page::observation::{
    Collapsed, Continuation, FrameTarget, Listed, Observation, Rect, RenderProbe, Scan,
    ScanViewport, Subfield, Target,
};
pub use page::pick::{PickRequest, Picked, PickedElement, Picking};
pub use page::read::{Cursor, ScanRequest, ScrollTo, Scrolled};
pub use page::screenshot::{ImageFormat, PdfRequest, Screenshot, ScreenshotRequest};
pub use page::storage::{StorageArea, StoragePage, StorageRead, StorageWritten};
pub use page::tree::{Control, OutlineStyle, Snapshot, TreeRequest, Viewport};
pub use page::uploads::Uploaded;
pub use page::{Acted, Page, check_url_scheme};
pub use recordings::gif::{
    GifMode, GifOptions, GifSaved, GifStatus, MAX_FRAMES, Mark, Overlay, Rendering,
};
pub use recordings::insights::{INSIGHTS, InsightSet, TraceReport};
pub use recordings::trace::StoppedTrace;
pub use recordings::{
    BodyOptions, CaptureStarted, CaptureSummary, ConsoleKind, ConsolePage, ConsoleRead,
    ConsoleRecord, ConsoleStopped, NetworkBody, NetworkFilter, NetworkOptions, NetworkRecord,
    NetworkStopped,
};

/// The longest time limit a call may have (a day), as the tools' schemas declare it.
pub const LONGEST_LIMIT: f64 = 86_400.0;

/// Seconds as a time limit, within 0 and `LONGEST_LIMIT`.
pub fn seconds(timeout: f64) -> std::time::Duration {
    let timeout = if timeout.is_finite() { timeout } else { 0.0 };
    std::time::Duration::from_secs_f64(timeout.clamp(0.0, LONGEST_LIMIT))
}
