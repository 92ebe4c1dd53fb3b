//! Reading pages: the lean outline with refs (`chrome_read_page`), the main content or
//! cleaned HTML (`chrome_get_web_content`), the controls as a list
//! (`chrome_get_interactive_elements`), and search across tabs (not built yet).

use serde_json::{Value, json};

use engine::search::SearchRequest;
use engine::{OutlineStyle, TreeRequest};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

tool_params! {
    pub struct ReadPage {
        filter: Option<String> = Choice(&["interactive", "all"]), optional, "interactive: controls only";
        depth: Option<i64> = Int { min: 0, max: 1000 }, optional, "how many levels of the outline to show";
        refId: Option<String> = Str, optional, "only this ref's subtree";
        viewportOnly: bool = Bool, default(true), "false: the whole page, not only the viewport";
        cursor: Option<String> = Str, optional, "read on from a cut reply: its continuation cursor";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    /// `textContent` is the original's older switch; text is what is read unless html is asked.
    #[allow(dead_code)]
    pub struct WebContent {
        url: Option<String> = Str, optional, "the tab with this URL (opened if none)";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        background: bool = Bool, default(false), "";
        format: Option<String> = Choice(&["text", "html"]), optional, "text (main content; default) or html (cleaned)";
        htmlContent: bool = Bool, default(false), "the older form of format: html";
        textContent: bool = Bool, default(true), "the older form of format: text";
        selector: Option<String> = Str, optional, "only this element's content";
    }
}

tool_params! {
    pub struct InteractiveElements {
        textQuery: Option<String> = Str, optional, "only controls whose text contains this";
        selector: Option<String> = Str, optional, "only controls matching this CSS selector";
        includeCoordinates: bool = Bool, default(true), "";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    pub struct SearchTabs {
        query: String = Str, required, "a description in any language, or an exact identifier";
        maxResults: i64 = Int { min: 1, max: 50 }, default(10), "";
        tabIds: Option<Vec<u64>> = IntList, optional, "";
        windowIds: Option<Vec<u64>> = IntList, optional, "";
    }
}

/// Characters of outline in one reply: the exact reply's whole-page reads fit (a
/// 10,000-element page is about 150,000), a lean one stays a comfortable read.
const EXACT_BUDGET: usize = 200_000;
const LEAN_BUDGET: usize = 50_000;

pub async fn read_page(call: Call, p: ReadPage) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    let lean = call.settings.lean();
    let start_line = match p.cursor.as_deref().map(str::trim) {
        None | Some("") => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            ToolError::param(
                "cursor",
                "is the continuation cursor of an earlier read, like \"812\"",
            )
        })?,
    };
    let request = TreeRequest {
        interactive_only: p.filter.as_deref() == Some("interactive"),
        viewport_only: p.viewportOnly && p.refId.is_none(),
        depth: p.depth.map(|d| d as u32),
        focus_ref: p.refId.clone(),
        style: if lean {
            OutlineStyle::Lean
        } else {
            OutlineStyle::Exact
        },
        start_line,
        max_chars: Some(if lean { LEAN_BUDGET } else { EXACT_BUDGET }),
        frame: Vec::new(),
    };
    let snapshot = page.read_tree(&request, call.deadline).await?;
    let info = page.info();
    let offscreen = (request.viewport_only && snapshot.offscreen > 0).then_some(snapshot.offscreen);
    // Lean on purpose: the outline is what an agent reads; the rest is said only when it
    // tells something.
    let mut data = json!({
        "success": true,
        "tabId": info.tab_id,
        "url": snapshot.url,
        "title": snapshot.title,
        "pageContent": snapshot.text,
        "refMapCount": snapshot.refs,
        "viewport": { "width": snapshot.viewport.width, "height": snapshot.viewport.height, "dpr": snapshot.viewport.dpr },
    });
    if let Some(count) = offscreen {
        data["offscreen"] = json!(count);
        data["tips"] = json!(
            "more controls are outside the viewport: scroll, or read with viewportOnly: false"
        );
    }
    if snapshot.truncated || snapshot.next_line.is_some() {
        data["truncated"] = json!(true);
    }
    if let Some(next) = snapshot.next_line {
        data["continuation"] =
            json!({ "cursor": next.to_string(), "lines_remaining": snapshot.lines - next });
    }
    if let Some(reference) = &p.refId {
        data["focus"] = json!({ "refId": reference, "found": true });
    }
    let lean_text = crate::lean::outline(&snapshot, &format!("tab {}", info.tab_id), offscreen);
    Ok(Reply::data(data).on(info).lean(lean_text))
}

pub async fn get_web_content(call: Call, p: WebContent) -> Result<Reply, ToolError> {
    let handle = match (&p.tabId, &p.url) {
        (Some(_), _) => tab_arg(&p.tabId),
        (None, Some(url)) => Some(
            call.session
                .tab_showing(url, p.background, call.deadline)
                .await?,
        ),
        (None, None) => None,
    };
    let page = call.session.page(handle.as_deref()).await?;
    let selector = p.selector.clone().map(Value::String);
    let html = p.format.as_deref() == Some("html") || (p.format.is_none() && p.htmlContent);
    let deadline = call.deadline;
    let data = if html {
        let cleaned = page.clean_html(selector, deadline).await?;
        json!({ "success": true, "url": cleaned.url, "title": cleaned.title, "htmlContent": cleaned.html })
    } else {
        let content = page.main_content(selector, deadline).await?;
        let mut data = json!({
            "success": true, "url": content.url, "title": content.title, "textContent": content.text,
        });
        if let Some(article) = content.article {
            data["article"] = json!({
                "title": article.title, "byline": article.byline, "siteName": article.site_name,
                "excerpt": article.excerpt, "lang": article.lang,
            });
        }
        if let Some(meta) = content.metadata {
            data["metadata"] = json!({
                "title": meta.title, "description": meta.description, "author": meta.author,
                "keywords": meta.keywords, "published": meta.published, "siteName": meta.site_name,
            });
        }
        data
    };
    let info = page.info();
    Ok(Reply::data(data).on(info))
}

pub async fn get_interactive_elements(
    call: Call,
    p: InteractiveElements,
) -> Result<Reply, ToolError> {
    let page = call.session.page(tab_arg(&p.tabId).as_deref()).await?;
    let request = TreeRequest {
        interactive_only: true,
        viewport_only: false,
        ..TreeRequest::default()
    };
    let snapshot = page.read_tree(&request, call.deadline).await?;
    let query = p.textQuery.unwrap_or_default().to_lowercase();
    let wanted = match &p.selector {
        Some(css) => Some(page.refs_matching(css, call.deadline).await?),
        None => None,
    };
    let elements: Vec<Value> = snapshot
        .controls
        .iter()
        .filter(|c| query.is_empty() || c.name.to_lowercase().contains(&query))
        .filter(|c| {
            wanted
                .as_ref()
                .is_none_or(|refs| refs.contains(&c.reference))
        })
        .map(|c| {
            let mut element = json!({
                "type": c.role, "text": c.name, "ref": c.reference,
                "isInteractive": true, "disabled": c.disabled,
            });
            if p.includeCoordinates
                && let Some((x, y)) = c.point
            {
                element["coordinates"] = json!({ "x": x, "y": y });
            }
            element
        })
        .collect();
    Ok(Reply::data(json!({
        "success": true, "count": elements.len(), "elements": elements,
        "query": { "textQuery": query, "types": "all" },
    }))
    .on(page.info()))
}

pub async fn search_tabs_content(call: Call, p: SearchTabs) -> Result<Reply, ToolError> {
    let request = SearchRequest {
        query: p.query,
        max_results: p.maxResults as usize,
        tab_ids: p.tabIds,
        window_ids: p.windowIds,
        ranking: None,
    };
    let report = call.session.search_tabs(&request).await?;
    let matched: Vec<Value> = report
        .hits
        .iter()
        .map(|hit| {
            json!({
                "tabId": hit.tab.tab_id,
                "url": hit.tab.url,
                "title": hit.tab.title,
                "semanticScore": (f64::from(hit.similarity) * 1000.0).round() / 1000.0,
                "matchedSnippets": [hit.snippet],
                "chunkSource": hit.source.as_str(),
                "timestamp": hit.tab.indexed_at_ms,
            })
        })
        .collect();
    let stats = &report.stats;
    let mut index_stats = json!({
        "totalDocuments": stats.chunks,
        "totalTabs": stats.tabs,
        "indexedPages": stats.tabs,
        "semanticEngineReady": stats.vector_search_off.is_none(),
        "semanticEngineInitializing": report.not_embedded > 0,
        "waitedForTabs": report.waited_for,
        "passagesNotYetEmbedded": report.not_embedded,
    });
    if let Some(why) = &stats.vector_search_off {
        index_stats["semanticEngineError"] = json!(why);
    }
    Ok(Reply::data(json!({
        "success": true,
        "totalTabsSearched": report.tabs_searched,
        "matchedTabsCount": matched.len(),
        "vectorSearchEnabled": stats.vector_search_off.is_none(),
        "indexStats": index_stats,
        "matchedTabs": matched,
    })))
}
