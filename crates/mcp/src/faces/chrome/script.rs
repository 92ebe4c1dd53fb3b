//! Scripts and the console: running JavaScript, reading console output (what the page
//! has logged so far, or a buffer kept from now on), answering dialogs, and scripts left
//! in a tab that take commands.

use serde_json::{Value, json};

use engine::{
    ConsoleKind, ConsolePage, ConsoleRecord, DialogAnswer, DialogOutcome, DialogPolicy,
    ScriptAnswer, ScriptRequest, ScriptWorld,
};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError};
use crate::params;
use crate::tool_params;

tool_params! {
    pub struct Javascript {
        code: String = Str, required, "";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeoutMs: f64 = Millis { max: 600_000.0 }, default(15_000.0), "";
        maxOutputBytes: i64 = Int { min: 1, max: 10_000_000 }, default(51_200), "the result is cut past this (and says so)";
    }
}

tool_params! {
    /// `background` is the original's: tabwire never brings the tab forward for this.
    #[allow(dead_code)]
    pub struct Console {
        url: Option<String> = Str, optional, "open this URL in the session's tab first";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        background: bool = Bool, default(false), "";
        includeExceptions: bool = Bool, default(true), "";
        maxMessages: i64 = Int { min: 1, max: 10_000 }, default(100), "";
        mode: String = Choice(&["snapshot", "buffer"]), default("snapshot"), "";
        buffer: bool = Bool, default(false), "the same as mode: buffer";
        clear: bool = Bool, default(false), "buffer: empty it before reading";
        clearAfterRead: bool = Bool, default(false), "buffer: empty it after reading";
        pattern: Option<String> = Str, optional, "RegExp (or /re/flags) to match";
        onlyErrors: bool = Bool, default(false), "";
        limit: Option<i64> = Int { min: 1, max: 10_000 }, optional, "at most this many messages";
    }
}

tool_params! {
    pub struct HandleDialog {
        action: String = Choice(&["accept", "dismiss"]), required, "";
        promptText: Option<String> = Str, optional, "the answer to a prompt";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    /// `background` is the original's: tabwire never brings the tab forward for this.
    #[allow(dead_code)]
    pub struct InjectScript {
        url: Option<String> = Str, optional, "open this URL in the session's tab first";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        background: bool = Bool, default(false), "";
        r#type: String = Choice(&["ISOLATED", "MAIN"]), required, "the world: ISOLATED (its own) or MAIN (the page's)";
        jsScript: String = Str, required, "runs now and on every later page; answers events with e.detail.respond(x)";
    }
}

tool_params! {
    pub struct SendCommand {
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        eventName: String = Str, required, "the event the injected script listens for";
        payload: Option<String> = Str, optional, "JSON text passed as event.detail.payload";
    }
}

pub async fn javascript(call: Call, p: Javascript) -> Result<Reply, ToolError> {
    let started = std::time::Instant::now();
    let request = ScriptRequest {
        script: p.code,
        // A dialog the script opens stays open for chrome_handle_dialog.
        dialog_policy: DialogPolicy::Manual,
        deadline: call.deadline,
        wait: true,
        cancelled: call.cancelled.clone(),
        // The original gives up at its deadline; a script left running would hold the tab.
        stop_at_deadline: true,
        watch: false,
    };
    let outcome = call
        .session
        .execute_js(tab_arg(&p.tabId).as_deref(), request)
        .await;
    let elapsed = started.elapsed().as_millis() as u64;
    let (tab, ran) = match outcome {
        Ok(done) => done,
        Err(error) if error.input().is_none() => {
            let (_, tab) = call
                .session
                .resolve_tab(tab_arg(&p.tabId).as_deref())
                .await?;
            return Ok(Reply::data(json!({
                "success": false, "tabId": tab.tab_id, "engine": "cdp",
                "error": { "kind": error.code().as_str(), "message": error.to_string() },
                "metrics": { "elapsedMs": elapsed },
            }))
            .failed(error.code().as_str(), error.to_string()));
        }
        Err(error) => return Err(error.into()),
    };
    let ran = match ran {
        ScriptAnswer::Ran(ran) => ran,
        ScriptAnswer::Pending { operation_id, why } => {
            let message = why.failure().unwrap_or_default().to_owned();
            return Ok(Reply::data(json!({
                "success": false, "tabId": tab.tab_id, "engine": "cdp",
                "error": { "kind": why.status(), "message": message, "operationId": operation_id },
                "metrics": { "elapsedMs": elapsed },
            }))
            .failed(why.status(), message)
            .on(tab));
        }
    };
    let text = match &ran.value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let max = p.maxOutputBytes as usize;
    let mut result = json!({
        "success": true, "tabId": tab.tab_id, "engine": "cdp",
        "result": cut(&text, max), "metrics": { "elapsedMs": elapsed },
    });
    if text.len() > max {
        result["truncated"] = json!(true);
        result["totalBytes"] = json!(text.len());
    }
    if let Some(url) = &ran.landed_url {
        result["navigated"] = json!({ "landedUrl": url });
    }
    if let Some(file) = &ran.spilled {
        result["resultFile"] = json!(file.path);
    }
    Ok(Reply::data(result).on(tab))
}

/// At most `max` bytes of `text`, cut at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

pub async fn console(call: Call, p: Console) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    if let Some(url) = &p.url {
        let (page, _) = call.session.page_to_navigate(tab.as_deref()).await?;
        page.navigate(url, call.deadline).await?;
    }
    let started = engine::ids::now_ms();
    let max = p.limit.unwrap_or(p.maxMessages) as usize;
    let buffered = p.buffer || p.mode == "buffer";
    let mut records = if buffered {
        let begun = call
            .session
            .console_capture_start(tab.as_deref(), 2000, call.deadline)
            .await?;
        let fresh = !begun.already_running;
        if p.clear {
            let empty = ConsolePage {
                offset: 0,
                max_items: 0,
                clear: true,
                user_only: true,
            };
            call.session.console_messages(tab.as_deref(), empty).await?;
        }
        let read = ConsolePage {
            offset: 0,
            max_items: usize::MAX,
            clear: p.clearAfterRead,
            user_only: true,
        };
        let mut records = call
            .session
            .console_messages(tab.as_deref(), read)
            .await?
            .messages;
        // A buffer started just now holds nothing yet: what the page logged before is
        // read at once instead.
        if fresh && records.is_empty() {
            records = call
                .session
                .console_snapshot(tab.as_deref(), 2000, call.deadline)
                .await?;
        }
        records
    } else {
        call.session
            .console_snapshot(tab.as_deref(), 2000, call.deadline)
            .await?
    };
    let exception = |r: &ConsoleRecord| r.kind == ConsoleKind::Exception;
    if p.onlyErrors {
        records.retain(|r| r.level == "error" || exception(r));
    }
    if !p.includeExceptions {
        records.retain(|r| !exception(r));
    }
    if let Some(pattern) = &p.pattern {
        let page = call.session.page(tab.as_deref()).await?;
        let texts: Vec<Value> = records.iter().map(|r| json!(r.text)).collect();
        let texts: Vec<&Value> = texts.iter().collect();
        let keep = page.regex_filter(pattern, &texts, call.deadline).await?;
        let mut keep = keep.into_iter();
        records.retain(|_| keep.next().unwrap_or(false));
    }
    let (exceptions, messages): (Vec<ConsoleRecord>, Vec<ConsoleRecord>) =
        records.into_iter().partition(exception);
    let limited = messages.len() > max;
    let messages: Vec<Value> = messages.into_iter().rev().take(max).rev().map(|m| json!({
        "timestamp": m.timestamp, "level": m.level, "text": m.text, "url": m.url, "lineNumber": m.line,
    })).collect();
    let exceptions: Vec<Value> = exceptions.into_iter().map(|e| json!({
        "timestamp": e.timestamp, "text": e.text, "url": e.url, "lineNumber": e.line, "columnNumber": e.column,
    })).collect();
    let (_, current) = call.session.resolve_tab(tab.as_deref()).await?;
    let ended = engine::ids::now_ms();
    let message = if buffered {
        format!(
            "Console buffer read for tab {}. Returned {} messages and {} exceptions.",
            current.tab_id,
            messages.len(),
            exceptions.len()
        )
    } else {
        format!(
            "Console capture completed for tab {}. {} messages, {} exceptions captured.",
            current.tab_id,
            messages.len(),
            exceptions.len()
        )
    };
    Ok(Reply::data(json!({
        "success": true, "message": message, "tabId": current.tab_id, "tabUrl": current.url, "tabTitle": current.title,
        "captureStartTime": started, "captureEndTime": ended, "totalDurationMs": ended - started,
        "messages": messages, "exceptions": exceptions,
        "messageCount": messages.len(), "exceptionCount": exceptions.len(), "messageLimitReached": limited,
        "mode": if buffered { "buffer" } else { "snapshot" },
    })))
}

pub async fn handle_dialog(call: Call, p: HandleDialog) -> Result<Reply, ToolError> {
    let answer = if p.action == "accept" {
        DialogAnswer::Accept
    } else {
        DialogAnswer::Dismiss
    };
    let outcome = call
        .session
        .answer_dialog(
            tab_arg(&p.tabId).as_deref(),
            answer,
            p.promptText.as_deref(),
            call.deadline.within(params::millis(3000.0)),
        )
        .await?;
    match outcome {
        DialogOutcome::NoDialog => Err(ToolError::Face {
            code: "no_dialog",
            message: "No JavaScript dialog is open in the tab".into(),
            details: Value::Null,
            may_have_run: false,
        }),
        DialogOutcome::Accepted {
            dialog,
            prompt_text,
        } => Ok(Reply::data(json!({
            "success": true, "action": "accept", "promptText": prompt_text, "dialog": dialog,
        }))),
        DialogOutcome::Dismissed { dialog } => Ok(Reply::data(json!({
            "success": true, "action": "dismiss", "promptText": Value::Null, "dialog": dialog,
        }))),
        other => Ok(Reply::data(json!({ "success": true, "outcome": other }))),
    }
}

fn world(name: &str) -> ScriptWorld {
    if name == "MAIN" {
        ScriptWorld::Main
    } else {
        ScriptWorld::Isolated
    }
}

pub async fn inject_script(call: Call, p: InjectScript) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let (page, _) = call.session.page_to_navigate(tab.as_deref()).await?;
    if let Some(url) = &p.url {
        page.navigate(url, call.deadline).await?;
    }
    let injected = page
        .inject(world(&p.r#type), &p.jsScript, call.deadline)
        .await?;
    call.session.remember_injection(page.tab.tab_id, &p.r#type);
    Ok(
        Reply::data(json!({ "injected": true, "world": p.r#type, "identifier": injected }))
            .on(page.info()),
    )
}

pub async fn send_command(call: Call, p: SendCommand) -> Result<Reply, ToolError> {
    let page = call.session.page(tab_arg(&p.tabId).as_deref()).await?;
    let Some(kind) = call.session.injection(page.tab.tab_id) else {
        return Err(ToolError::Face {
            code: "not_injected",
            message: "No script injected in this tab.".into(),
            details: Value::Null,
            may_have_run: false,
        });
    };
    let payload = match &p.payload {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| ToolError::param("payload", format!("is not JSON: {e}")))?,
        None => Value::Null,
    };
    let answer = page
        .command(world(&kind), &p.eventName, &payload, call.deadline)
        .await?;
    Ok(Reply::data(answer).on(page.info()))
}
