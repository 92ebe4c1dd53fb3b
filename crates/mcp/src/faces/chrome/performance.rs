//! Performance traces, as the Chrome MCP Server names them (`performance_start_trace`,
//! `performance_stop_trace`, `performance_analyze_insight`), with the insights read in
//! the engine and Chrome DevTools MCP's `insightSetId` taken too.

use serde_json::{Value, json};

use engine::{StoppedTrace, TraceReport};

use crate::face::{Call, Reply, ToolError};
use crate::params;
use crate::tool_params;

tool_params! {
    pub struct StartTrace {
        reload: bool = Bool, default(false), "reload the page (cache bypassed) once tracing, to record its load";
        autoStop: bool = Bool, default(false), "stop by itself after durationMs, and save";
        durationMs: f64 = Num { min: 100.0, max: 60_000.0 }, default(5000.0), "with autoStop: how long to record";
    }
}

tool_params! {
    pub struct StopTrace {
        saveToDownloads: bool = Bool, default(true), "save the trace as JSON under the output dir";
        filenamePrefix: Option<String> = Str, optional, "the saved file's name starts with this";
    }
}

tool_params! {
    /// `timeoutMs` is the call's time limit (the server's deadline reads it).
    #[allow(dead_code)]
    pub struct AnalyzeInsight {
        insightName: Option<String> = Str, optional, "LCPBreakdown, CLSCulprits, INPBreakdown, LongTasks, RenderBlocking, DocumentLatency, ThirdParties or DOMSize; none: the summary";
        insightSetId: Option<String> = Str, optional, "which navigation (the stop's insightSets); default: the first";
        timeoutMs: f64 = Millis { max: 600_000.0 }, default(60_000.0), "";
    }
}

pub async fn start_trace(call: Call, p: StartTrace) -> Result<Reply, ToolError> {
    let deadline = call.deadline;
    let tab = call.session.trace_start(None, p.reload, deadline).await?;
    if !p.autoStop {
        return Ok(Reply::data(json!({
            "success": true,
            "message": "Performance trace is recording. Use performance_stop_trace to stop it.",
            "reload": p.reload, "autoStop": false,
        }))
        .on(tab));
    }
    // Recording for a set time is the wait itself: nothing else marks its end. It
    // leaves the stop half of the call's time at least.
    let recording = params::millis(p.durationMs).min(call.deadline.remaining() / 2);
    tokio::time::sleep(recording).await;
    let (tab, stopped) = call
        .session
        .trace_stop(Some(&tab.handle), Some("performance_trace"), call.deadline)
        .await?;
    let mut data = stopped_json(&stopped);
    data["reload"] = json!(p.reload);
    data["autoStop"] = json!(true);
    Ok(Reply::data(data).on(tab))
}

pub async fn stop_trace(call: Call, p: StopTrace) -> Result<Reply, ToolError> {
    let prefix = p.filenamePrefix.as_deref().unwrap_or("performance_trace");
    let (tab, stopped) = call
        .session
        .trace_stop(None, p.saveToDownloads.then_some(prefix), call.deadline)
        .await?;
    Ok(Reply::data(stopped_json(&stopped)).on(tab))
}

pub async fn analyze_insight(call: Call, p: AnalyzeInsight) -> Result<Reply, ToolError> {
    let Some(report) = call.session.last_trace() else {
        return Err(ToolError::param(
            "insightName",
            "no trace has been recorded in this session yet; run performance_start_trace, then performance_stop_trace",
        ));
    };
    let set = report.set(p.insightSetId.as_deref()).ok_or_else(|| {
        ToolError::param(
            "insightSetId",
            format!(
                "is not one of this trace's insight sets: {}",
                set_ids(&report)
            ),
        )
    })?;
    let insight = match p.insightName.as_deref().filter(|n| !n.is_empty()) {
        Some(name) => Some(report.insight(name, set).ok_or_else(|| {
            ToolError::param(
                "insightName",
                format!(
                    "'{name}' is not an insight; use one of {}",
                    engine::INSIGHTS.join(", ")
                ),
            )
        })?),
        None => None,
    };
    let mut data = json!({
        "success": true,
        "url": report.url,
        "startedAt": report.started_ms,
        "endedAt": report.stopped_ms,
        "durationMs": report.stopped_ms.saturating_sub(report.started_ms),
        "insightSetId": set.id,
        "metrics": metrics(set),
        "summary": report.summary(),
    });
    if let Some(insight) = insight {
        data["requestedInsight"] = json!(p.insightName);
        data["insight"] = json!(insight);
    }
    Ok(Reply::data(data))
}

fn set_ids(report: &TraceReport) -> String {
    report
        .sets
        .iter()
        .map(|s| s.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The headline figures of one navigation.
fn metrics(set: &engine::InsightSet) -> Value {
    json!({
        "lcpMs": set.lcp.as_ref().map(|l| l.time_ms),
        "cls": set.cls.score,
        "inpMs": set.inp.as_ref().map(|i| i.duration_ms),
        "fcpMs": set.fcp_ms,
        "ttfbMs": set.document.as_ref().map(|d| d.time_to_first_byte_ms),
        "totalBlockingTimeMs": set.total_blocking_time_ms,
        "longTasks": set.long_tasks.len(),
    })
}

/// What the original's stop answers, with the insight sets beside it.
fn stopped_json(stopped: &StoppedTrace) -> Value {
    let report = &stopped.report;
    let saved = stopped.saved.as_ref().map(|written| {
        json!({
            "filename": written.path.file_name().map(|n| n.to_string_lossy().into_owned()),
            "fullPath": written.path, "bytes": written.bytes,
        })
    });
    json!({
        "success": true,
        "message": "The performance trace has been stopped.",
        "eventCount": report.event_count,
        "saved": saved,
        "fullPath": stopped.saved.as_ref().map(|w| &w.path),
        "metrics": report.sets.first().map(metrics),
        "insightSets": report.sets.iter().map(|s| json!({
            "insightSetId": s.id, "url": s.url, "metrics": metrics(s),
        })).collect::<Vec<_>>(),
        "startedAt": report.started_ms,
        "endedAt": report.stopped_ms,
        "durationMs": report.stopped_ms.saturating_sub(report.started_ms),
        "url": report.url,
        "tracingCompleted": true,
        "summary": report.summary(),
    })
}
