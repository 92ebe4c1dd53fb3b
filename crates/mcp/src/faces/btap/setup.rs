//! Setup: the status report, and this session's automation profile.

use serde_json::{Map, Value, json};

use engine::ExtensionStatus;

use crate::face::{Call, Profile, Reply, ToolError};
use crate::tool_params;

pub use crate::params::NoParams as NoArgs;

tool_params! {
    pub struct SetProfile {
        mode: String = Str, required, "lab or safe";
    }
}

/// How the tab search stands: vector search on or why not, and what the index holds.
fn tab_search_status(stats: &engine::search::IndexStats) -> Value {
    json!({
        "enabled": stats.enabled,
        "vector_search": stats.vector_search_off.is_none(),
        "vector_search_off": stats.vector_search_off,
        "model_dims": stats.model_dims,
        "model_bytes": stats.model_bytes,
        "model_loaded": stats.model_loaded,
        "passages_embedded": stats.passages_embedded,
        "passages_waiting": stats.passages_waiting,
        "indexed_tabs": stats.tabs,
        "chunks": stats.chunks,
        "index_bytes": stats.index_bytes,
        "tabs_read": stats.tabs_read,
        "indexing_ms": stats.indexing_ms,
        "tabs_cut_short": stats.cut_short,
        "unreadable_tabs": stats.unreadable,
    })
}

/// The version of the protocol tabwire's extension speaks over its link (its hello, then
/// CDP relayed both ways); the extension this binary writes out speaks it by build.
const LINK_PROTOCOL: u64 = 1;

pub async fn get_setup_status(call: Call, _: NoArgs) -> Result<Reply, ToolError> {
    let engine = call.engine();
    let browser = engine.browsers.connected_of(call.session.id).pop();
    let config = call.session.config();
    let lost = engine.browsers.last_loss_of(call.session.id);
    // A linked browser whose worker stopped relinks by itself within seconds.
    let waiting = engine.browsers.dropped_links();
    let (link_state, product) = match (&browser, &lost) {
        (Some(b), _) => ("connected", Some(b.product.lock().clone())),
        (None, _) if !waiting.is_empty() => ("waiting_for_worker", None),
        (None, Some(_)) => ("lost", None),
        (None, None) => ("not_started", None),
    };
    let browser_path = match &config.link {
        engine::LinkConfig::Managed(options) => {
            engine::find_browser(options.browser_path.as_deref())
                .map(|p| json!(p))
                .unwrap_or_else(|e| json!({ "error": e.to_string() }))
        }
        // Shown without their queries: a farm's token is not the agent's to read.
        engine::LinkConfig::Endpoint(endpoints) => match endpoints.as_slice() {
            [one] => json!(engine::without_query(one)),
            many => json!(
                many.iter()
                    .map(|e| engine::without_query(e))
                    .collect::<Vec<_>>()
            ),
        },
        engine::LinkConfig::Extension => json!(null),
    };
    let tabs: Vec<Value> = call
        .session
        .list_tabs_connected()
        .await
        .tabs
        .iter()
        .map(super::tabs::tab_json)
        .collect();
    let extension = engine.browsers.extension_status().await;
    let build = crate::identity::build();
    let (status, action) = verdict(engine, link_state, &extension, build.verdict);
    let mut data = json!({
        "status": status,
        "action": action,
        "package_version": env!("CARGO_PKG_VERSION"),
        // One program serves MCP and drives the browser (the broker, where clients share
        // it): its build is both the server's and the "bridge's".
        "bridge_version": env!("CARGO_PKG_VERSION"),
        "mcp_source_identity": build.running,
        "bridge_source_identity": build.running,
        "expected_python_source_identity": build.installed,
        "mcp_build_verdict": build.verdict,
        "bridge_build_verdict": build.verdict,
        "mcp_build_enforced": build.enforced,
        "bridge_build_enforced": build.enforced,
        "restart_mcp_session_required": build.verdict == "stale_process",
        "restart_bridge_required": build.verdict == "stale_process",
        "result_contract": super::envelope::CONTRACT,
        "protocol_version": LINK_PROTOCOL,
        "expected_protocol_version": LINK_PROTOCOL,
        "extension_capabilities": capabilities(),
        "missing_extension_capabilities": [],
        "extension_build_enforced": extension.extension_status_available,
        "extension_name": "tabwire link",
        "extension_id": config.extension_id,
        "extension_path": config.extension_dir,
    });
    merge(
        &mut data,
        json!({
            "faces": call.catalogue.iter().map(|(face, _)| face.name).fold(Vec::new(), |mut faces, name| {
                if !faces.contains(&name) {
                    faces.push(name);
                }
                faces
            }),
            "link": engine.link_name(),
            "link_state": link_state,
            // Another process than the one the client started holds the browser: the broker
            // every client of this profile shares.
            "remote_mode": call.settings.brokered,
            "browser_version": product,
            "browser_path": browser_path,
            "browser_pid": browser.as_ref().and_then(|b| b.pid()),
            "browser_lost": lost,
            "linked_browsers": json!(engine.browsers.linked_browsers()),
            "waiting_for_worker": json!(waiting),
            "output_dir": config.output_dir,
            "download_roots": config.download_roots,
            "upload_roots": config.upload_roots,
            "state_paths": state_paths(config),
        }),
    );
    merge(
        &mut data,
        json!({
            "profile": call.settings.profile().name(),
            "operator_profile": call.settings.floor().name(),
            "connected_tabs": tabs.len(),
            "default_session_id": call.session.default_handle(),
            "default_session_settled": true,
            "tabs": tabs,
            "agent_sessions": engine.live_sessions(),
            "session_browsers": engine.session_browsers(),
            "endpoint_load": engine.browsers.endpoint_load().iter().map(|(endpoint, seats)| json!({
                "endpoint": endpoint, "browsers": seats,
            })).collect::<Vec<_>>(),
            "capability_registry": capability_registry(&call),
            "tab_search": tab_search_status(&engine.search.stats().await),
            "emulations": engine.emulations().iter().filter(|e| {
                // A session kept apart sees only its own.
                !call.session.is_isolated() || e.session == call.session.id
            }).map(|e| json!({
                "session_id": e.tab.handle, "tab_id": e.tab.tab_id, "url": e.tab.url,
                "settings": e.settings, "summary": super::emulation::describe(&e.settings),
                "set_by_this_session": e.session == call.session.id,
            })).collect::<Vec<_>>(),
            "notes": notes(engine.link_name()),
        }),
    );
    data["bridge_host"] = json!("");
    data["bridge_ws_port"] = json!(0);
    data["bridge_http_port"] = json!(0);
    if let engine::LinkConfig::Endpoint(endpoints) = &config.link
        && let Some((host, port)) = endpoints
            .first()
            .and_then(|e| engine::urls::host_and_port(e))
    {
        // The browser's own DevTools endpoint is where this link's WebSocket goes.
        data["bridge_host"] = json!(host);
        data["bridge_ws_port"] = json!(port);
    }
    data["diagnosis"] = diagnosis(&data, &build, &extension);
    merge(&mut data, json!(extension));
    Ok(Reply::data(data))
}

/// Adds `more`'s fields to `data` (both objects).
fn merge(data: &mut Value, more: Value) {
    if let (Value::Object(data), Value::Object(more)) = (data, more) {
        data.extend(more);
    }
}

/// The report's verdict and the one thing to do about it, in BrowserTap's words: `none`
/// when everything is in order (a browser not started yet is launched by the first call
/// that needs one), else what the operator or agent should do first.
fn verdict(
    engine: &engine::Engine,
    link_state: &str,
    extension: &ExtensionStatus,
    build: &str,
) -> (&'static str, &'static str) {
    let linked = engine.link_name() == "extension";
    match (build, extension.extension_build_verdict, link_state) {
        ("stale_process", _, _) => ("stale_package", "restart_mcp_session"),
        (_, "stale_server", _) => ("stale_package", "restart_mcp_session"),
        (_, "stale_worker", _) => ("stale_extension", "reload_extension"),
        (_, _, "waiting_for_worker") => ("starting", "wait_for_extension"),
        (_, _, "not_started" | "lost") if linked => {
            ("extension_unavailable", "check_extension_connection")
        }
        _ => ("healthy", "none"),
    }
}

/// BrowserTap's extension capabilities, each as it holds in tabwire (where page work runs
/// in the engine, whatever the link): all of them do.
fn capabilities() -> Value {
    json!({
        // cdp_batch checks the whole batch against the policy before the first command.
        "batch_result_guard": true,
        // Locators take a `frame` path, out-of-process frames included.
        "frame_locators": true,
        // role/name, label, text, css and ref locators.
        "structured_locator": true,
        // get_console_messages filter=user.
        "console_user_filter": true,
        // network_capture_stop filters by URL, resource type and status.
        "network_stop_filter": true,
        "full_page_screenshot": true,
        // No page script takes commands from the page: nothing to remove.
        "content_command_channel_removed": true,
        // Tab ids are never reused and a tab's generation never changes.
        "tab_generation_load_failsafe": true,
    })
}

/// Where tabwire keeps its state, and the secret a linked browser must present (named,
/// never read: nothing derived from it is reported).
fn state_paths(config: &engine::EngineConfig) -> Value {
    let state_dir = config.backup_dir.parent().map(std::path::Path::to_path_buf);
    let secret = engine::link_secret_path();
    let secret_exists = secret.is_file();
    json!({
        "state_dir": state_dir,
        "state_dir_exists": state_dir.as_ref().map(|d| d.is_dir()),
        "state_dir_kind": "default",
        // The variable that moves it (see `platform::dirs::state_dir`).
        "state_dir_env": if cfg!(windows) { "LOCALAPPDATA" } else { "XDG_STATE_HOME" },
        "default_state_dir_name": "tabwire",
        "token_file": secret,
        "token_file_exists": secret_exists,
        "token_file_status": if secret_exists { "ready" } else { "missing" },
        "token_file_error": null,
        "token_file_from_env": false,
        "auth_enabled": true,
        "token_fingerprint": "",
    })
}

/// The link's own account, in the shape of BrowserTap's bridge diagnosis.
fn diagnosis(data: &Value, build: &crate::identity::Build, extension: &ExtensionStatus) -> Value {
    let (started_at, uptime) = crate::identity::serving();
    let mut state_paths = data["state_paths"].clone();
    // The link reads its secret from that one file; no copy of it is held elsewhere, and
    // nothing derived from it is reported.
    state_paths["enforced_token_fingerprint"] = json!("");
    state_paths["token_matches_file"] = json!(true);
    let healthy = data["status"] == "healthy";
    let tabs = data["connected_tabs"].as_u64().unwrap_or_default();
    let clients: serde_json::Map<String, Value> = data["tabs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tab| {
            Some((
                tab["client_id"].as_str()?.to_owned(),
                json!({ "browser": tab["browser"], "seconds_ago": 0.0 }),
            ))
        })
        .collect();
    json!({
        "cause": data["status"],
        "ok": healthy,
        "advice": match data["link_state"].as_str() {
            Some("connected") => format!("{tabs} tab(s) open; the browser is connected."),
            Some("not_started") => "No browser yet: the first call that needs one starts or links it.".to_owned(),
            Some("waiting_for_worker") => "The extension's worker stopped; it relinks by itself within seconds.".to_owned(),
            _ => "The browser went away; the next call starts or links another.".to_owned(),
        },
        "bridge_version": env!("CARGO_PKG_VERSION"),
        "bridge_source_identity": build.running,
        "bridge_expected_source_identity": build.installed,
        "bridge_build_verdict": build.verdict,
        "bridge_build_enforced": build.enforced,
        "active_tabs": tabs,
        "ever_registered": data["link_state"] == "connected" || !data["browser_lost"].is_null(),
        "last_ext_seen_seconds_ago": if data["link_state"] == "connected" { json!(0.0) } else { Value::Null },
        "bridge_started_at": started_at,
        "bridge_uptime_seconds": (uptime * 10.0).round() / 10.0,
        "startup_grace_seconds": 0.0,
        "clients": clients,
        "ws_origin_policy": {
            "default_origin": data["extension_id"].as_str().map(|id| format!("chrome-extension://{id}")),
            "identity_source": "extension_key",
            "additional_origins_count": 0,
            "allow_no_origin": false,
        },
        "rejected_client_takeovers": 0,
        "state_paths": state_paths,
        "extension_version": extension.extension_version,
        "protocol_version": LINK_PROTOCOL,
        "extension_capabilities": capabilities(),
        "extension_build_stamp": extension.extension_build_stamp,
    })
}

/// What a reader of this report should know of how tabwire reaches its browser.
fn notes(link: &str) -> Vec<&'static str> {
    let mut notes = vec![
        "Every MCP session has its own default tab; pass session_id when several agents share a server.",
    ];
    notes.push(match link {
        "extension" => {
            "Your own browser links through the tabwire extension: load the folder `tabwire extension-path` prints (chrome://extensions, Developer mode) and run `tabwire install-native-host` once."
        }
        "endpoint" => {
            "tabwire attaches to the browser at the configured CDP endpoint and never closes it."
        }
        _ => "tabwire launches its own Chromium on the first call that needs one.",
    });
    notes.push("There is no bridge process or port to start: `tabwire doctor` checks the setup.");
    notes
}

/// BrowserTap's registry: the tools by group, with the desktop group marked unsupported
/// where no native dialog can be owned by the browser.
fn capability_registry(call: &Call) -> Value {
    let mut groups: Map<String, Value> = Map::new();
    let mut count = 0;
    for (face, tool) in call.catalogue.iter() {
        if face.name != "btap" {
            continue;
        }
        count += 1;
        let names = groups
            .entry(tool.group)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("a group is a list");
        names.push(json!(tool.name));
    }
    for names in groups.values_mut() {
        if let Some(list) = names.as_array_mut() {
            list.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        }
    }
    let desktop_supported = cfg!(windows);
    json!({
        "version": 1,
        "groups": groups,
        "tool_count": count,
        "declared_tool_count": count,
        "missing_tools": [],
        "unknown_tools": [],
        "complete": true,
        "unsupported_groups": if desktop_supported { json!({}) } else {
            json!({ "desktop": format!("native file dialogs are Windows only; this is {}", std::env::consts::OS) })
        },
    })
}

pub async fn get_automation_profile(call: Call, _: NoArgs) -> Result<Reply, ToolError> {
    Ok(Reply::data(profile_json(&call)))
}

/// The session's profile and what it allows, in BrowserTap's words. tabwire never asks
/// the user through the client (no elicitation): lab needs no approval, and what safe
/// would need approval for is refused (`requires_user_action`).
fn profile_json(call: &Call) -> Value {
    let profile = call.settings.profile();
    let safe = profile == Profile::Safe;
    json!({
        "mode": profile.name(),
        "operator_mode": call.settings.floor().name(),
        "no_elicit": true,
        "raw_cdp_policy": if call.settings.raw_policy().allow_blocked { "allow_unsafe" } else { "guarded" },
        "auto_beforeunload_hosts": super::tabs::auto_leave_hosts(),
        "physical_approval": if safe { "every_action" } else { "not_required" },
        "site_permission_approval": if safe { "every_allow" } else { "not_required" },
    })
}

pub async fn set_automation_profile(call: Call, p: SetProfile) -> Result<Reply, ToolError> {
    let mode = match p.mode.trim().to_ascii_lowercase().as_str() {
        "lab" => Profile::Lab,
        "safe" => Profile::Safe,
        other => {
            return Err(ToolError::param(
                "mode",
                format!("'{other}' is not lab or safe"),
            ));
        }
    };
    match call.settings.set_profile(mode) {
        Ok(previous) => {
            let mut data = profile_json(&call);
            data["previous"] = json!(previous.name());
            data["persisted"] = json!(false);
            data["scope"] = json!("session");
            Ok(Reply::data(data))
        }
        Err(floor) => Err(ToolError::Face {
            code: "permission_denied",
            message: format!(
                "mode: this server was started with the {} profile; a session may tighten it, never loosen it",
                floor.name()
            ),
            details: json!({ "param": "mode", "operator_mode": floor.name() }),
            may_have_run: false,
        }),
    }
}
