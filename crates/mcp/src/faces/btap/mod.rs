//! The `btap` face: BrowserTap's 51 tools (and 11 of tabwire's own) with its parameter
//! names, types, defaults and annotations, answering in the `btap.result.v1` envelope. One row per tool; each
//! adapter sits beside its parameter struct in the file of its group.

mod args;
mod browser_data;
mod capture;
mod desktop;
mod emulation;
pub mod envelope;
mod extensions;
mod input;
mod page_tools;
mod performance;
mod raw;
mod read;
mod recording;
mod routes;
mod script;
mod setup;
mod tabs;
mod wait;

use crate::face::{Face, Guide, Hints, QuietKeys, ToolDef};
use crate::tool;

/// BrowserTap's hints, one set a kind of tool.
mod hints {
    use super::Hints;

    const fn hints(
        read_only: bool,
        destructive: bool,
        idempotent: bool,
        open_world: bool,
    ) -> Hints {
        Hints {
            read_only,
            destructive,
            idempotent,
            open_world,
        }
    }

    /// Reads this server's own state.
    pub const LOCAL: Hints = hints(true, false, true, false);
    /// Changes this server's own settings.
    pub const SETTING: Hints = hints(false, true, true, false);
    /// Reports on the browser link; not read-only (it may wake the link).
    pub const STATUS: Hints = hints(false, false, true, true);
    /// Reads the live browser.
    pub const READ: Hints = hints(true, false, true, true);
    /// Changes the browser or a page.
    pub const ACT: Hints = hints(false, true, false, true);
    /// Writes, without destroying anything.
    pub const WRITE: Hints = hints(false, false, false, true);
    /// Changes how a page is shown, reversibly; the same call leaves the same state.
    pub const TUNE: Hints = hints(false, false, true, true);
    /// Records what happens in a tab, acting on nothing outside tabwire.
    pub const RECORD: Hints = hints(false, false, false, false);
}

use hints::{ACT, LOCAL, READ, RECORD, SETTING, STATUS, TUNE, WRITE};

pub const FACE: Face = Face {
    tool_prefixes: &["page_", "browser_"],
    name: "btap",
    tools: TOOLS,
    instructions: include_str!("guides/instructions.md"),
    guides: GUIDES,
    // BrowserTap's server answers prompts/list, with none.
    lists_prompts: true,
    core: &[
        "open_url",
        "scan_page",
        "page_click",
        "page_type",
        "page_press",
        "page_select",
        "wait_for",
        "capture_page_screenshot",
        "list_tabs",
        "switch_tab",
        "execute_js",
    ],
    page_tool_runner: Some("call_page_tool"),
    judge: envelope::judge,
    write: envelope::write,
    output_schema: envelope::output_schema,
    every_hint: true,
    default_time_limit: std::time::Duration::from_secs(15),
    quiet: QuietKeys {
        // BrowserTap's envelope furniture, flags that only say it worked, and its account
        // of every input (which tab: the header says; the CDP replies; the bot-check
        // bookkeeping).
        never: &[
            "result_contract",
            "version",
            "target",
            "diagnostics",
            "legacy",
            "error",
            "error_code",
            "retryable",
            "data",
            "ok",
            "success",
            "input_mode",
            "foreground_changed",
            "session_id",
            "active_session_id",
            "input_commands_dispatched",
            "challenge_check",
            "attempts",
        ],
        unless_true: &["challenge_detected", "input_dispatched", "manual_blocked"],
    },
};

/// BrowserTap's two resources, at its URIs, written for tabwire: how the tools go
/// together, and what to do when a call fails.
const GUIDES: &[Guide] = &[
    Guide {
        uri: "browsertap://agent/workflow",
        name: "agent_workflow",
        description: "How to work with these tools: picking and owning tabs, reading, locators and refs, frames, acting, waiting, dialogs, files, cleanup.",
        text: include_str!("guides/workflow.md"),
    },
    Guide {
        uri: "browsertap://agent/recovery",
        name: "agent_recovery",
        description: "When a call fails: reading retry verdicts and delivery facts, collecting outcomes by operation_id, each error code's next step, browser and link problems.",
        text: include_str!("guides/recovery.md"),
    },
];

pub const TOOLS: &[ToolDef] = &[
    // Setup.
    tool!(
        "get_setup_status",
        "browser",
        STATUS,
        setup::NoArgs,
        setup::get_setup_status,
        "Versions, browser found, link state, tool counts and capability groups. Does not launch the browser."
    ),
    tool!(
        "get_automation_profile",
        "browser",
        LOCAL,
        setup::NoArgs,
        setup::get_automation_profile,
        "Whether this session runs in lab or safe."
    ),
    tool!(
        "set_automation_profile",
        "browser",
        SETTING,
        setup::SetProfile,
        setup::set_automation_profile,
        "Switch this session between lab and safe (never below what the server was started with; not persisted)."
    ),
    // Tabs.
    tool!(
        "list_tabs",
        "browser",
        READ,
        setup::NoArgs,
        tabs::list_tabs,
        "List tabs with their session_id handles; default marks this session's tab."
    ),
    tool!(
        "search_tabs",
        "browser",
        READ,
        tabs::SearchTabs,
        tabs::search_tabs,
        "Find the open tabs whose content means the query (any language) or holds an exact identifier, with the passage that matched (tabwire)."
    ),
    tool!(
        "list_all_tabs",
        "browser",
        READ,
        args::SessionOnly,
        tabs::list_all_tabs,
        "List every page target, including chrome-extension:// pages."
    ),
    tool!(
        "emulate",
        "browser",
        TUNE,
        emulation::Emulate,
        emulation::emulate,
        "Emulate a device on a tab: viewport, user agent, network, CPU, geolocation, colour scheme, extra headers. Each call sets them all; what it leaves out is cleared (tabwire)."
    ),
    tool!(
        "gif_recorder",
        "browser",
        RECORD,
        recording::GifRecorder,
        recording::gif_recorder,
        "Record a tab as an animated GIF: start (fixed fps) or auto_start (a frame after each action, clicks marked); stop saves it and shows the last frame (tabwire)."
    ),
    tool!(
        "performance_trace_start",
        "browser",
        ACT,
        performance::Start,
        performance::start,
        "Start a performance trace of a tab; reload (default) records its whole load (tabwire)."
    ),
    tool!(
        "performance_trace_stop",
        "browser",
        WRITE,
        performance::Stop,
        performance::stop,
        "Stop the trace, save it as trace-event JSON, and report LCP, CLS, INP, TBT per navigation (tabwire)."
    ),
    tool!(
        "performance_trace_insight",
        "browser",
        LOCAL,
        performance::Insight,
        performance::insight,
        "One insight of the last trace as a short report: LCPBreakdown, CLSCulprits, RenderBlocking, DocumentLatency, … (tabwire)."
    ),
    tool!(
        "close_tabs",
        "browser",
        ACT,
        tabs::CloseTabs,
        tabs::close_tabs,
        "Close tabs this task owns (owner_id from open_new_tab)."
    ),
    tool!(
        "switch_tab",
        "browser",
        ACT,
        tabs::SwitchTab,
        tabs::switch_tab,
        "Set this session's default tab for later calls."
    ),
    tool!(
        "activate_tab",
        "browser",
        ACT,
        args::SessionOnly,
        tabs::activate_tab,
        "Bring a tab to the foreground; on_screen says whether the page is now visible."
    ),
    tool!(
        "open_url",
        "page",
        ACT,
        tabs::OpenUrl,
        tabs::open_url,
        "Navigate the tab and wait for it to load."
    ),
    tool!(
        "open_new_tab",
        "browser",
        ACT,
        tabs::OpenNewTab,
        tabs::open_new_tab,
        "Open a background tab owned by this task. Pass operation_id to recover a create exactly once. The session's default tab does not change: pass the returned session_id, or switch_tab."
    ),
    // Reading and waiting.
    tool!(
        "scan_page",
        "page",
        ACT,
        read::ScanPage,
        read::scan_page,
        "Read the page as simplified HTML (or text) with link refs, collapsed lists, readiness and actionable targets with locators."
    ),
    tool!(
        "scroll_page",
        "page",
        ACT,
        wait::ScrollPage,
        wait::scroll_page,
        "Scroll and report the new position."
    ),
    tool!(
        "wait_for",
        "page",
        ACT,
        wait::WaitFor,
        wait::wait_for,
        "Wait until exactly one condition holds (or, with gone, stops holding)."
    ),
    tool!(
        "wait_for_url",
        "page",
        READ,
        wait::WaitForUrl,
        wait::wait_for_url,
        "Wait for the URL to match and the document to finish loading."
    ),
    // Input.
    tool!(
        "page_click",
        "page",
        ACT,
        input::PageClick,
        input::page_click,
        "Click an element (hit-tested: obscured/outside_viewport are reported, nothing is clicked) or a point."
    ),
    tool!(
        "page_type",
        "page",
        ACT,
        input::PageType,
        input::page_type,
        "Type text into a field."
    ),
    tool!(
        "page_select",
        "page",
        ACT,
        input::PageSelect,
        input::page_select,
        "Choose options in a <select>, listbox or combobox by label or value, as a user would; answers what is selected now (tabwire)."
    ),
    tool!(
        "page_fill",
        "page",
        ACT,
        input::PageFill,
        input::page_fill,
        "Fill several fields in one call, each as a user gives its value: text typed, a select's option chosen, a box ticked, a slider moved (tabwire)."
    ),
    tool!(
        "page_press",
        "page",
        ACT,
        input::PagePress,
        input::page_press,
        "Press a key or modifier chord."
    ),
    tool!(
        "page_drag",
        "page",
        ACT,
        input::PageDrag,
        input::page_drag,
        "Drag between two viewport points in one press-move-release sequence."
    ),
    tool!(
        "upload_files",
        "page",
        ACT,
        input::UploadFiles,
        input::upload_files,
        "Set files on a file input. Only files under the configured upload roots can be read."
    ),
    // Script and dialogs.
    tool!(
        "execute_js",
        "page",
        ACT,
        script::ExecuteJs,
        script::execute_js,
        "Run JavaScript in the page. A late result is collected with get_execute_js_result, never re-run."
    ),
    tool!(
        "get_execute_js_result",
        "page",
        WRITE,
        script::GetResult,
        script::get_execute_js_result,
        "Read (or briefly wait for) an operation's result. Never replays it."
    ),
    // A page's own tools (WebMCP).
    tool!(
        "list_page_tools",
        "page",
        READ,
        page_tools::ListPageTools,
        page_tools::list_page_tools,
        "List the tools the tab's page offers agents (WebMCP): names, descriptions and input schemas, in the page's own words."
    ),
    tool!(
        "call_page_tool",
        "page",
        ACT,
        page_tools::CallPageTool,
        page_tools::call_page_tool,
        "Run one of the page's own tools with its arguments; returns what the page gave back (page content)."
    ),
    tool!(
        "handle_dialog",
        "page",
        ACT,
        script::HandleDialog,
        script::handle_dialog,
        "Inspect or answer a dialog left open on a tab."
    ),
    tool!(
        "resolve_leave_dialog",
        "page",
        ACT,
        args::SessionOnly,
        script::resolve_leave_dialog,
        "Accept an open leave-page prompt through the protocol; never sends OS keys (requires_user_action instead)."
    ),
    // Capture.
    tool!(
        "capture_page_screenshot",
        "page",
        ACT,
        capture::Screenshot,
        capture::screenshot,
        "Screenshot as MCP image content, with image_width/image_height in device pixels."
    ),
    tool!(
        "save_pdf",
        "browser",
        ACT,
        capture::SavePdf,
        capture::save_pdf,
        "Print the page to a validated PDF, written atomically under the output dir."
    ),
    // Browser data.
    tool!(
        "get_cookies",
        "browser",
        READ,
        browser_data::GetCookies,
        browser_data::get_cookies,
        "Read the cookies the page's URL sends, HttpOnly included."
    ),
    tool!(
        "set_cookies",
        "browser",
        ACT,
        browser_data::SetCookies,
        browser_data::set_cookies,
        "Write cookies into the browser profile through CDP; without url or domain they belong to the current page."
    ),
    tool!(
        "delete_cookies",
        "browser",
        ACT,
        browser_data::DeleteCookies,
        browser_data::delete_cookies,
        "Delete cookies by name, scoped by domain/path or url."
    ),
    tool!(
        "storage_get",
        "browser",
        READ,
        browser_data::StorageGet,
        browser_data::storage_get,
        "Read localStorage or sessionStorage, one key or a page of keys (next_offset, truncated)."
    ),
    tool!(
        "storage_set",
        "browser",
        ACT,
        browser_data::StorageSet,
        browser_data::storage_set,
        "Write one storage value and verify it by reading it back (quota failures are reported)."
    ),
    tool!(
        "download_file",
        "browser",
        ACT,
        browser_data::DownloadFile,
        browser_data::download_file,
        "Download through the browser (with its cookies); returns the verified path, size, sha256 and content type."
    ),
    tool!(
        "set_site_permission",
        "browser",
        ACT,
        browser_data::SetPermission,
        browser_data::set_site_permission,
        "Set one permission for one origin as a lease; the prior setting is restored on expiry, reset or restart."
    ),
    tool!(
        "reset_site_permissions",
        "browser",
        ACT,
        browser_data::ResetPermissions,
        browser_data::reset_site_permissions,
        "Restore matching permission leases now (all of them when both are omitted)."
    ),
    // Network and console.
    tool!(
        "network_capture_start",
        "browser",
        ACT,
        browser_data::NetworkStart,
        browser_data::network_capture_start,
        "Start recording requests and responses on a tab (bounded ring, optional bodies)."
    ),
    tool!(
        "network_capture_stop",
        "browser",
        ACT,
        browser_data::NetworkStop,
        browser_data::network_capture_stop,
        "Stop the capture and return its records, filtered. An invalid url_pattern leaves it running."
    ),
    tool!(
        "console_capture_start",
        "browser",
        ACT,
        browser_data::ConsoleStart,
        browser_data::console_capture_start,
        "Start collecting console calls and uncaught exceptions on a tab."
    ),
    tool!(
        "get_console_messages",
        "browser",
        ACT,
        browser_data::ConsoleMessages,
        browser_data::get_console_messages,
        "Page through (or clear) the console buffer."
    ),
    tool!(
        "console_capture_stop",
        "browser",
        ACT,
        browser_data::ConsoleStop,
        browser_data::console_capture_stop,
        "Return the remaining console messages and stop collecting."
    ),
    tool!(
        "network_route",
        "browser",
        ACT,
        routes::NetworkRoute,
        routes::network_route,
        "Route the tab's (or this session's) requests whose URL matches: fulfill with a response, abort, or continue with headers set; list and remove routes. They last until removed or the session ends."
    ),
    // Raw CDP.
    tool!(
        "cdp_command",
        "browser",
        ACT,
        raw::CdpCommand,
        raw::cdp_command,
        "Send one raw CDP command to a tab. What the tools refuse (high-risk methods, file: URLs, files outside the upload roots) is refused here too, before dispatch."
    ),
    tool!(
        "cdp_batch",
        "browser",
        ACT,
        raw::CdpBatch,
        raw::cdp_batch,
        "Send several CDP commands in order ({\"cmd\":\"batch\",\"commands\":[{\"cmd\":\"cdp\",\"method\",\"params\"}, {\"cmd\":\"tabs\"}, {\"cmd\":\"cookies\"}]}, \"$N.path\" placeholders); the whole batch passes the policy before the first runs."
    ),
    tool!(
        "debugger_targets",
        "browser",
        READ,
        args::SessionOnly,
        raw::debugger_targets,
        "List every CDP target: pages, iframes, workers, extension pages."
    ),
    // Extensions and bookmarks (through the tabwire extension).
    tool!(
        "extension_path",
        "browser",
        LOCAL,
        setup::NoArgs,
        extensions::extension_path,
        "Folder of the tabwire extension, to load unpacked, and its id."
    ),
    tool!(
        "list_extensions",
        "browser",
        READ,
        args::SessionOnly,
        extensions::list_extensions,
        "Installed extensions: id, name, enabled, type, version."
    ),
    tool!(
        "set_extension_enabled",
        "browser",
        ACT,
        extensions::SetEnabled,
        extensions::set_extension_enabled,
        "Enable or disable an installed extension."
    ),
    tool!(
        "uninstall_extension",
        "browser",
        ACT,
        extensions::Uninstall,
        extensions::uninstall_extension,
        "Ask the browser to remove another extension (it may require a user gesture)."
    ),
    tool!(
        "call_extension",
        "browser",
        ACT,
        extensions::CallExtension,
        extensions::call_extension,
        "Send a JSON message to another extension that allows tabwire (externally_connectable)."
    ),
    tool!(
        "get_bookmarks",
        "browser",
        READ,
        args::SessionOnly,
        extensions::get_bookmarks,
        "The bookmark tree."
    ),
    tool!(
        "create_bookmark",
        "browser",
        WRITE,
        extensions::CreateBookmark,
        extensions::create_bookmark,
        "Create a bookmark, or a folder without url."
    ),
    tool!(
        "remove_bookmark",
        "browser",
        ACT,
        extensions::RemoveBookmark,
        extensions::remove_bookmark,
        "Save the subtree as a backup (backup_path, backup_sha256), then remove it; a failed backup removes nothing."
    ),
    // Desktop.
    tool!(
        "inspect_native_file_dialog",
        "desktop",
        WRITE,
        desktop::Inspect,
        desktop::inspect_native_file_dialog,
        "Inspect a native file dialog owned by the browser (Windows only; answers unsupported elsewhere). Needs desktop_opt_in=true."
    ),
    tool!(
        "cancel_native_file_dialog",
        "desktop",
        ACT,
        desktop::Cancel,
        desktop::cancel_native_file_dialog,
        "Cancel a native file dialog by its ticket (Windows only; answers unsupported elsewhere). Needs desktop_opt_in=true."
    ),
];
