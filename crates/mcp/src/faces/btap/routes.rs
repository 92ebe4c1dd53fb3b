//! Network routes: an agent's rules for its tabs' requests (fulfil, abort, or let through
//! with headers set), added, listed and removed.

use serde_json::{Value, json};

use super::args::named;
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::routes::{RouteArgs, RouteCall, route_call, route_json};
use crate::tool_params;

tool_params! {
    pub struct NetworkRoute {
        action: String = Choice(&["add", "list", "remove"]), required, "";
        pattern: Option<String> = Str, nullable, "URLs it matches: a glob (**/api/*; * stops at /, ** does not, {a,b}) or /regex/i";
        fulfill: Option<Value> = Object, nullable, "{status, body, contentType, headers}: answer without the network";
        abort: Option<Value> = Object, nullable, "{reason}: fail it (Failed, ConnectionRefused, BlockedByClient, …)";
        r#continue: Option<Value> = Object, nullable, "{headers}: send it on with these headers set";
        scope: String = Choice(&["tab", "session"]), default("tab"), "the tab, or every tab this session drives";
        route_id: Option<String> = Str, nullable, "remove: this route (else those of pattern; neither: all)";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

pub async fn network_route(call: Call, p: NetworkRoute) -> Result<Reply, ToolError> {
    let asked = route_call(RouteArgs {
        action: &p.action,
        pattern: p.pattern.as_deref(),
        id: p.route_id.as_deref(),
        fulfill: p.fulfill.as_ref(),
        abort: p.abort.as_ref(),
        continue_with: p.r#continue.as_ref(),
        scope: &p.scope,
    })?;
    let session = &call.session;
    let data = match asked {
        RouteCall::Add(request) => {
            let handle = named(&p.session_id, &None);
            let (tab, added) = session.add_route(handle.as_deref(), request).await?;
            let active = session.routes().len();
            let data = json!({ "status": "success", "route": route_json(&added, false), "active": active });
            return Ok(Reply::data(data).on(tab));
        }
        RouteCall::List => {
            let listed: Vec<Value> = session
                .routes()
                .iter()
                .map(|r| route_json(r, false))
                .collect();
            json!({ "status": "success", "count": listed.len(), "routes": listed })
        }
        RouteCall::Remove { id, pattern } => {
            let removed: Vec<Value> = session
                .remove_routes(id.as_deref(), pattern.as_deref())
                .iter()
                .map(|r| route_json(r, false))
                .collect();
            json!({
                "status": "success", "count": removed.len(), "removed": removed,
                "active": session.routes().len(),
            })
        }
    };
    Ok(Reply::data(data))
}
