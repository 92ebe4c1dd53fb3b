//! Network routes in the Chrome MCP Server's manner: fulfil, abort, or let through with
//! headers set the requests of the session's tabs.

use serde_json::{Value, json};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError};
use crate::routes::{RouteArgs, RouteCall, route_call, route_json};
use crate::tool_params;

tool_params! {
    pub struct NetworkRoute {
        action: String = Choice(&["add", "list", "remove"]), required, "";
        pattern: Option<String> = Str, optional, "URLs it matches: a glob (**/api/*; * stops at /, ** does not, {a,b}) or /regex/i";
        fulfill: Option<Value> = Object, optional, "{status, body, contentType, headers}: answer without the network";
        abort: Option<Value> = Object, optional, "{reason}: fail it (Failed, ConnectionRefused, BlockedByClient, …)";
        r#continue: Option<Value> = Object, optional, "{headers}: send it on with these headers set";
        scope: String = Choice(&["tab", "session"]), default("tab"), "the tab, or every tab this session drives";
        routeId: Option<String> = Str, optional, "remove: this route (else those of pattern; neither: all)";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

pub async fn network_route(call: Call, p: NetworkRoute) -> Result<Reply, ToolError> {
    let asked = route_call(RouteArgs {
        action: &p.action,
        pattern: p.pattern.as_deref(),
        id: p.routeId.as_deref(),
        fulfill: p.fulfill.as_ref(),
        abort: p.abort.as_ref(),
        continue_with: p.r#continue.as_ref(),
        scope: &p.scope,
    })?;
    let session = &call.session;
    let data = match asked {
        RouteCall::Add(request) => {
            let (tab, added) = session
                .add_route(tab_arg(&p.tabId).as_deref(), request)
                .await?;
            let data =
                json!({ "success": true, "tabId": tab.tab_id, "route": route_json(&added, true) });
            return Ok(Reply::data(data).on(tab));
        }
        RouteCall::List => {
            let listed: Vec<Value> = session
                .routes()
                .iter()
                .map(|r| route_json(r, true))
                .collect();
            json!({ "success": true, "routes": listed })
        }
        RouteCall::Remove { id, pattern } => {
            let removed: Vec<Value> = session
                .remove_routes(id.as_deref(), pattern.as_deref())
                .iter()
                .map(|r| route_json(r, true))
                .collect();
            json!({ "success": true, "removed": removed })
        }
    };
    Ok(Reply::data(data))
}
