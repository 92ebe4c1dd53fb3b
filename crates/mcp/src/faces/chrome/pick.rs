//! `chrome_request_element_selection`: a person points at the elements an agent asks
//! for, and each answer is a ref the other tools act on, frames included.

use serde_json::{Value, json};

use engine::{PickRequest, Picked};

use super::target_tab;
use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

/// The most elements one call asks for.
const MAX_REQUESTS: usize = 20;

tool_params! {
    pub struct RequestSelection {
        requests: Value = Any, required, "[{id?, name, description?}]: what to ask the person to click, in order";
        timeoutMs: f64 = Millis { max: 600_000.0 }, default(180_000.0), "how long to wait for the clicks";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

pub async fn request_element_selection(
    call: Call,
    p: RequestSelection,
) -> Result<Reply, ToolError> {
    let requests = requests(&p.requests)?;
    let tab = target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    // The call's time limit, less a moment to take the panel down and answer.
    let wait = engine::Deadline::after(
        call.deadline
            .remaining()
            .saturating_sub(std::time::Duration::from_millis(500)),
    );
    let picking = page.pick_elements(&requests, wait).await?;
    let missing: Vec<&str> = picking
        .results
        .iter()
        .filter(|r| r.element.is_none())
        .map(|r| r.id.as_str())
        .collect();
    let mut data = json!({
        "success": missing.is_empty(),
        "sessionId": page.info().handle,
        "timeoutMs": p.timeoutMs,
        "results": picking.results.iter().map(result_json).collect::<Vec<_>>(),
    });
    if picking.timed_out {
        data["timedOut"] = json!(true);
        data["missingRequestIds"] = json!(missing);
    }
    if picking.cancelled {
        data["cancelled"] = json!(true);
        data["missingRequestIds"] = json!(missing);
    }
    Ok(Reply::data(data).on(page.info()))
}

/// The requests as given: a non-empty list of `{id?, name, description?}`.
fn requests(given: &Value) -> Result<Vec<PickRequest>, ToolError> {
    let bad = |why: &str| ToolError::param("requests", why.to_owned());
    let list = given
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| bad("must be a non-empty list of {id?, name, description?}"))?;
    if list.len() > MAX_REQUESTS {
        return Err(bad(&format!(
            "asks for {} elements; at most {MAX_REQUESTS} a call",
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            let name = item["name"]
                .as_str()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    bad(&format!(
                        "[{i}] needs a name (what the person should click)"
                    ))
                })?;
            Ok(PickRequest {
                id: item["id"]
                    .as_str()
                    .map_or_else(|| format!("req_{}", i + 1), str::to_owned),
                name: name.to_owned(),
                description: item["description"].as_str().map(str::to_owned),
            })
        })
        .collect()
}

/// One answer as the original shapes it.
fn result_json(picked: &Picked) -> Value {
    let element = picked.element.as_ref().map(|e| {
        let (x, y, width, height) = e.rect;
        let mut element = json!({
            "ref": e.reference, "selector": e.selector, "selectorType": "css",
            "rect": { "x": x, "y": y, "width": width, "height": height },
            "center": { "x": x + width / 2.0, "y": y + height / 2.0 },
            "text": e.text, "tagName": e.tag_name,
            "frameId": e.frame_id.clone().map_or(json!(0), |f| json!(f)),
            "framePath": e.frame_path,
        });
        // Inside a shadow root the selector is its root's: the hosts say how to get there.
        if !e.shadow.is_empty() {
            element["shadowHosts"] = json!(e.shadow);
        }
        element
    });
    json!({ "id": picked.id, "name": picked.name, "element": element })
}
