//! The `chrome` face: the Chrome MCP Server's tools with its names, parameters and
//! defaults (the legacy surface and the newer tools), answering as it does: the payload
//! JSON as text (`reply.rs`). Tab and window ids are integers, stable for a tab's life
//! (over the extension link, Chrome's own). Each MCP session has its own current tab:
//! a tool without `tabId` acts there, so agents sharing a browser stay out of each
//! other's tabs.

mod capture;
mod data;
mod input;
mod network;
mod page_tools;
mod performance;
mod pick;
mod read;
mod recording;
mod reply;
mod routes;
mod script;
mod tabs;
mod userscript;

use engine::Locator;

use crate::face::{Call, Face, Hints, QuietKeys, ToolDef, ToolError};
use crate::params::NoParams;
use crate::tool;

/// The original declares no hints; these say what each kind of tool does.
mod hints {
    use super::Hints;

    const fn hints(read_only: bool, destructive: bool, idempotent: bool) -> Hints {
        Hints {
            read_only,
            destructive,
            idempotent,
            open_world: true,
        }
    }

    pub const READ: Hints = hints(true, false, true);
    pub const ACT: Hints = hints(false, true, false);
    pub const WRITE: Hints = hints(false, false, false);
    /// Records what happens in a tab, acting on nothing outside tabwire.
    pub const RECORD: Hints = Hints {
        open_world: false,
        ..WRITE
    };
}

use hints::{ACT, READ, RECORD, WRITE};

pub const FACE: Face = Face {
    tool_prefixes: &["chrome_"],
    name: "chrome",
    tools: TOOLS,
    instructions: "tabwire drives a Chromium browser with the Chrome MCP Server's tools. Each MCP session has its \
        own current tab: tools without tabId act there. Read a page with chrome_read_page and act on its refs \
        with chrome_click_element, chrome_fill_or_select or chrome_computer.",
    // The Chrome MCP Server serves tools only.
    guides: &[],
    lists_prompts: false,
    // The original has no wait tool of its own (a click or navigation waits).
    core: &[
        "chrome_navigate",
        "chrome_read_page",
        "chrome_click_element",
        "chrome_fill_or_select",
        "chrome_keyboard",
        "chrome_screenshot",
        "get_windows_and_tabs",
        "chrome_switch_tab",
        "chrome_javascript",
    ],
    page_tool_runner: Some("chrome_call_page_tool"),
    judge: reply::judge,
    write: reply::write,
    output_schema: |_| None,
    every_hint: false,
    // Where a tool names no limit: long enough for a page to load.
    default_time_limit: std::time::Duration::from_secs(30),
    // Its replies carry no envelope: only the flags that say it worked are left out.
    quiet: QuietKeys {
        never: &["success", "ok"],
        unless_true: &[],
    },
};

pub const TOOLS: &[ToolDef] = &[
    // Windows and tabs.
    tool!(
        "get_windows_and_tabs",
        "browser",
        READ,
        NoParams,
        tabs::get_windows_and_tabs,
        "Get all currently open browser windows and tabs"
    ),
    tool!(
        "chrome_navigate",
        "browser",
        ACT,
        tabs::Navigate,
        tabs::navigate,
        "Open a URL (a new tab unless tabId), refresh, or go back/forward (url \"back\"/\"forward\"); waits for the load, says where it landed"
    ),
    tool!(
        "chrome_close_tabs",
        "browser",
        ACT,
        tabs::CloseTabs,
        tabs::close_tabs,
        "Close tabs by id, by window, or by URL; default: this session's tab"
    ),
    tool!(
        "chrome_switch_tab",
        "browser",
        WRITE,
        tabs::SwitchTab,
        tabs::switch_tab,
        "Switch to a tab: it becomes this session's tab and comes to the front"
    ),
    tool!(
        "chrome_move_tab",
        "browser",
        ACT,
        tabs::MoveTab,
        tabs::move_tab,
        "Move a tab to another window (windowId) or a new one (newWindow), without reloading it"
    ),
    tool!(
        "chrome_go_back_or_forward",
        "browser",
        ACT,
        tabs::BackOrForward,
        tabs::go_back_or_forward,
        "Navigate back or forward in the tab's history"
    ),
    // Screenshots.
    tool!(
        "chrome_screenshot",
        "capture",
        WRITE,
        capture::Screenshot,
        capture::screenshot,
        "Screenshot the page (full by default), an element or the viewport: a PNG under the output dir; the image itself with storeBase64"
    ),
    // Network.
    tool!(
        "chrome_network_capture_start",
        "network",
        WRITE,
        network::CaptureStart,
        network::capture_start,
        "Capture the tab's requests (headers, no bodies); url opens a page once capturing"
    ),
    tool!(
        "chrome_network_capture_stop",
        "network",
        WRITE,
        network::CaptureStop,
        network::capture_stop,
        "Stop capturing; the requests, with headers common to all said once"
    ),
    tool!(
        "chrome_network_debugger_start",
        "network",
        WRITE,
        network::CaptureStart,
        network::debugger_start,
        "Capture the tab's requests with response bodies (up to 1 MiB each)"
    ),
    tool!(
        "chrome_network_debugger_stop",
        "network",
        WRITE,
        network::CaptureStop,
        network::debugger_stop,
        "Stop the capture and return the requests with their response bodies"
    ),
    tool!(
        "chrome_network_capture",
        "network",
        WRITE,
        network::Capture,
        network::capture,
        "Start or stop a network capture (needResponseBody keeps bodies)"
    ),
    tool!(
        "chrome_network_request",
        "network",
        ACT,
        network::Request,
        network::request,
        "Send an HTTP request from the page (its origin, cookies); returns status, headers, body"
    ),
    tool!(
        "chrome_network_route",
        "network",
        ACT,
        routes::NetworkRoute,
        routes::network_route,
        "Route requests whose URL matches (glob or /regex/): fulfill with a response, abort, or continue with headers; list and remove routes"
    ),
    // Reading.
    tool!(
        "chrome_read_page",
        "read",
        READ,
        read::ReadPage,
        read::read_page,
        "The page as an outline, a node a line (role \"name\" [ref=ref_N]); refs act in the input tools; frames and shadow DOM included; viewportOnly: false for the whole page"
    ),
    tool!(
        "chrome_get_web_content",
        "read",
        READ,
        read::WebContent,
        read::get_web_content,
        "The page's main content (not menus, footers) as text with metadata, or cleaned HTML (format: html)"
    ),
    tool!(hidden "chrome_get_interactive_elements", "read", READ, read::InteractiveElements, read::get_interactive_elements,
        "The page's controls with refs and coordinates (chrome_read_page is the better tool)"),
    tool!(
        pretty "search_tabs_content",
        "read",
        READ,
        read::SearchTabs,
        read::search_tabs_content,
        "Find the open tabs whose content matches the query by meaning or exact identifier, with the passage that matched"
    ),
    // Input.
    tool!(
        "chrome_computer",
        "input",
        ACT,
        input::Computer,
        input::computer,
        "Mouse and keyboard: click, drag, scroll, hover, type, keys, fill, wait, resize, zoom, screenshot; aim by ref or viewport coordinates"
    ),
    tool!(
        "chrome_click_element",
        "input",
        ACT,
        input::ClickElement,
        input::click_element,
        "Click by ref, CSS selector, XPath or point (hit-tested: the click lands on it)"
    ),
    tool!(
        "chrome_fill_or_select",
        "input",
        ACT,
        input::FillOrSelect,
        input::fill_or_select,
        "Fill a field, pick a select option (value or text), or set a checkbox/radio; by ref or selector"
    ),
    tool!(
        "chrome_keyboard",
        "input",
        ACT,
        input::Keyboard,
        input::keyboard,
        "Press keys and chords (\"Enter\", \"Ctrl+A\", \"A,B,C\"); text that names no key is typed"
    ),
    tool!(
        "chrome_upload_file",
        "input",
        ACT,
        input::UploadFile,
        input::upload_file,
        "Put a file (under an allowed upload root) on a file input"
    ),
    // Data.
    tool!(
        pretty "chrome_history",
        "data",
        READ,
        data::History,
        data::history,
        "Search history by text and time (ISO dates, \"3 days ago\", today, yesterday, now)"
    ),
    tool!(
        pretty "chrome_bookmark_search",
        "data",
        READ,
        data::BookmarkSearch,
        data::bookmark_search,
        "Search bookmarks by title and URL, in a folder path if given"
    ),
    tool!(
        pretty "chrome_bookmark_add",
        "data",
        WRITE,
        data::BookmarkAdd,
        data::bookmark_add,
        "Bookmark a page (default: this session's) in a folder path; createFolder makes it"
    ),
    tool!(
        pretty "chrome_bookmark_delete",
        "data",
        ACT,
        data::BookmarkDelete,
        data::bookmark_delete,
        "Delete bookmarks by id or URL (each saved to a backup first)"
    ),
    tool!(
        "chrome_handle_download",
        "data",
        READ,
        data::HandleDownload,
        data::handle_download,
        "Wait for a download the page started (even before this call) and say where the file is"
    ),
    // Scripts.
    tool!(
        "chrome_javascript",
        "script",
        ACT,
        script::Javascript,
        script::javascript,
        "Run JavaScript in the tab as an async function body (await, return); returns its result"
    ),
    tool!(
        "chrome_list_page_tools",
        "script",
        READ,
        page_tools::ListPageTools,
        page_tools::list_page_tools,
        "List the tools the tab's page offers agents (WebMCP), in the page's own words"
    ),
    tool!(
        "chrome_call_page_tool",
        "script",
        ACT,
        page_tools::CallPageTool,
        page_tools::call_page_tool,
        "Run one of the page's own tools with its arguments; returns what the page gave back"
    ),
    tool!(
        "chrome_gif_recorder",
        "capture",
        RECORD,
        recording::GifRecorder,
        recording::gif_recorder,
        "Record the tab as an animated GIF: start (fixed fps) or auto_start (a frame after each action, clicks marked); stop saves it"
    ),
    tool!(
        "chrome_request_element_selection",
        "input",
        READ,
        pick::RequestSelection,
        pick::request_element_selection,
        "Ask the person to click the elements you name (a panel says which); answers a ref for each, frames included"
    ),
    tool!(hidden "chrome_userscript", "script", ACT, userscript::Userscript, userscript::userscript,
        "Keep a script for pages whose URL matches: it runs on every load until removed (create, list, get, enable, disable, remove)"),
    // Performance.
    tool!(
        "performance_start_trace",
        "performance",
        ACT,
        performance::StartTrace,
        performance::start_trace,
        "Start a performance trace of this tab (reload: record its load; autoStop: stop after durationMs)"
    ),
    tool!(
        "performance_stop_trace",
        "performance",
        WRITE,
        performance::StopTrace,
        performance::stop_trace,
        "Stop the trace, save it as trace-event JSON (fullPath), and report LCP, CLS, INP, TBT per navigation"
    ),
    tool!(
        "performance_analyze_insight",
        "performance",
        READ,
        performance::AnalyzeInsight,
        performance::analyze_insight,
        "One insight of the last trace as a short report (LCPBreakdown, CLSCulprits, RenderBlocking, DocumentLatency, …)"
    ),
    tool!(
        "chrome_console",
        "script",
        READ,
        script::Console,
        script::console,
        "The page's console output: what it logged so far, or (mode: buffer) a buffer kept from now on"
    ),
    tool!(
        "chrome_handle_dialog",
        "script",
        ACT,
        script::HandleDialog,
        script::handle_dialog,
        "Accept or dismiss an open alert, confirm or prompt"
    ),
    tool!(hidden "chrome_inject_script", "script", ACT, script::InjectScript, script::inject_script,
        "Leave a script in the tab (now and on every later page), in the page's world or its own"),
    tool!(hidden "chrome_send_command_to_inject_script", "script", ACT, script::SendCommand, script::send_command,
        "Send an injected script a command (a DOM event) and return its answer"),
];

/// A `tabId` argument as the engine's tab handle.
pub fn tab_arg(tab: &Option<i64>) -> Option<String> {
    tab.map(|id| id.to_string())
}

/// The tab a call names: its `tabId`, else the selected tab of its `windowId`, else
/// None (this session's tab).
pub async fn target_tab(
    call: &Call,
    tab: &Option<i64>,
    window: Option<i64>,
) -> Result<Option<String>, ToolError> {
    if let Some(tab) = tab_arg(tab) {
        return Ok(Some(tab));
    }
    let Some(window) = window else {
        return Ok(None);
    };
    let windows = call.session.windows().await?;
    let found = windows
        .iter()
        .find(|w| w.window_id == window as u64)
        .ok_or_else(|| {
            ToolError::param(
                "windowId",
                format!("no window {window}; get_windows_and_tabs lists them"),
            )
        })?;
    let tab = found
        .tabs
        .iter()
        .find(|t| t.active)
        .or(found.tabs.first())
        .ok_or_else(|| ToolError::param("windowId", format!("window {window} has no tab")))?;
    Ok(Some(tab.tab.handle.clone()))
}

/// The element a call names: its ref, else its selector (CSS, or XPath with
/// `selectorType: "xpath"`; a ref given where a selector goes means that element).
pub fn element(
    reference: Option<&str>,
    selector: Option<&str>,
    selector_type: &str,
) -> Result<Option<Locator>, ToolError> {
    if let Some(reference) = reference.filter(|r| !r.trim().is_empty()) {
        return Ok(Some(Locator::reference(reference.trim())));
    }
    let Some(selector) = selector.filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    if selector_type == "xpath" {
        return Ok(Some(Locator::xpath(selector)));
    }
    Ok(Some(Locator::css_or_ref(selector)?))
}
