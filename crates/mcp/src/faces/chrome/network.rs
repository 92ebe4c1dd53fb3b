//! Network: capturing a tab's requests (headers always, bodies in the debugger variant,
//! capped and said so), and sending a request from the page itself.

use serde_json::{Map, Value, json};

use engine::{FetchRequest, NetworkFilter, NetworkOptions};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError};
use crate::params;
use crate::tool_params;

/// Bodies are kept up to this size each (the original's cap).
const BODY_CAP: usize = 1 << 20;
/// At most this many requests a capture (the original's limit).
const MAX_REQUESTS: usize = 100;

tool_params! {
    pub struct CaptureStart {
        url: Option<String> = Str, optional, "open this URL once capturing";
        maxCaptureTime: f64 = Num { min: 0.0, max: 86_400_000.0 }, default(180_000.0), "ms until it stops (0: never)";
        inactivityTimeout: f64 = Num { min: 0.0, max: 86_400_000.0 }, default(60_000.0), "ms idle until it stops (0: never)";
        includeStatic: bool = Bool, default(false), "also images, styles, scripts, fonts";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    pub struct CaptureStop {
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    pub struct Capture {
        action: String = Choice(&["start", "stop"]), required, "";
        needResponseBody: bool = Bool, default(false), "also keep response bodies";
        url: Option<String> = Str, optional, "action start: open this URL once capturing";
        maxCaptureTime: f64 = Num { min: 0.0, max: 86_400_000.0 }, default(180_000.0), "ms";
        inactivityTimeout: f64 = Num { min: 0.0, max: 86_400_000.0 }, default(60_000.0), "ms (0: never)";
        includeStatic: bool = Bool, default(false), "";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    pub struct Request {
        url: String = Str, required, "absolute, or relative to the page";
        method: String = Str, default("GET"), "";
        headers: Option<Value> = Object, optional, "";
        body: Option<String> = Str, optional, "request body (POST, PUT, …)";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Millis { max: 600_000.0 }, default(30_000.0), "ms";
        formData: Option<Value> = Object, optional, "multipart {fields, files: [{name, filename, type, base64Data}]}";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "send from this page (its cookies)";
    }
}

pub async fn capture_start(call: Call, p: CaptureStart) -> Result<Reply, ToolError> {
    start(
        &call,
        tab_arg(&p.tabId),
        p.url,
        p.maxCaptureTime,
        p.inactivityTimeout,
        p.includeStatic,
        false,
    )
    .await
}

pub async fn debugger_start(call: Call, p: CaptureStart) -> Result<Reply, ToolError> {
    start(
        &call,
        tab_arg(&p.tabId),
        p.url,
        p.maxCaptureTime,
        p.inactivityTimeout,
        p.includeStatic,
        true,
    )
    .await
}

pub async fn capture_stop(call: Call, p: CaptureStop) -> Result<Reply, ToolError> {
    stop(&call, tab_arg(&p.tabId), false).await
}

pub async fn debugger_stop(call: Call, p: CaptureStop) -> Result<Reply, ToolError> {
    stop(&call, tab_arg(&p.tabId), true).await
}

pub async fn capture(call: Call, p: Capture) -> Result<Reply, ToolError> {
    let tab = tab_arg(&p.tabId);
    let mut reply = if p.action == "start" {
        start(
            &call,
            tab,
            p.url,
            p.maxCaptureTime,
            p.inactivityTimeout,
            p.includeStatic,
            p.needResponseBody,
        )
        .await?
    } else {
        stop(&call, tab, p.needResponseBody).await?
    };
    reply.data["backend"] = json!(if p.needResponseBody {
        "debugger"
    } else {
        "webRequest"
    });
    reply.data["needResponseBody"] = json!(p.needResponseBody);
    Ok(reply)
}

async fn start(
    call: &Call,
    tab: Option<String>,
    url: Option<String>,
    max_time: f64,
    idle: f64,
    include_static: bool,
    bodies: bool,
) -> Result<Reply, ToolError> {
    if let Some(url) = &url {
        engine::check_url_scheme(url)?;
    }
    let options = NetworkOptions {
        include_bodies: bodies,
        max_entries: MAX_REQUESTS,
        max_body_bytes: BODY_CAP,
        body_timeout: params::millis(10_000.0),
        stop_after: (max_time > 0.0).then(|| params::millis(max_time)),
        stop_when_idle: (idle > 0.0).then(|| params::millis(idle)),
        exclude_static: !include_static,
    };
    let started = call
        .session
        .network_capture_start(tab.as_deref(), options, call.deadline)
        .await?;
    if started.already_running {
        return Err(ToolError::Face {
            code: "capture_busy",
            message: "a network capture is already running on this tab; stop it first".into(),
            details: Value::Null,
            may_have_run: false,
        });
    }
    let page = call.session.page(tab.as_deref()).await?;
    if let Some(url) = &url {
        page.navigate(url, call.deadline).await?;
    }
    let info = page.info();
    let message = if bodies {
        format!(
            "Network capture started on tab {}. Waiting for stop command or timeout.",
            info.tab_id
        )
    } else {
        "Network capture started successfully, waiting for stop command.".to_owned()
    };
    Ok(Reply::data(json!({
        "success": true, "message": message, "tabId": info.tab_id, "url": info.url,
        "maxCaptureTime": max_time, "inactivityTimeout": idle, "includeStatic": include_static,
        "maxRequests": MAX_REQUESTS, "responseBodyCapBytes": if bodies { json!(BODY_CAP) } else { Value::Null },
    }))
    .on(info))
}

async fn stop(call: &Call, tab: Option<String>, bodies: bool) -> Result<Reply, ToolError> {
    let filter = NetworkFilter {
        url_pattern: None,
        resource_type: None,
        status_min: None,
        status_max: None,
        include_bodies: bodies,
        exclude_static: false,
    };
    let stopped = call
        .session
        .network_capture_stop(tab.as_deref(), filter, call.deadline)
        .await?;
    let (_, current) = call.session.resolve_tab(tab.as_deref()).await?;
    let records = &stopped.records;
    let common_request = common_headers(records.iter().map(|r| Some(&r.request_headers)));
    let common_response = common_headers(records.iter().map(|r| r.response_headers.as_ref()));
    let no_headers = Map::new();
    let requests: Vec<Value> = records
        .iter()
        .map(|r| {
            let response_headers = r.response_headers.as_ref().unwrap_or(&no_headers);
            let mut out = json!({
                "requestId": r.request_id, "url": r.url, "method": r.method,
                "type": r.resource_type.as_deref().map(str::to_lowercase),
                "requestTime": r.started.map(|s| (s * 1000.0).round()),
                "status": r.status, "statusText": r.status_text, "mimeType": r.mime_type,
                "responseTime": r.response_ms,
                "specificRequestHeaders": specific(&r.request_headers, &common_request),
                "specificResponseHeaders": specific(response_headers, &common_response),
            });
            if let Some(body) = &r.post_data {
                out["requestBody"] = json!(body);
            }
            if let Some(error) = &r.error_text {
                out["errorText"] = json!(error);
            }
            if bodies {
                if let Some(body) = &r.body {
                    out["responseBody"] = json!(body.text);
                    out["base64Encoded"] = json!(body.base64);
                    if body.truncated {
                        out["responseBodyTruncated"] =
                            json!({ "keptBytes": BODY_CAP, "totalBytes": body.bytes });
                    }
                }
                if let Some(error) = &r.body_error {
                    out["responseBodyError"] = json!(error);
                }
            }
            out
        })
        .collect();
    let started = stopped.summary.started_ms;
    let ended = stopped.stopped_ms;
    Ok(Reply::data(json!({
        "success": true,
        "message": format!("Capture complete. {} requests captured.", requests.len()),
        "tabId": current.tab_id, "tabUrl": current.url, "tabTitle": current.title,
        "requestCount": requests.len(),
        "commonRequestHeaders": common_request, "commonResponseHeaders": common_response,
        "requests": requests,
        "captureStartTime": started, "captureEndTime": ended, "totalDurationMs": ended.saturating_sub(started),
        "requestLimitReached": stopped.summary.dropped > 0,
        "stoppedBy": stopped.ended_by_itself.unwrap_or("stop command"),
    })))
}

/// Headers every request has, with the same value: said once, not in each request.
fn common_headers<'a>(
    mut headers: impl ExactSizeIterator<Item = Option<&'a Map<String, Value>>>,
) -> Map<String, Value> {
    if headers.len() < 2 {
        return Map::new();
    }
    let Some(Some(first)) = headers.next() else {
        return Map::new();
    };
    let mut common = first.clone();
    for other in headers {
        let Some(other) = other else {
            return Map::new();
        };
        common.retain(|name, value| other.get(name) == Some(value));
    }
    common
}

fn specific(headers: &Map<String, Value>, common: &Map<String, Value>) -> Value {
    let mut own = headers.clone();
    own.retain(|name, _| !common.contains_key(name));
    Value::Object(own)
}

pub async fn request(call: Call, p: Request) -> Result<Reply, ToolError> {
    let page = call.session.page(tab_arg(&p.tabId).as_deref()).await?;
    let form = p.formData.map(|f| {
        let files: Vec<Value> = f["files"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|file| json!({
                "name": file["name"], "filename": file["fileName"].as_str().or(file["filename"].as_str()),
                "type": file["mimeType"].as_str().or(file["type"].as_str()),
                "base64": file["base64Data"],
            }))
            .collect();
        json!({ "fields": f["fields"], "files": files })
    });
    let request = FetchRequest {
        url: p.url,
        method: p.method,
        headers: p
            .headers
            .and_then(|h| h.as_object().cloned())
            .unwrap_or_default(),
        body: p.body,
        form,
        deadline: call.deadline,
    };
    let reply = match page.fetch_in_page(&request).await {
        Ok(response) => Reply::data(json!({
            "success": true,
            "response": {
                "status": response.status, "statusText": response.status_text,
                "headers": response.headers, "body": response.body, "url": response.url,
                "redirected": response.redirected, "bytes": response.bytes,
                "truncated": response.truncated,
            },
        })),
        // The original answers a request that could not be made with its payload,
        // flagged as an error.
        Err(error) if error.input().is_none() => {
            Reply::data(json!({ "success": false, "error": error.to_string() }))
                .failed(error.code().as_str(), error.to_string())
        }
        Err(error) => return Err(error.into()),
    };
    Ok(reply.on(page.info()))
}
