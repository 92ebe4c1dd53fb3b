//! `chrome_userscript` (callable, unlisted, as in the original): scripts kept for pages
//! whose URL matches, run at the start of every load until removed.

use serde_json::{Value, json};

use engine::{NewUserScript, RunAt, UserScript, UserScriptWorld};

use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

tool_params! {
    pub struct Userscript {
        action: String = Choice(&["create", "list", "get", "enable", "disable", "update", "remove", "send_command", "export"]), required, "";
        args: Option<Value> = Object, optional, "create: {script, name?, matches?: [url patterns], excludes?, world?: ISOLATED|MAIN, runAt?: document_start|document_end|document_idle}; update: {id, and any of create's}; get/enable/disable/remove: {id}; export: {id?}";
    }
}

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
    let data = match p.action.as_str() {
        "create" => {
            let script = browsers.add_userscript(new_script(&args)?).await?;
            json!({ "success": true, "action": "create", "id": script.id, "script": script_json(&script) })
        }
        "list" => {
            let scripts: Vec<Value> = browsers
                .userscripts()
                .list()
                .iter()
                .map(script_json)
                .collect();
            json!({ "success": true, "action": "list", "total": scripts.len(), "scripts": scripts })
        }
        "get" => {
            let script = browsers.userscripts().get(id()?).ok_or_else(|| {
                ToolError::param("args.id", "names no userscript (list them for their ids)")
            })?;
            json!({ "success": true, "action": "get", "script": script_json(&script) })
        }
        "enable" | "disable" => {
            let script = browsers
                .set_userscript_enabled(id()?, p.action == "enable")
                .await?;
            json!({ "success": true, "action": p.action, "script": script_json(&script) })
        }
        "remove" => {
            let script = browsers.remove_userscript(id()?).await?;
            json!({ "success": true, "action": "remove", "id": script.id })
        }
        "update" => {
            let id = id()?;
            let old = browsers.userscripts().get(id).ok_or_else(|| {
                ToolError::param("args.id", "names no userscript (list them for their ids)")
            })?;
            let script = browsers
                .update_userscript(id, new_script(&changed(&old, &args))?)
                .await?;
            json!({ "success": true, "action": "update", "script": script_json(&script) })
        }
        "export" => {
            let scripts: Vec<Value> = match args["id"].as_str() {
                Some(id) => browsers.userscripts().get(id).into_iter().collect(),
                None => browsers.userscripts().list(),
            }
            .iter()
            .map(|script| {
                let mut exported = script_json(script);
                exported["script"] = json!(script.source);
                exported
            })
            .collect();
            json!({ "success": true, "action": "export", "total": scripts.len(), "scripts": scripts })
        }
        other => {
            return Err(ToolError::param(
                "action",
                format!(
                    "'{other}' is not supported by tabwire: use create, list, get, update, enable, disable, remove or export"
                ),
            ));
        }
    };
    Ok(Reply::data(data))
}

fn new_script(args: &Value) -> Result<NewUserScript, ToolError> {
    let source = args["script"]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| ToolError::param("args.script", "is required: the JavaScript to run"))?;
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
        "ISOLATED" | "isolated" | "auto" | "" => UserScriptWorld::Isolated,
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
        "document_idle" | "auto" | "" => RunAt::DocumentIdle,
        other => {
            return Err(ToolError::param(
                "args.runAt",
                format!("'{other}' is not document_start, document_end, document_idle or auto"),
            ));
        }
    };
    Ok(NewUserScript {
        run_at,
        name: args["name"].as_str().map(str::to_owned),
        source: source.to_owned(),
        matches: patterns("matches")?,
        excludes: patterns("excludes")?,
        world,
    })
}

/// An update's arguments over the script as it is: what the agent names changes, the
/// rest stays.
fn changed(old: &UserScript, args: &Value) -> Value {
    let mut merged = json!({
        "script": old.source, "name": old.name, "matches": old.matches,
        "excludes": old.excludes, "world": old.world, "runAt": old.run_at,
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

fn script_json(script: &UserScript) -> Value {
    json!({
        "id": script.id, "name": script.name, "matches": script.matches,
        "excludes": script.excludes, "world": script.world, "runAt": script.run_at,
        "enabled": script.enabled,
        "createdAt": script.created_ms,
    })
}
