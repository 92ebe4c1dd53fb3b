//! Browser data: history, bookmarks (by folder path, a backup before every delete),
//! and downloads a page starts.

use serde_json::{Value, json};

use engine::data::{bookmarks, history};
use engine::{DownloadWait, FoundDownload};

use super::tab_arg;
use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

tool_params! {
    pub struct History {
        text: String = Str, default(""), "words in the URL or title";
        startTime: Option<String> = Str, optional, "ISO date, \"3 days ago\", today, yesterday (default: 24 h ago)";
        endTime: Option<String> = Str, optional, "until (default: now)";
        maxResults: i64 = Int { min: 1, max: 100_000 }, default(100), "";
        excludeCurrentTabs: bool = Bool, default(false), "leave out pages open in a tab now";
    }
}

tool_params! {
    pub struct BookmarkSearch {
        query: String = Str, default(""), "words in the title or URL; empty: all";
        maxResults: i64 = Int { min: 1, max: 100_000 }, default(50), "";
        folderPath: Option<String> = Str, optional, "a folder path (Work/Resources) or id";
    }
}

tool_params! {
    pub struct BookmarkAdd {
        url: Option<String> = Str, optional, "default: this session's tab's URL";
        title: Option<String> = Str, optional, "default: the page's title";
        parentId: Option<String> = Str, optional, "folder path (Work/Resources) or id";
        createFolder: bool = Bool, default(false), "create missing folders";
    }
}

tool_params! {
    pub struct BookmarkDelete {
        bookmarkId: Option<String> = Str, optional, "";
        url: Option<String> = Str, optional, "delete the bookmarks of this URL";
        title: Option<String> = Str, optional, "with url: only the one with this title";
    }
}

tool_params! {
    pub struct HandleDownload {
        filenameContains: Option<String> = Str, optional, "a part of the file name or URL";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeoutMs: f64 = Millis { max: 300_000.0 }, default(60_000.0), "";
        waitForComplete: bool = Bool, default(true), "wait for it to finish (else: for it to start)";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "a tab of the browser to watch";
    }
}

async fn browser(call: &Call) -> Result<std::sync::Arc<engine::Browser>, ToolError> {
    Ok(call.session.browser_for(None).await?)
}

/// `Bookmarks bar > Work`, as the original writes folder paths.
fn folder_path(folders: &[String]) -> String {
    folders.join(" > ")
}

fn bookmark_json(b: &bookmarks::Bookmark) -> Value {
    json!({ "id": b.id, "title": b.title, "url": b.url, "dateAdded": b.date_added, "folderPath": folder_path(&b.folders) })
}

pub async fn history(call: Call, p: History) -> Result<Reply, ToolError> {
    let now = history::local_now();
    let now_ms = now.timestamp().as_millisecond() as f64;
    let start = match &p.startTime {
        Some(t) => history::parse_time(t, &now)?,
        None => now_ms - 86_400_000.0,
    };
    let end = match &p.endTime {
        Some(t) => history::parse_time(t, &now)
            .map_err(|e| ToolError::param("endTime", e.bare_message()))?,
        None => now_ms,
    };
    if end < start {
        return Err(ToolError::param("endTime", "is before startTime"));
    }
    let browser = browser(&call).await?;
    let mut items = history::search(&browser, &p.text, start, end, p.maxResults as u64).await?;
    if p.excludeCurrentTabs {
        let open: Vec<String> = call
            .session
            .list_tabs(false)
            .await?
            .tabs
            .into_iter()
            .map(|t| t.url)
            .collect();
        items.retain(|item| !open.contains(&item.url));
    }
    let mut data = json!({
        "items": items.iter().map(history_item).collect::<Vec<_>>(),
        "totalCount": items.len(),
        "timeRange": {
            "startTime": start, "endTime": end,
            "startTimeFormatted": history::format_time(start, now.time_zone()),
            "endTimeFormatted": history::format_time(end, now.time_zone()),
        },
    });
    if !p.text.is_empty() {
        data["query"] = json!(p.text);
    }
    Ok(Reply::data(data))
}

pub async fn bookmark_search(call: Call, p: BookmarkSearch) -> Result<Reply, ToolError> {
    let browser = browser(&call).await?;
    let found = bookmarks::search(
        &browser,
        &p.query,
        p.folderPath.as_deref(),
        p.maxResults as usize,
    )
    .await?;
    Ok(Reply::data(json!({
        "success": true,
        "totalResults": found.len(),
        "query": if p.query.is_empty() { Value::Null } else { json!(p.query) },
        "folderSearched": p.folderPath.clone().unwrap_or_else(|| "All bookmarks".into()),
        "bookmarks": found.iter().map(bookmark_json).collect::<Vec<_>>(),
    })))
}

pub async fn bookmark_add(call: Call, p: BookmarkAdd) -> Result<Reply, ToolError> {
    let (url, title) = match p.url {
        Some(url) => (url, p.title),
        None => {
            let page = call.session.page(None).await?;
            let (url, title) = page.url_and_title().await?;
            (url, p.title.or(Some(title)))
        }
    };
    let browser = browser(&call).await?;
    let (parent, created) = match &p.parentId {
        Some(path) => bookmarks::folder(&browser, path, p.createFolder)
            .await
            .map(|(folder, created)| (Some(folder), created))
            .map_err(|e| match e.input() {
                Some(_) => ToolError::param("parentId", e.bare_message()),
                None => e.into(),
            })?,
        None => (None, false),
    };
    let title = title
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| url.clone());
    let parent_id = parent.as_ref().map(|folder| folder.id.as_str());
    let node = bookmarks::create(&browser, &title, Some(&url), parent_id).await?;
    let folders = bookmarks::path_of(&browser, &node)
        .await
        .unwrap_or_default();
    Ok(Reply::data(json!({
        "success": true, "message": "Bookmark added successfully",
        "bookmark": { "id": node.id, "title": node.title, "url": node.url, "dateAdded": node.date_added, "folderPath": folder_path(&folders) },
        "folderCreated": created,
    })))
}

pub async fn bookmark_delete(call: Call, p: BookmarkDelete) -> Result<Reply, ToolError> {
    let browser = browser(&call).await?;
    let targets: Vec<bookmarks::Bookmark> = match (&p.bookmarkId, &p.url) {
        (Some(id), _) => {
            let node = bookmarks::subtree(&browser, id).await?;
            let folders = bookmarks::path_of(&browser, &node)
                .await
                .unwrap_or_default();
            vec![bookmarks::Bookmark {
                id: id.clone(),
                title: node.title,
                url: node.url.unwrap_or_default(),
                date_added: node
                    .date_added
                    .as_ref()
                    .and_then(serde_json::Number::as_f64),
                folders,
            }]
        }
        (None, Some(url)) => bookmarks::search(&browser, "", None, usize::MAX)
            .await?
            .into_iter()
            .filter(|b| &b.url == url && p.title.as_ref().is_none_or(|t| &b.title == t))
            .collect(),
        (None, None) => return Err(ToolError::param("bookmarkId", "give bookmarkId or url")),
    };
    if targets.is_empty() {
        return Err(ToolError::param(
            "url",
            "no bookmark has that URL (and title)",
        ));
    }
    let mut deleted = Vec::new();
    let mut backups = Vec::new();
    for target in &targets {
        // A folder is removed only when asked for by id, and with what it holds.
        let removed = bookmarks::remove(
            &browser,
            &call.engine().config.backup_dir,
            &target.id,
            p.bookmarkId.is_some(),
        )
        .await?;
        backups.push(json!(removed.backup.path));
        deleted.push(json!({ "id": target.id, "title": target.title, "url": target.url, "folderPath": folder_path(&target.folders) }));
    }
    Ok(Reply::data(json!({
        "success": true, "message": format!("Successfully deleted {} bookmark(s)", deleted.len()),
        "deletedBookmarks": deleted, "backups": backups,
    })))
}

pub async fn handle_download(call: Call, p: HandleDownload) -> Result<Reply, ToolError> {
    let wait = DownloadWait {
        name_contains: p.filenameContains.filter(|s| !s.is_empty()),
        deadline: call.deadline,
        wait_complete: p.waitForComplete,
    };
    let found: FoundDownload = call
        .session
        .wait_for_download(tab_arg(&p.tabId).as_deref(), wait)
        .await?;
    Ok(Reply::data(json!({
        "success": true,
        "download": {
            "id": found.id, "filename": found.path.as_ref().map(|p| p.display().to_string()).unwrap_or(found.filename.clone()),
            "name": found.filename, "url": found.url, "mime": found.mime, "fileSize": found.size,
            "state": found.state, "startTime": found.started_ms, "endTime": found.ended_ms,
            "exists": found.exists, "sha256": found.sha256,
        },
    })))
}

/// A history item as chrome.history describes it (ms since the epoch as a number).
fn history_item(item: &history::HistoryItem) -> Value {
    json!({
        "id": item.id, "url": item.url, "title": item.title, "lastVisitTime": item.last_visit_ms,
        "visitCount": item.visit_count, "typedCount": item.typed_count,
    })
}
