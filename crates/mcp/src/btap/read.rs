use serde_json::{Value, json};

use engine::ScanRequest;

use crate::envelope::Reply;
use crate::face::{Call, ToolError};

pub async fn scan_page(call: Call) -> Result<Reply, ToolError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let request = ScanRequest {
        text_only: call.args.bool_or("text_only", false),
        cutlist: call.args.bool_or("cutlist", true),
        maxchars: call.args.i64_or("maxchars", 35_000) as u64,
        max_targets: call.args.i64_or("max_targets", 80) as u64,
        frame: frame_path(call.args.value("frame"))?,
        extra_js: call.args.str("extra_js").map(str::to_owned),
    };
    let mut data = page.scan(&request, call.args.timeout(15.0)).await?;
    if let Some(instruction) = call.args.str("instruction") {
        data["instruction"] = json!(instruction);
    }
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn scroll_page(call: Call) -> Result<Reply, ToolError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let to = call.args.value("to").cloned().unwrap_or(json!("bottom"));
    // "1200" is a pixel offset, not a CSS selector.
    let to = match to.as_str().and_then(|s| s.trim().parse::<f64>().ok()) {
        Some(pixels) => json!(pixels),
        None => to,
    };
    let data = page.scroll(to, call.args.timeout(15.0)).await?;
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn wait_for(call: Call) -> Result<Reply, ToolError> {
    let conditions = ["selector", "text", "url_pattern", "js"];
    let given: Vec<&str> = conditions
        .into_iter()
        .filter(|c| call.args.value(c).is_some())
        .collect();
    if given.len() != 1 {
        return Err(ToolError::param(
            "selector",
            format!(
                "give exactly one of selector, text, url_pattern, js (got {})",
                if given.is_empty() {
                    "none".into()
                } else {
                    given.join(", ")
                }
            ),
        ));
    }
    let page = call.session.page(call.tab().as_deref()).await?;
    let gone = call.args.bool_or("gone", false);
    let timeout = call.args.timeout(15.0);
    let (ctx, probe) = match given[0] {
        "selector" => {
            let (locator, frame) = split_locator(call.args.value("selector"))?;
            (
                page.frame_context(&frame, timeout).await?,
                json!({ "selector": locator }),
            )
        }
        "js" => (page.top(), json!({ "js": call.args.string("js") })),
        other => (page.top(), json!({ other: call.args.value(other) })),
    };
    let mut data = if given[0] == "js" {
        page.wait_js(&call.args.string("js"), gone, timeout).await?
    } else {
        page.wait_until(&ctx, probe, gone, timeout).await?
    };
    data["condition"] = json!(given[0]);
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn wait_for_url(call: Call) -> Result<Reply, ToolError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let data = page
        .wait_for_url(
            &call.args.string("url_pattern"),
            call.args.bool_or("wait_ready", true),
            call.args.timeout(15.0),
        )
        .await?;
    Ok(Reply::data(data).on(page.handle()))
}

/// A locator value may carry a `frame` path; the engine walks frames, the page script
/// resolves the rest.
pub fn split_locator(value: Option<&Value>) -> Result<(Value, Vec<Value>), ToolError> {
    let Some(value) = value else {
        return Ok((Value::Null, Vec::new()));
    };
    match value {
        Value::Object(map) if map.contains_key("frame") => {
            let mut rest = map.clone();
            let frame = frame_path(rest.remove("frame").as_ref())?;
            Ok((Value::Object(rest), frame))
        }
        other => Ok((other.clone(), Vec::new())),
    }
}

pub fn frame_path(value: Option<&Value>) -> Result<Vec<Value>, ToolError> {
    match value {
        None => Ok(Vec::new()),
        Some(Value::Array(steps))
            if !steps.is_empty() && steps.iter().all(|s| s.is_string() || s.is_object()) =>
        {
            Ok(steps.clone())
        }
        Some(Value::String(one)) => Ok(vec![json!(one)]),
        Some(_) => Err(ToolError::param(
            "frame",
            "expected a non-empty list of iframe locators (CSS strings or locator objects)",
        )),
    }
}
