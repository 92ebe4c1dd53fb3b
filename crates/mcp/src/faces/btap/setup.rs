//! Setup: the status report, and this session's automation profile.

use serde_json::{Map, Value, json};

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
        "indexed_tabs": stats.tabs,
        "chunks": stats.chunks,
        "index_bytes": stats.index_bytes,
        "tabs_read": stats.tabs_read,
        "indexing_ms": stats.indexing_ms,
        "tabs_cut_short": stats.cut_short,
        "unreadable_tabs": stats.unreadable,
    })
}

pub async fn get_setup_status(call: Call, _: NoArgs) -> Result<Reply, ToolError> {
    let engine = call.engine();
    let browser = engine.browsers.connected_of(call.session.id).pop();
    let config = call.session.config();
    let lost = engine.browsers.last_loss_of(call.session.id);
    // A linked browser whose worker stopped relinks by itself within seconds.
    let waiting = engine.browsers.dropped_links();
    let (link_state, product) = match (&browser, &lost) {
        (Some(b), _) => (
            "connected",
            Some(b.product.lock().map(|p| p.clone()).unwrap_or_default()),
        ),
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
    let mut data = json!({
        "status": "healthy",
        "package_version": env!("CARGO_PKG_VERSION"),
        "protocol_version": super::envelope::CONTRACT,
        "faces": call.catalogue.iter().map(|(face, _)| face.name).fold(Vec::new(), |mut faces, name| {
            if !faces.contains(&name) {
                faces.push(name);
            }
            faces
        }),
        "link": engine.link_name(),
        "link_state": link_state,
        "browser_version": product,
        "browser_path": browser_path,
        "browser_pid": browser.as_ref().and_then(|b| b.pid()),
        "browser_lost": lost,
        "linked_browsers": engine.browsers.linked_browsers(),
        "waiting_for_worker": waiting,
        "output_dir": config.output_dir,
        "download_roots": config.download_roots,
        "upload_roots": config.upload_roots,
        "profile": call.settings.profile().name(),
        "operator_profile": call.settings.floor().name(),
        "default_session_id": call.session.default_handle(),
        "agent_sessions": engine.live_sessions(),
        "session_browsers": engine.session_browsers(),
        "endpoint_load": engine.browsers.endpoint_load().iter().map(|(endpoint, seats)| json!({
            "endpoint": endpoint, "browsers": seats,
        })).collect::<Vec<_>>(),
        "default_session_settled": true,
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
    });
    if let (Some(data), Value::Object(extension)) = (
        data.as_object_mut(),
        engine.browsers.extension_status().await,
    ) {
        data.extend(extension);
    }
    Ok(Reply::data(data))
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
    Ok(Reply::data(json!({
        "mode": call.settings.profile().name(),
        "operator_mode": call.settings.floor().name(),
    })))
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
        Ok(previous) => Ok(Reply::data(json!({
            "mode": mode.name(), "previous": previous.name(), "persisted": false, "scope": "session",
        }))),
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
