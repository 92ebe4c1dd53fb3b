//! The `btap` face: BrowserTap's tool surface, answering in `btap.result.v1`.

mod capture;
mod input;
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
];
