//! `chrome_userscript` (callable, unlisted, as in the original): scripts kept for pages
//! whose URL matches, run at the start of every load until removed.

use serde_json::{Value, json};

use engine::{NewUserScript, RunAt, UserScript, UserScriptHeader, UserScriptWorld, looks_like_css};

use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

tool_params! {
    pub struct Userscript {
        action: String = Choice(&["create", "list", "get", "enable", "disable", "update", "remove", "send_command", "export"]), required, "";
        args: Option<Value> = Object, optional, "create: {script (JavaScript or CSS), name?, matches?: [url patterns] (default: the current site), excludes?, world?: ISOLATED|MAIN, runAt?: document_start|document_end|document_idle, mode?: auto|css}, a ==UserScript== header read too; update: {id, and any of create's}; get/enable/disable/remove: {id}; list: {query?, status?: enabled|disabled}; send_command: {id, payload?, tabId?}; export: {id?}";
    }
}

/// The original's payloads: `create` says how the script was put in; `list` its `items`;
/// `get` its `record`; `export` every record by id; the rest `{ok: true}`.
pub async fn userscript(call: Call, p: Userscript) -> Result<Reply, ToolError> {
    call.session.may_share_userscripts()?;
    let args = p.args.unwrap_or(Value::Null);
    let browsers = &call.engine().browsers;
    let id = || {
        args["id"]
            .as_str()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                ToolError::param(
                    "args.id",
                    "is required for this action (list the scripts for their ids)",
                )
            })
    };
    let known = |id: &str| {
        browsers.userscripts().get(id).ok_or_else(|| {
            ToolError::param(
                "args.id",
                format!("'{id}' names no userscript (list them for their ids)"),
            )
        })
    };
    let data = match p.action.as_str() {
        "create" => {
            let started = std::time::Instant::now();
            let current = current_tab(&call).await;
            let mut new = new_script(&args)?;
            if new.matches.is_empty() {
                new.matches = site_patterns(current.as_ref().map(|t| t.url.as_str()));
            }
            let script = browsers.add_userscript(new).await?;
            // In every attached tab for its next loads; in the current tab at once, as
            // the original applies it, when that tab is one it runs on.
            let mut warnings = Vec::new();
            let mut applied = false;
            if let Some(tab) = &current {
                let ran = async {
                    let page = call.session.page(Some(&tab.handle)).await?;
                    page.run_userscript_now(&script, call.deadline)
                        .await
                        .map_err(ToolError::from)
                }
                .await;
                match ran {
                    Ok(ran) => applied = ran,
                    Err(e) => warnings.push(format!("not run in the current tab now: {e}")),
                }
            }
            json!({
                "id": script.id,
                "status": if applied { "applied" } else { "queued" },
                "strategy": {
                    "kind": match (script.css, script.world) {
                        (true, _) => "insertCSS",
                        (false, UserScriptWorld::Main) => "persistent_main",
                        (false, UserScriptWorld::Isolated) => "persistent_isolated",
                    },
                    "runAt": script.run_at, "world": script.world,
                    "fallbacksTried": [], "cspBlocked": false,
                },
                "warnings": warnings,
                "metrics": { "injectMs": started.elapsed().as_millis() as u64 },
            })
        }
        "list" => {
            let query = args["query"].as_str().unwrap_or_default().to_lowercase();
            let status = args["status"].as_str().unwrap_or_default();
            let items: Vec<Value> = browsers
                .userscripts()
                .list()
                .iter()
                .filter(|s| match status {
                    "enabled" => s.enabled,
                    "disabled" => !s.enabled,
                    _ => true,
                })
                .filter(|s| query.is_empty() || s.name.to_lowercase().contains(&query))
                .map(item_json)
                .collect();
            json!({ "ok": true, "items": items })
        }
        "get" => json!({ "ok": true, "record": record_json(&known(id()?)?) }),
        "enable" | "disable" => {
            browsers
                .set_userscript_enabled(id()?, p.action == "enable")
                .await?;
            json!({ "ok": true })
        }
        "remove" => {
            browsers.remove_userscript(id()?).await?;
            json!({ "ok": true })
        }
        "update" => {
            let old = known(id()?)?;
            browsers
                .update_userscript(&old.id, new_script(&changed(&old, &args))?)
                .await?;
            json!({ "ok": true })
        }
        "send_command" => {
            let script = known(id()?)?;
            let tab = args["tabId"].as_u64().map(|t| t.to_string());
            let page = call.session.page(tab.as_deref()).await?;
            let answer = page
                .userscript_command(script.world, &script.id, &args["payload"], call.deadline)
                .await?;
            let reply = match answer {
                Some(data) => json!({ "ok": true, "result": { "data": data } }),
                None => json!({ "ok": true, "result": {},
                    "note": "the script defines no command handler in this tab (__userscript_onCommand__ in ISOLATED, window.__userscript_onCommand in MAIN), or does not run on its page" }),
            };
            return Ok(Reply::data(reply).on(page.info()));
        }
        _ => {
            // export
            let records: serde_json::Map<String, Value> = match args["id"].as_str() {
                Some(id) => vec![known(id)?],
                None => browsers.userscripts().list(),
            }
            .iter()
            .map(|script| (script.id.clone(), record_json(script)))
            .collect();
            json!({ "ok": true, "data": records })
        }
    };
    Ok(Reply::data(data))
}

/// The session's current tab, if it has one.
async fn current_tab(call: &Call) -> Option<engine::TabInfo> {
    let list = call.session.list_tabs(false).await.ok()?;
    let default = list.default?;
    list.tabs.into_iter().find(|t| t.handle == default)
}

/// The site of a URL as patterns (`scheme://host/*` and its subdomains), the original's
/// default for a script created without any; every page without a web page's URL.
fn site_patterns(url: Option<&str>) -> Vec<String> {
    match url.and_then(engine::urls::web_site) {
        Some((scheme, host)) => {
            let base = host.strip_prefix("www.").unwrap_or(&host);
            vec![
                format!("{scheme}://{host}/*"),
                format!("{scheme}://*.{base}/*"),
            ]
        }
        None => vec!["<all_urls>".into()],
    }
}

/// A script from the agent's arguments; what they leave out, the script's own
/// `==UserScript==` header may say.
fn new_script(args: &Value) -> Result<NewUserScript, ToolError> {
    let source = args["script"]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| ToolError::param("args.script", "is required: the JavaScript to run"))?;
    let header = UserScriptHeader::read(source);
    let css = match args["mode"].as_str().unwrap_or("auto") {
        "css" => true,
        "auto" | "" => looks_like_css(source),
        "persistent" | "once" => false,
        other => {
            return Err(ToolError::param(
                "args.mode",
                format!("'{other}' is not auto, css, persistent or once"),
            ));
        }
    };
    let patterns = |key: &str| -> Result<Vec<String>, ToolError> {
        match &args[key] {
            Value::Null => Ok(Vec::new()),
            Value::String(one) => Ok(vec![one.clone()]),
            Value::Array(list) => list
                .iter()
                .map(|p| {
                    p.as_str().map(str::to_owned).ok_or_else(|| {
                        ToolError::param(&format!("args.{key}"), "must be URL patterns (strings)")
                    })
                })
                .collect(),
            _ => Err(ToolError::param(
                &format!("args.{key}"),
                "must be a list of URL patterns",
            )),
        }
    };
    let world = match args["world"].as_str().unwrap_or("auto") {
        "MAIN" | "main" => UserScriptWorld::Main,
        "ISOLATED" | "isolated" => UserScriptWorld::Isolated,
        "auto" | "" => header.world.unwrap_or(UserScriptWorld::Isolated),
        other => {
            return Err(ToolError::param(
                "args.world",
                format!("'{other}' is not ISOLATED, MAIN or auto"),
            ));
        }
    };
    let run_at = match args["runAt"].as_str().unwrap_or("auto") {
        "document_start" => RunAt::DocumentStart,
        "document_end" => RunAt::DocumentEnd,
        "document_idle" => RunAt::DocumentIdle,
        // A stylesheet goes in as early as it can.
        "auto" | "" if css => header.run_at.unwrap_or(RunAt::DocumentStart),
        "auto" | "" => header.run_at.unwrap_or(RunAt::DocumentIdle),
        other => {
            return Err(ToolError::param(
                "args.runAt",
                format!("'{other}' is not document_start, document_end, document_idle or auto"),
            ));
        }
    };
    let or_header = |given: Vec<String>, read: &[String]| {
        if given.is_empty() {
            read.to_vec()
        } else {
            given
        }
    };
    Ok(NewUserScript {
        run_at,
        name: args["name"].as_str().map(str::to_owned).or(header.name),
        source: source.to_owned(),
        matches: or_header(patterns("matches")?, &header.matches),
        excludes: or_header(patterns("excludes")?, &header.excludes),
        world,
        css,
    })
}

/// An update's arguments over the script as it is: what the agent names changes, the
/// rest stays.
fn changed(old: &UserScript, args: &Value) -> Value {
    let mut merged = json!({
        "script": old.source, "name": old.name, "matches": old.matches,
        "excludes": old.excludes, "world": old.world, "runAt": old.run_at,
        "mode": if old.css { "css" } else { "persistent" },
    });
    if let Value::Object(given) = args {
        for (key, value) in given {
            if !value.is_null() && key != "id" {
                merged[key] = value.clone();
            }
        }
    }
    merged
}

/// The original's word for what a script is: a stylesheet, a Tampermonkey script (it
/// has a header), or plain JavaScript.
fn source_type(script: &UserScript) -> &'static str {
    if script.css {
        "CSS"
    } else if UserScriptHeader::read(&script.source) != UserScriptHeader::default() {
        "TM"
    } else {
        "JS"
    }
}

/// A script as the original's `list` shows it.
fn item_json(script: &UserScript) -> Value {
    json!({
        "id": script.id, "name": script.name,
        "status": if script.enabled { "enabled" } else { "disabled" },
        "sourceType": source_type(script), "matches": script.matches, "world": script.world,
        "runAt": script.run_at, "tags": [], "lastError": null,
        "updatedAt": script.updated_ms, "applyCount": 0, "lastAppliedAt": null,
    })
}

/// A script with its source, as the original's `get` and `export` give it.
fn record_json(script: &UserScript) -> Value {
    json!({
        "id": script.id, "name": script.name, "script": script.source,
        "sourceType": source_type(script),
        "matches": script.matches, "excludes": script.excludes, "runAt": script.run_at,
        "world": script.world, "persist": true, "enabled": script.enabled,
        "createdAt": script.created_ms, "updatedAt": script.updated_ms,
    })
}
