//! Network routes as both faces take them: `{action: add|list|remove, pattern, fulfill:
//! {status, body, contentType, headers} | abort: {reason} | continue: {headers}}`, read
//! into the engine's route once, for either face to run.

use serde_json::{Map, Value, json};

use engine::{RouteAction, RouteInfo, RouteRequest, RouteScope};

use crate::face::ToolError;

/// What a route call asks.
pub enum RouteCall {
    Add(RouteRequest),
    List,
    Remove {
        id: Option<String>,
        pattern: Option<String>,
    },
}

/// The arguments every route tool shares.
pub struct RouteArgs<'a> {
    pub action: &'a str,
    pub pattern: Option<&'a str>,
    pub id: Option<&'a str>,
    pub fulfill: Option<&'a Value>,
    pub abort: Option<&'a Value>,
    pub continue_with: Option<&'a Value>,
    pub scope: &'a str,
}

pub fn route_call(args: RouteArgs<'_>) -> Result<RouteCall, ToolError> {
    match args.action {
        "list" => Ok(RouteCall::List),
        "remove" => Ok(RouteCall::Remove {
            id: args.id.map(str::to_owned),
            pattern: args.pattern.map(str::to_owned),
        }),
        _ => {
            let pattern = args
                .pattern
                .filter(|p| !p.trim().is_empty())
                .ok_or_else(|| ToolError::param("pattern", "a route needs the URLs it matches"))?;
            let action = route_action(args.fulfill, args.abort, args.continue_with)?;
            let scope = if args.scope == "session" {
                RouteScope::Session
            } else {
                RouteScope::Tab
            };
            Ok(RouteCall::Add(RouteRequest {
                pattern: pattern.to_owned(),
                action,
                scope,
            }))
        }
    }
}

/// Exactly one of fulfill, abort and continue, as the engine's action.
fn route_action(
    fulfill: Option<&Value>,
    abort: Option<&Value>,
    continue_with: Option<&Value>,
) -> Result<RouteAction, ToolError> {
    let given = [fulfill, abort, continue_with].iter().flatten().count();
    if given != 1 {
        return Err(ToolError::param(
            "fulfill",
            "give exactly one of fulfill, abort and continue",
        ));
    }
    if let Some(fulfill) = fulfill {
        let status = fulfill["status"].as_u64().unwrap_or(200);
        if !(100..=599).contains(&status) {
            return Err(ToolError::param(
                "fulfill",
                "status is an HTTP status, 100 to 599",
            ));
        }
        let body = match &fulfill["body"] {
            Value::Null => String::new(),
            Value::String(text) => text.clone(),
            // An object or list is sent as its JSON.
            other => other.to_string(),
        };
        let json_body = fulfill["body"].is_object() || fulfill["body"].is_array();
        let content_type = fulfill["contentType"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| {
                if json_body {
                    "application/json"
                } else {
                    "text/plain"
                }
                .into()
            });
        return Ok(RouteAction::Fulfill {
            status: status as u16,
            body,
            content_type,
            headers: headers(&fulfill["headers"], "fulfill")?,
        });
    }
    if let Some(abort) = abort {
        let reason = abort["reason"].as_str().unwrap_or("Failed");
        let reason = engine::data::routes::abort_reason(reason)
            .map_err(|e| ToolError::param("abort", e.bare_message()))?;
        return Ok(RouteAction::Abort {
            reason: reason.to_owned(),
        });
    }
    let given = continue_with.cloned().unwrap_or(Value::Null);
    Ok(RouteAction::Continue {
        headers: headers(&given["headers"], "continue")?,
    })
}

/// `{name: value}` headers, in order.
fn headers(given: &Value, param: &str) -> Result<Vec<(String, String)>, ToolError> {
    let Some(all) = given.as_object() else {
        return match given {
            Value::Null => Ok(Vec::new()),
            _ => Err(ToolError::param(
                param,
                "headers are an object {name: value}",
            )),
        };
    };
    all.iter()
        .map(|(name, value)| match value {
            Value::String(text) => Ok((name.clone(), text.clone())),
            Value::Number(_) | Value::Bool(_) => Ok((name.clone(), value.to_string())),
            _ => Err(ToolError::param(
                param,
                format!("header '{name}' is not text"),
            )),
        })
        .collect()
}

/// A route as the faces show it (`camel`: the Chrome MCP Server's key style).
pub fn route_json(route: &RouteInfo, camel: bool) -> Value {
    let key =
        |snake: &'static str, camel_case: &'static str| if camel { camel_case } else { snake };
    let mut out = Map::new();
    out.insert("id".into(), json!(route.id));
    out.insert("pattern".into(), json!(route.pattern));
    out.insert("scope".into(), json!(route.scope));
    if let Some(tab) = &route.tab {
        out.insert("tab".into(), json!(tab));
    }
    out.insert("matched".into(), json!(route.matched));
    match &route.action {
        RouteAction::Fulfill {
            status,
            content_type,
            body,
            headers,
        } => {
            out.insert("kind".into(), json!("fulfill"));
            out.insert("status".into(), json!(status));
            out.insert(
                key("content_type", "contentType").into(),
                json!(content_type),
            );
            out.insert(key("body_bytes", "bodyBytes").into(), json!(body.len()));
            if !headers.is_empty() {
                out.insert("headers".into(), json!(headers_object(headers)));
            }
        }
        RouteAction::Abort { reason } => {
            out.insert("kind".into(), json!("abort"));
            out.insert("reason".into(), json!(reason));
        }
        RouteAction::Continue { headers } => {
            out.insert("kind".into(), json!("continue"));
            out.insert("headers".into(), json!(headers_object(headers)));
        }
    }
    Value::Object(out)
}

fn headers_object(headers: &[(String, String)]) -> Map<String, Value> {
    headers
        .iter()
        .map(|(name, value)| (name.clone(), json!(value)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(
        fulfill: Option<Value>,
        abort: Option<Value>,
        cont: Option<Value>,
    ) -> Result<RouteAction, ToolError> {
        let call = route_call(RouteArgs {
            action: "add",
            pattern: Some("**/api/*"),
            id: None,
            fulfill: fulfill.as_ref(),
            abort: abort.as_ref(),
            continue_with: cont.as_ref(),
            scope: "tab",
        })?;
        match call {
            RouteCall::Add(request) => Ok(request.action),
            _ => panic!("an add"),
        }
    }

    #[test]
    fn a_route_takes_exactly_one_action_read_as_the_faces_write_it() {
        let fulfilled = add(
            Some(json!({ "body": { "ok": true }, "headers": { "x-a": 1 } })),
            None,
            None,
        );
        assert_eq!(
            fulfilled.ok(),
            Some(RouteAction::Fulfill {
                status: 200,
                body: r#"{"ok":true}"#.into(),
                content_type: "application/json".into(),
                headers: vec![("x-a".into(), "1".into())],
            })
        );
        let aborted = add(None, Some(json!({ "reason": "connection_refused" })), None);
        assert_eq!(
            aborted.ok(),
            Some(RouteAction::Abort {
                reason: "ConnectionRefused".into()
            })
        );
        assert!(add(None, None, None).is_err());
        assert!(add(Some(json!({})), Some(json!({})), None).is_err());
        assert!(add(Some(json!({ "status": 42 })), None, None).is_err());
        assert!(add(None, Some(json!({ "reason": "because" })), None).is_err());
        assert!(add(None, None, Some(json!({ "headers": ["x"] }))).is_err());
    }
}
