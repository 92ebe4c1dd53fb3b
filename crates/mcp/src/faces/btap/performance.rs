//! tabwire's performance traces in BrowserTap's envelope (`performance_trace_start`,
//! `_stop`, `_insight`): the engine's traces and insights, under names that do not clash
//! with the chrome face's when both are served.

use serde_json::json;

use super::args::named;
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::tool_params;

tool_params! {
    pub struct Start {
        reload: bool = Bool, default(true), "reload the page (cache bypassed) once tracing, to record its load";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct Stop {
        save: bool = Bool, default(true), "save the trace as trace-event JSON under the output dir";
        filename_prefix: String = Str, default("performance_trace"), "the saved file's name starts with this";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct Insight {
        insightName: String = Str, default(""), "LCPBreakdown, CLSCulprits, INPBreakdown, LongTasks, RenderBlocking, DocumentLatency, ThirdParties or DOMSize; empty: the summary";
        insightSetId: String = Str, default(""), "which navigation (from the stop's insight_sets); empty: the first";
    }
}

pub async fn start(call: Call, p: Start) -> Result<Reply, ToolError> {
    let tab = call
        .session
        .trace_start(
            named(&p.session_id, &None).as_deref(),
            p.reload,
            call.deadline,
        )
        .await?;
    Ok(
        Reply::data(json!({ "status": "tracing", "reload": p.reload }))
            .on(tab)
            .lean("tracing; stop with performance_trace_stop"),
    )
}

pub async fn stop(call: Call, p: Stop) -> Result<Reply, ToolError> {
    let (tab, stopped) = call
        .session
        .trace_stop(
            named(&p.session_id, &None).as_deref(),
            p.save.then_some(p.filename_prefix.as_str()),
            call.deadline,
        )
        .await?;
    let report = &stopped.report;
    let summary = report.summary();
    let data = json!({
        "status": "stopped",
        "event_count": report.event_count,
        "saved_path": stopped.saved.as_ref().map(|w| &w.path),
        "bytes": stopped.saved.as_ref().map(|w| w.bytes),
        "insight_sets": report.sets,
        "dom": report.dom,
        "summary": summary,
    });
    Ok(Reply::data(data).on(tab).lean(summary))
}

pub async fn insight(call: Call, p: Insight) -> Result<Reply, ToolError> {
    let Some(report) = call.session.last_trace() else {
        return Err(ToolError::param(
            "insightName",
            "no trace has been recorded in this session yet; run performance_trace_start, then performance_trace_stop",
        ));
    };
    let set = report.set(Some(&p.insightSetId)).ok_or_else(|| {
        let ids: Vec<&str> = report.sets.iter().map(|s| s.id.as_str()).collect();
        ToolError::param(
            "insightSetId",
            format!(
                "is not one of this trace's insight sets: {}",
                ids.join(", ")
            ),
        )
    })?;
    let text = if p.insightName.is_empty() {
        report.summary()
    } else {
        report.insight(&p.insightName, set).ok_or_else(|| {
            ToolError::param(
                "insightName",
                format!(
                    "'{}' is not an insight; use one of {}",
                    p.insightName,
                    engine::INSIGHTS.join(", ")
                ),
            )
        })?
    };
    let data = json!({
        "status": "ok", "insight_set_id": set.id, "insight_name": p.insightName, "report": text,
    });
    Ok(Reply::data(data).lean(text))
}
