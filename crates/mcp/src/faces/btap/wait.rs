//! Waiting and scrolling: condition waits, URL waits, scroll positions.

use serde_json::{Value, json};

use engine::{Condition, EngineError, Locator, ScrollTo, Waited};

use super::args::{named, with_ref};
use super::envelope;
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::tool_params;

tool_params! {
    pub struct ScrollPage {
        to: String = Str, default("bottom"), "bottom, end, top, start, a pixel offset, or a CSS selector or ref";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct WaitFor {
        selector: Option<Value> = Locator, nullable, "as page_click's selector (a ref from a read too)";
        r#ref: Option<String> = Str, unlisted, "";
        text: Option<String> = Str, nullable, "substring of the body text";
        url_pattern: Option<String> = Str, nullable, "regex or substring of the URL";
        js: Option<String> = Str, nullable, "expression to become truthy (may have side effects)";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
        gone: bool = Bool, default(false), "wait for the condition to stop holding";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct WaitForUrl {
        url_pattern: String = Str, required, "regex or substring";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        wait_ready: bool = Bool, default(true), "also require readyState complete";
    }
}

pub async fn scroll_page(call: Call, p: ScrollPage) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    // "1200" is a pixel offset, not a CSS selector; "end" and "start" are BrowserTap's
    // names for bottom and top.
    let to = match p.to.trim() {
        "end" | "bottom" => Ok(ScrollTo::Bottom),
        "start" | "top" => Ok(ScrollTo::Top),
        other => match other.parse::<f64>() {
            Ok(pixels) => Ok(ScrollTo::Offset(pixels)),
            Err(_) => Locator::css_or_ref(&p.to).map(ScrollTo::Element),
        },
    };
    let scrolled = match to {
        Ok(to) => page.scroll(to, call.deadline).await,
        Err(error) => Err(error),
    };
    let scrolled = match scrolled {
        Ok(scrolled) => scrolled,
        Err(error) => {
            let base = json!({
                "selector": p.to,
                "note": format!(
                    "'{}' matched nothing on the page: give a selector that does, or top, bottom or a pixel offset",
                    p.to
                ),
            });
            return envelope::reported_with(error.into(), base).map(|r| r.on(page.info()));
        }
    };
    Ok(Reply::data(scroll_facts(scrolled)).on(page.info()))
}

/// A scroll's result in BrowserTap's words (`doc_height`, `status: success`), tabwire's
/// own facts (`at_top`, `scroll_x`, a scrolled element) kept beside.
fn scroll_facts(scrolled: engine::Scrolled) -> Value {
    let mut facts = json!(scrolled);
    facts["status"] = json!("success");
    facts["doc_height"] = json!(scrolled.scroll_height);
    facts
}

/// Which condition a wait watches, in BrowserTap's words (`selector gone`).
fn condition(given: &str, gone: bool) -> String {
    if gone {
        format!("{given} gone")
    } else {
        given.to_owned()
    }
}

pub async fn wait_for(call: Call, mut p: WaitFor) -> Result<Reply, ToolError> {
    let selector = p.selector.take().unwrap_or(Value::Null);
    p.selector = Some(with_ref(selector, p.r#ref.as_deref())?).filter(|s| !s.is_null());
    let given: Vec<&str> = [
        ("selector", p.selector.is_some()),
        ("text", p.text.is_some()),
        ("url_pattern", p.url_pattern.is_some()),
        ("js", p.js.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
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
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let condition = condition(given[0], p.gone);
    let started = std::time::Instant::now();
    let waited = wait_condition(&page, &p, call.deadline).await;
    let (url, title) = page.url_and_title().await.unwrap_or_default();
    let mut data = json!({
        "condition": condition,
        "waited_ms": started.elapsed().as_millis() as u64,
        "url": url,
        "title": title,
    });
    match waited {
        Ok(facts) => {
            data["status"] = json!("success");
            data["checks"] = json!(facts.checks);
            Ok(Reply::data(data).on(page.info()))
        }
        Err(error) if timed_out(&error) => {
            data["status"] = json!("timeout");
            data["hint"] = json!(
                "the condition did not hold within the timeout: check the selector or text against scan_page, or wait longer"
            );
            Ok(Reply::data(data)
                .failed("timeout", error.to_string())
                .on(page.info()))
        }
        Err(error) => Err(error),
    }
}

async fn wait_condition(
    page: &engine::Page,
    p: &WaitFor,
    deadline: engine::Deadline,
) -> Result<Waited, ToolError> {
    let condition = match (&p.js, &p.selector, &p.text, &p.url_pattern) {
        (Some(js), ..) => Condition::Script(js.clone()),
        (_, Some(selector), ..) => Condition::Element(Locator::parse(selector)?),
        (_, _, Some(text), _) => Condition::Text(text.clone()),
        (_, _, _, url) => Condition::Url(url.clone().unwrap_or_default()),
    };
    Ok(page.wait_for(&condition, p.gone, deadline).await?)
}

fn timed_out(error: &ToolError) -> bool {
    matches!(error, ToolError::Engine(EngineError::Timeout { .. }))
}

pub async fn wait_for_url(call: Call, p: WaitForUrl) -> Result<Reply, ToolError> {
    if p.url_pattern.trim().is_empty() {
        return Err(ToolError::param("url_pattern", "must not be empty"));
    }
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let started = std::time::Instant::now();
    let waited = page
        .wait_for_url(&p.url_pattern, p.wait_ready, call.deadline)
        .await;
    let mut data = json!({
        "url_pattern": p.url_pattern,
        "waited_ms": started.elapsed().as_millis() as u64,
        "waited_for_ready": p.wait_ready,
    });
    match waited {
        Ok((_, landed)) => {
            data["status"] = json!("success");
            data["url"] = json!(landed.url);
            data["title"] = json!(landed.title);
            data["ready_state"] = json!(landed.ready_state);
            Ok(Reply::data(data).on(page.info()))
        }
        Err(EngineError::Timeout { .. }) => {
            let state = page.readiness().await.unwrap_or_default();
            data["status"] = json!("timeout");
            data["url"] = json!(state.url);
            data["title"] = json!(state.title);
            data["ready_state"] = json!(state.ready_state);
            data["hint"] = json!(format!(
                "the tab is at {} (readyState {}), which the pattern does not match",
                state.url, state.ready_state
            ));
            Ok(Reply::data(data)
                .failed("timeout", "the URL did not match within the timeout")
                .on(page.info()))
        }
        Err(error) => Err(error.into()),
    }
}
