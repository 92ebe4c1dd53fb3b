//! The `btap` face: BrowserTap's tool surface, answering in `btap.result.v1`.

mod browser_data;
mod capture;
mod extensions;
mod input;
mod raw;
mod read;
mod script;
mod tabs;

use crate::face::{ACT, DESTROY, READ, ToolDef};
use crate::params::{Kind, SESSION, opt, req, timeout};

macro_rules! tool {
    ($name:literal, $group:literal, $hints:expr, $params:expr, $run:path, $doc:literal) => {
        ToolDef {
            name: $name,
            group: $group,
            description: $doc,
            params: $params,
            hints: $hints,
            run: |call| Box::pin($run(call)),
        }
    };
}

const LOCATOR_DOC: &str = "CSS string, or {css|role(+name)|text|label, exact?, frame?: [iframe locators], shadow?: [host CSS]}";

pub const TOOLS: &[ToolDef] = &[
    // Tabs and setup.
    tool!(
        "get_setup_status",
        "setup",
        READ,
        &[],
        tabs::get_setup_status,
        "Versions, browser found, link state, tool counts and capability groups. Does not launch the browser."
    ),
    tool!(
        "get_automation_profile",
        "setup",
        READ,
        &[],
        tabs::get_automation_profile,
        "Whether this server runs in lab or safe."
    ),
    tool!(
        "set_automation_profile",
        "setup",
        ACT,
        &[req("mode", Kind::Choice(&["lab", "safe"]), "")],
        tabs::set_automation_profile,
        "Switch this server between lab and safe (not persisted)."
    ),
    tool!(
        "list_tabs",
        "tabs",
        READ,
        &[],
        tabs::list_tabs,
        "List tabs with their session_id handles; default marks this session's tab."
    ),
    tool!(
        "list_all_tabs",
        "tabs",
        READ,
        &[SESSION],
        tabs::list_all_tabs,
        "List every page target, including chrome-extension:// pages."
    ),
    tool!(
        "switch_tab",
        "tabs",
        ACT,
        &[
            SESSION,
            opt(
                "url_pattern",
                Kind::Str,
                "substring of the URL; must match one tab"
            ),
            opt(
                "browser",
                Kind::Str,
                "chrome, edge or opera (ignored: one browser per server)"
            ),
            opt(
                "activate",
                Kind::Bool,
                "also bring it to the front; default false"
            ),
        ],
        tabs::switch_tab,
        "Set this session's default tab for later calls."
    ),
    tool!(
        "activate_tab",
        "tabs",
        ACT,
        &[SESSION],
        tabs::activate_tab,
        "Bring a tab to the foreground; on_screen says whether the page is now visible."
    ),
    tool!(
        "open_url",
        "tabs",
        ACT,
        &[
            req("url", Kind::Str, "http(s), data: or about:blank"),
            SESSION,
            timeout("seconds to wait for load; default 15"),
            opt(
                "beforeunload",
                Kind::Choice(&["dismiss", "accept"]),
                "answer to a leave-page prompt; default dismiss"
            ),
            opt("intent_leave", Kind::Bool, "false forces page preservation"),
        ],
        tabs::open_url,
        "Navigate the tab and wait for it to load."
    ),
    tool!(
        "open_new_tab",
        "tabs",
        ACT,
        &[
            req("url", Kind::Str, ""),
            timeout("default 15"),
            opt("active", Kind::Bool, "foreground; default false"),
            SESSION,
            opt(
                "owner_id",
                Kind::Str,
                "groups tabs under one task owner; generated if omitted"
            ),
            opt(
                "operation_id",
                Kind::Str,
                "recover an earlier create without replaying it"
            ),
            opt(
                "client_id",
                Kind::Str,
                "browser selector (one browser per server)"
            ),
        ],
        tabs::open_new_tab,
        "Open a background tab owned by this task. Pass operation_id to recover a create exactly once."
    ),
    tool!(
        "close_tabs",
        "tabs",
        DESTROY,
        &[
            req("tab_id", Kind::Ids, "tab id, client:tab handle, or a list"),
            SESSION,
            opt("owner_id", Kind::Str, "required while only_if_agent_owned"),
            opt(
                "only_if_agent_owned",
                Kind::Bool,
                "default true: refuse tabs this owner did not open"
            ),
        ],
        tabs::close_tabs,
        "Close tabs this task owns (owner_id from open_new_tab)."
    ),
    // Reading.
    tool!(
        "scan_page",
        "read",
        READ,
        &[
            SESSION,
            opt(
                "text_only",
                Kind::Bool,
                "plain text instead of simplified HTML"
            ),
            opt(
                "cutlist",
                Kind::Bool,
                "collapse long repeated lists; default true"
            ),
            opt(
                "maxchars",
                Kind::Int {
                    min: 100,
                    max: 2_000_000
                },
                "default 35000"
            ),
            opt(
                "instruction",
                Kind::Str,
                "what you are looking for (echoed)"
            ),
            opt(
                "extra_js",
                Kind::Str,
                "script run before the scan; may change the page"
            ),
            timeout("default 15"),
            opt("frame", Kind::List, "iframe locator path to scan inside"),
            opt(
                "max_targets",
                Kind::Int { min: 0, max: 200 },
                "controls listed in observation.targets; default 80"
            ),
        ],
        read::scan_page,
        "Read the page as simplified HTML (or text) with link refs, collapsed lists, readiness and actionable targets with locators."
    ),
    tool!(
        "scroll_page",
        "read",
        ACT,
        &[
            opt(
                "to",
                Kind::Locator,
                "bottom (default), top, a pixel offset, or a selector"
            ),
            SESSION,
            timeout("default 15"),
        ],
        read::scroll_page,
        "Scroll and report the new position."
    ),
    tool!(
        "wait_for",
        "wait",
        READ,
        &[
            opt("selector", Kind::Locator, LOCATOR_DOC),
            opt("text", Kind::Str, "substring of the body text"),
            opt("url_pattern", Kind::Str, "regex or substring of the URL"),
            opt(
                "js",
                Kind::Str,
                "expression to become truthy (may have side effects)"
            ),
            opt("gone", Kind::Bool, "wait for the condition to stop holding"),
            timeout("default 15"),
            SESSION,
        ],
        read::wait_for,
        "Wait until exactly one condition holds (or, with gone, stops holding)."
    ),
    tool!(
        "wait_for_url",
        "wait",
        READ,
        &[
            req("url_pattern", Kind::Str, "regex or substring"),
            timeout("default 15"),
            opt(
                "wait_ready",
                Kind::Bool,
                "also require readyState complete; default true"
            ),
            SESSION,
        ],
        read::wait_for_url,
        "Wait for the URL to match and the document to finish loading."
    ),
    // Input.
    tool!(
        "page_click",
        "input",
        ACT,
        &[
            opt("selector", Kind::Locator, LOCATOR_DOC),
            opt(
                "x",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                "viewport CSS px (with y, instead of selector)"
            ),
            opt(
                "y",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                ""
            ),
            opt(
                "offset_x",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                "from the element's left edge"
            ),
            opt(
                "offset_y",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                "from the element's top edge"
            ),
            opt(
                "button",
                Kind::Choice(&["left", "right", "middle"]),
                "default left"
            ),
            opt("clicks", Kind::Int { min: 1, max: 3 }, "default 1"),
            SESSION,
            timeout("default 15"),
        ],
        input::page_click,
        "Click an element (hit-tested: obscured/outside_viewport are reported, nothing is clicked) or a point."
    ),
    tool!(
        "page_type",
        "input",
        ACT,
        &[
            req("text", Kind::Str, ""),
            opt(
                "selector",
                Kind::Locator,
                "field; default: the focused element"
            ),
            opt(
                "clear",
                Kind::Bool,
                "replace the current value; default false"
            ),
            opt(
                "submit_key",
                Kind::Str,
                "key pressed afterwards, e.g. enter"
            ),
            SESSION,
            timeout("default 15"),
        ],
        input::page_type,
        "Type text into a field."
    ),
    tool!(
        "page_press",
        "input",
        ACT,
        &[
            req(
                "keys_csv",
                Kind::Str,
                "key or chord, e.g. enter or ctrl,shift,k"
            ),
            SESSION,
            timeout("default 15"),
        ],
        input::page_press,
        "Press a key or modifier chord."
    ),
    tool!(
        "page_drag",
        "input",
        ACT,
        &[
            req(
                "x1",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                ""
            ),
            req(
                "y1",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                ""
            ),
            req(
                "x2",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                ""
            ),
            req(
                "y2",
                Kind::Num {
                    min: -1e6,
                    max: 1e6
                },
                ""
            ),
            opt(
                "duration",
                Kind::Num {
                    min: 0.0,
                    max: 10.0
                },
                "seconds; default 0.3"
            ),
            opt(
                "button",
                Kind::Choice(&["left", "right", "middle"]),
                "default left"
            ),
            SESSION,
            timeout("default 15"),
        ],
        input::page_drag,
        "Drag between two viewport points in one press-move-release sequence."
    ),
    // Script.
    tool!(
        "execute_js",
        "script",
        DESTROY,
        &[
            req(
                "script",
                Kind::Str,
                "expression or body; use return or an async IIFE"
            ),
            SESSION,
            opt("no_monitor", Kind::Bool, "accepted for compatibility"),
            timeout("end-to-end deadline; default 15"),
            opt(
                "dialog_policy",
                Kind::Choice(&["dismiss", "accept", "manual"]),
                "default dismiss"
            ),
            opt(
                "wait",
                Kind::Bool,
                "false: return an operation_id at once; default true"
            ),
        ],
        script::execute_js,
        "Run JavaScript in the page. A late result is collected with get_execute_js_result, never re-run."
    ),
    tool!(
        "get_execute_js_result",
        "script",
        READ,
        &[
            req("operation_id", Kind::Str, ""),
            opt(
                "timeout",
                Kind::Num {
                    min: 0.0,
                    max: 120.0
                },
                "seconds to wait for a pending result; default 0"
            ),
        ],
        script::get_execute_js_result,
        "Read (or briefly wait for) an operation's result. Never replays it."
    ),
    tool!(
        "handle_dialog",
        "script",
        ACT,
        &[
            req(
                "action",
                Kind::Choice(&["manual", "accept", "dismiss"]),
                "manual only reports"
            ),
            opt("prompt_text", Kind::Str, "text for an accepted prompt"),
            SESSION,
            opt("timeout", Kind::Num { min: 0.0, max: 3.0 }, "default 3"),
        ],
        script::handle_dialog,
        "Inspect or answer a dialog left open on a tab."
    ),
    // Capture.
    tool!(
        "capture_page_screenshot",
        "capture",
        READ,
        &[
            SESSION,
            opt("tab_id", Kind::Id, "alias of session_id"),
            opt(
                "format",
                Kind::Choice(&["png", "jpeg", "webp"]),
                "default png"
            ),
            opt("full_page", Kind::Bool, "default false"),
            opt(
                "clip",
                Kind::Object,
                "{x, y, width, height, scale?} in CSS px"
            ),
            opt("quality", Kind::Int { min: 0, max: 100 }, "jpeg/webp only"),
            opt(
                "save_path",
                Kind::Str,
                "also write it here, relative to the output dir"
            ),
            opt(
                "return_base64",
                Kind::Bool,
                "also put base64 in the text; default false"
            ),
            timeout("default 20"),
        ],
        capture::screenshot,
        "Screenshot as MCP image content, with image_width/image_height in device pixels."
    ),
    tool!(
        "save_pdf",
        "capture",
        ACT,
        &[
            req("save_path", Kind::Str, "relative to the output dir"),
            SESSION,
            opt("landscape", Kind::Bool, "default false"),
            opt("print_background", Kind::Bool, "default true"),
            opt("prefer_css_page_size", Kind::Bool, "default true"),
            opt("scale", Kind::Num { min: 0.1, max: 2.0 }, "default 1.0"),
            opt("page_ranges", Kind::Str, "e.g. 1-3,5"),
            timeout("default 30"),
        ],
        capture::save_pdf,
        "Print the page to a validated PDF, written atomically under the output dir."
    ),
    // Browser data.
    tool!(
        "get_cookies",
        "browser",
        READ,
        &[SESSION, opt("tab_id", Kind::Id, "alias of session_id")],
        browser_data::get_cookies,
        "Read the cookies the page's URL sends, HttpOnly included."
    ),
    tool!(
        "set_cookies",
        "browser",
        ACT,
        &[
            req(
                "cookies",
                Kind::Any,
                "cookie object or list (or JSON text): name, value, url, domain, path, expires (Unix s), httpOnly, secure, sameSite"
            ),
            SESSION,
            opt("tab_id", Kind::Id, "alias of session_id"),
            timeout("default 20"),
        ],
        browser_data::set_cookies,
        "Write cookies into the browser profile through CDP; without url or domain they belong to the current page."
    ),
    tool!(
        "delete_cookies",
        "browser",
        DESTROY,
        &[
            req("name", Kind::Str, ""),
            opt("domain", Kind::Str, ""),
            opt("path", Kind::Str, ""),
            opt("url", Kind::Str, "default: the page's URL"),
            SESSION,
            opt("tab_id", Kind::Id, "alias of session_id"),
            timeout("default 20"),
        ],
        browser_data::delete_cookies,
        "Delete cookies by name, scoped by domain/path or url."
    ),
    tool!(
        "storage_get",
        "browser",
        READ,
        &[
            opt("key", Kind::Str, "omit to page through all keys"),
            opt("area", Kind::Choice(&["local", "session"]), "default local"),
            SESSION,
            timeout("default 30"),
            opt(
                "offset",
                Kind::Int {
                    min: 0,
                    max: 1_000_000
                },
                ""
            ),
            opt(
                "max_items",
                Kind::Int {
                    min: 1,
                    max: 10_000
                },
                "default 100"
            ),
            opt(
                "max_bytes",
                Kind::Int {
                    min: 1,
                    max: 16_777_216
                },
                "default 65536"
            ),
        ],
        browser_data::storage_get,
        "Read localStorage or sessionStorage, one key or a page of keys (next_offset, truncated)."
    ),
    tool!(
        "storage_set",
        "browser",
        ACT,
        &[
            req("key", Kind::Str, ""),
            req("value", Kind::Any, "non-strings are JSON-encoded"),
            opt("area", Kind::Choice(&["local", "session"]), "default local"),
            SESSION,
            timeout("default 30"),
        ],
        browser_data::storage_set,
        "Write one storage value and verify it by reading it back (quota failures are reported)."
    ),
    tool!(
        "network_capture_start",
        "network",
        ACT,
        &[
            SESSION,
            opt("include_bodies", Kind::Bool, "default true"),
            opt(
                "max_entries",
                Kind::Int { min: 10, max: 2000 },
                "ring size; default 500"
            ),
            opt(
                "max_body_bytes",
                Kind::Int {
                    min: 1024,
                    max: 2_097_152
                },
                "default 262144"
            ),
            opt(
                "body_timeout",
                Kind::Num {
                    min: 0.1,
                    max: 10.0
                },
                "seconds; default 5"
            ),
            timeout("default 10"),
        ],
        browser_data::network_capture_start,
        "Start recording requests and responses on a tab (bounded ring, optional bodies)."
    ),
    tool!(
        "network_capture_stop",
        "network",
        ACT,
        &[
            SESSION,
            opt("url_pattern", Kind::Str, "JavaScript RegExp"),
            opt("resource_type", Kind::Str, "e.g. Fetch, XHR, Document"),
            opt("status_min", Kind::Int { min: 100, max: 599 }, ""),
            opt("status_max", Kind::Int { min: 100, max: 599 }, ""),
            opt("include_response_bodies", Kind::Bool, "default true"),
            timeout("default 10"),
        ],
        browser_data::network_capture_stop,
        "Stop the capture and return its records, filtered. An invalid url_pattern leaves it running."
    ),
    tool!(
        "console_capture_start",
        "console",
        ACT,
        &[
            SESSION,
            opt(
                "max_entries",
                Kind::Int { min: 10, max: 5000 },
                "default 500"
            ),
            timeout("default 10"),
        ],
        browser_data::console_capture_start,
        "Start collecting console calls and uncaught exceptions on a tab."
    ),
    tool!(
        "get_console_messages",
        "console",
        ACT,
        &[
            SESSION,
            opt(
                "offset",
                Kind::Int {
                    min: 0,
                    max: 1_000_000
                },
                "default 0"
            ),
            opt("max_items", Kind::Int { min: 1, max: 5000 }, "default 200"),
            opt(
                "clear",
                Kind::Bool,
                "empty the buffer after reading; default false"
            ),
            opt(
                "filter",
                Kind::Choice(&["user", "all"]),
                "user: page main-world output only"
            ),
            timeout("default 10"),
        ],
        browser_data::get_console_messages,
        "Page through (or clear) the console buffer."
    ),
    tool!(
        "console_capture_stop",
        "console",
        ACT,
        &[SESSION, timeout("default 10")],
        browser_data::console_capture_stop,
        "Return the remaining console messages and stop collecting."
    ),
    tool!(
        "download_file",
        "browser",
        ACT,
        &[
            req("url", Kind::Str, "http(s)"),
            opt(
                "filename",
                Kind::Str,
                "default: the name the server suggests"
            ),
            opt(
                "directory",
                Kind::Str,
                "relative to the output dir; default downloads/"
            ),
            opt("wait", Kind::Bool, "default true"),
            opt(
                "timeout",
                Kind::Num {
                    min: 0.0,
                    max: 1800.0
                },
                "seconds; default 60"
            ),
            SESSION,
            opt("overwrite", Kind::Bool, "default false"),
        ],
        raw::download_file,
        "Download through the browser (with its cookies); returns the verified path, size and sha256."
    ),
    tool!(
        "upload_files",
        "browser",
        ACT,
        &[
            req("selector", Kind::Locator, "the <input type=file>"),
            req(
                "paths",
                Kind::Strs,
                "absolute paths under an allowed upload root"
            ),
            SESSION,
            timeout("default 30"),
        ],
        raw::upload_files,
        "Set files on a file input. Only files under the configured upload roots can be read."
    ),
    tool!(
        "cdp_command",
        "cdp",
        DESTROY,
        &[
            req("method", Kind::Str, "e.g. Page.navigate"),
            opt("params_json", Kind::Str, "JSON object as text"),
            SESSION,
            opt("tab_id", Kind::Id, "alias of session_id"),
            opt("extension_id", Kind::Str, "extension link only"),
            opt(
                "target_id",
                Kind::Str,
                "a page target id from debugger_targets"
            ),
            timeout("default 20"),
        ],
        raw::cdp_command,
        "Send one raw CDP command to a tab. High-risk methods are refused (raw_cdp_blocked) before dispatch."
    ),
    tool!(
        "cdp_batch",
        "cdp",
        DESTROY,
        &[
            req(
                "batch_json",
                Kind::Str,
                "{\"cmd\":\"batch\",\"commands\":[{\"cdp\":{\"method\":...,\"params\":{}}}]}"
            ),
            SESSION,
        ],
        raw::cdp_batch,
        "Send several CDP commands in order; the whole batch passes the policy before the first runs."
    ),
    tool!(
        "debugger_targets",
        "cdp",
        READ,
        &[SESSION],
        raw::debugger_targets,
        "List every CDP target: pages, iframes, workers, extension pages."
    ),
    tool!(
        "set_site_permission",
        "permissions",
        ACT,
        &[
            req(
                "permission",
                Kind::Choice(&[
                    "notifications",
                    "geolocation",
                    "location",
                    "camera",
                    "microphone",
                    "clipboard"
                ]),
                ""
            ),
            req("setting", Kind::Choice(&["allow", "block", "ask"]), ""),
            opt("origin", Kind::Str, "http(s) origin; default: the tab's"),
            opt(
                "duration_seconds",
                Kind::Int { min: 1, max: 600 },
                "lease length, 60–600; default 300"
            ),
            SESSION,
        ],
        browser_data::set_site_permission,
        "Set one permission for one origin as a lease; the prior setting is restored on expiry, reset or restart."
    ),
    tool!(
        "reset_site_permissions",
        "permissions",
        ACT,
        &[
            opt("origin", Kind::Str, ""),
            opt("permission", Kind::Str, ""),
            SESSION,
        ],
        browser_data::reset_site_permissions,
        "Restore matching permission leases now (all of them when both are omitted)."
    ),
    tool!(
        "resolve_leave_dialog",
        "script",
        ACT,
        &[SESSION],
        browser_data::resolve_leave_dialog,
        "Accept an open leave-page prompt through the protocol; never sends OS keys (requires_user_action instead)."
    ),
    // The user's browser: extensions and bookmarks (through the tabwire extension).
    tool!(
        "extension_path",
        "extensions",
        READ,
        &[],
        extensions::extension_path,
        "Folder of the tabwire extension, to load unpacked, and its id."
    ),
    tool!(
        "list_extensions",
        "extensions",
        READ,
        &[SESSION],
        extensions::list_extensions,
        "Installed extensions: id, name, enabled, type, version."
    ),
    tool!(
        "set_extension_enabled",
        "extensions",
        ACT,
        &[
            req("extension_id", Kind::Str, ""),
            req("enabled", Kind::Bool, ""),
            SESSION
        ],
        extensions::set_extension_enabled,
        "Enable or disable an installed extension."
    ),
    tool!(
        "uninstall_extension",
        "extensions",
        DESTROY,
        &[
            req("extension_id", Kind::Str, ""),
            opt("show_confirm_dialog", Kind::Bool, "default true"),
            SESSION,
        ],
        extensions::uninstall_extension,
        "Ask the browser to remove another extension (it may require a user gesture)."
    ),
    tool!(
        "call_extension",
        "extensions",
        ACT,
        &[
            req("extension_id", Kind::Str, ""),
            req("message_json", Kind::Str, "JSON message"),
            SESSION,
        ],
        extensions::call_extension,
        "Send a JSON message to another extension that allows tabwire (externally_connectable)."
    ),
    tool!(
        "get_bookmarks",
        "bookmarks",
        READ,
        &[SESSION],
        extensions::get_bookmarks,
        "The bookmark tree."
    ),
    tool!(
        "create_bookmark",
        "bookmarks",
        ACT,
        &[
            req("title", Kind::Str, ""),
            opt("url", Kind::Str, "omit for a folder"),
            opt("parent_id", Kind::Str, ""),
            SESSION,
        ],
        extensions::create_bookmark,
        "Create a bookmark, or a folder without url."
    ),
    tool!(
        "remove_bookmark",
        "bookmarks",
        DESTROY,
        &[
            req("bookmark_id", Kind::Str, ""),
            opt("recursive", Kind::Bool, "required for a non-empty folder"),
            SESSION,
        ],
        extensions::remove_bookmark,
        "Save the subtree as a backup (backup_path, backup_sha256), then remove it; a failed backup removes nothing."
    ),
];
