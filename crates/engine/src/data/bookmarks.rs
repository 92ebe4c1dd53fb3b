//! Bookmarks through the tabwire extension's browser APIs. Removing
//! bookmarks saves the subtree first; a failed backup means nothing is removed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::browser::Browser;
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::files;

/// Backup limits: one file, how many files, all files together, and age.
pub const BACKUP_FILE_MAX: usize = 16 << 20;
pub const BACKUP_COUNT_MAX: usize = 100;
pub const BACKUP_TOTAL_MAX: u64 = 64 << 20;
pub const BACKUP_AGE_MAX: Duration = Duration::from_secs(30 * 24 * 3600);

/// A removed subtree: how many nodes, and the backup that holds them.
#[derive(Debug, Clone)]
pub struct Removed {
    pub count: usize,
    pub backup: files::Written,
    /// When the backup was taken (ms since the epoch); it is kept `BACKUP_AGE_MAX`.
    pub backed_up_ms: u64,
}

pub async fn tree(browser: &Browser) -> Result<Value> {
    browser.extension_call("bookmarks.getTree", json!({})).await
}

/// One node with its children, or not_found.
pub async fn subtree(browser: &Browser, id: &str) -> Result<Value> {
    let subtree = browser
        .extension_call("bookmarks.getSubTree", json!({ "id": id }))
        .await?;
    subtree.get(0).cloned().ok_or_else(|| {
        EngineError::page(
            ErrorCode::NotFound,
            format!("no bookmark '{id}'"),
            Value::Null,
        )
    })
}

/// Creates a bookmark (or a folder, without url) under `parent_id`.
pub async fn create(
    browser: &Browser,
    title: &str,
    url: Option<&str>,
    parent_id: Option<&str>,
) -> Result<Value> {
    if let Some(url) = url {
        crate::page::check_url_scheme(url).map_err(|_| {
            EngineError::invalid(Input::Url, format!("'{url}' is not an http(s) URL"))
        })?;
    }
    browser
        .extension_call(
            "bookmarks.create",
            json!({ "title": title, "url": url, "parentId": parent_id }),
        )
        .await
}

/// A bookmark with the path of folders it sits in.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Bookmark {
    pub id: String,
    pub title: String,
    pub url: String,
    pub date_added: Option<f64>,
    /// Its folders from the root, e.g. `["Bookmarks bar", "Work"]`.
    pub folders: Vec<String>,
}

/// Every bookmark (not folder) under `node`, with its folder path.
fn bookmarks_under(node: &Value, folders: &mut Vec<String>, out: &mut Vec<Bookmark>) {
    if let Some(url) = node["url"].as_str() {
        out.push(Bookmark {
            id: node["id"].as_str().unwrap_or_default().to_owned(),
            title: node["title"].as_str().unwrap_or_default().to_owned(),
            url: url.to_owned(),
            date_added: node["dateAdded"].as_f64(),
            folders: folders.clone(),
        });
        return;
    }
    let title = node["title"].as_str().unwrap_or_default().to_owned();
    let named = !title.is_empty();
    if named {
        folders.push(title);
    }
    for child in node["children"].as_array().into_iter().flatten() {
        bookmarks_under(child, folders, out);
    }
    if named {
        folders.pop();
    }
}

/// A folder by id, or by path of titles (`Work/Resources`, separated by `/` or ` > `),
/// from a root folder named first (`Bookmarks bar/Work`) or else from the bookmarks bar.
/// With `create`, missing folders on the path are made. Returns the folder node and
/// whether any folder was created.
pub async fn folder(browser: &Browser, path_or_id: &str, create: bool) -> Result<(Value, bool)> {
    let tree = tree(browser).await?;
    let root = tree.get(0).cloned().unwrap_or(Value::Null);
    if let Some(node) = find_node(&root, &|n| n["id"] == path_or_id && n["url"].is_null()) {
        return Ok((node, false));
    }
    let parts: Vec<&str> = path_or_id
        .split(['/', '>'])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        return Err(EngineError::invalid(
            Input::Folder,
            "the folder path is empty",
        ));
    }
    let roots: Vec<Value> = root["children"].as_array().cloned().unwrap_or_default();
    let same = |node: &Value, title: &str| {
        node["title"]
            .as_str()
            .is_some_and(|t| t.eq_ignore_ascii_case(title))
            && node["url"].is_null()
    };
    let (mut current, rest) = match roots.iter().find(|r| same(r, parts[0])) {
        Some(top) => (top.clone(), &parts[1..]),
        None => (roots.first().cloned().unwrap_or(Value::Null), &parts[..]),
    };
    let mut created = false;
    for part in rest {
        let child = current["children"]
            .as_array()
            .and_then(|kids| kids.iter().find(|k| same(k, part)).cloned());
        current = match child {
            Some(child) => child,
            None if create => {
                created = true;
                let parent = current["id"].as_str().unwrap_or_default().to_owned();
                let mut made = self::create(browser, part, None, Some(&parent)).await?;
                made["children"] = json!([]);
                made
            }
            None => {
                return Err(EngineError::page(
                    ErrorCode::NotFound,
                    format!(
                        "no bookmark folder '{part}' on the path '{path_or_id}' (createFolder makes it)"
                    ),
                    json!({ "folder": path_or_id }),
                ));
            }
        };
    }
    Ok((current, created))
}

fn find_node(node: &Value, wanted: &dyn Fn(&Value) -> bool) -> Option<Value> {
    if wanted(node) {
        return Some(node.clone());
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|child| find_node(child, wanted))
}

/// Bookmarks whose title or URL holds every word of `query` (any, when empty), within a
/// folder if one is named, at most `max`.
pub async fn search(
    browser: &Browser,
    query: &str,
    folder_path: Option<&str>,
    max: usize,
) -> Result<Vec<Bookmark>> {
    let (start, mut prefix) = match folder_path {
        Some(path) => {
            let (node, _) = folder(browser, path, false).await?;
            let mut folders = folder_titles(browser, &node).await?;
            folders.pop();
            (node, folders)
        }
        None => (
            tree(browser).await?.get(0).cloned().unwrap_or(Value::Null),
            Vec::new(),
        ),
    };
    let mut all = Vec::new();
    bookmarks_under(&start, &mut prefix, &mut all);
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    Ok(all
        .into_iter()
        .filter(|b| {
            let hay = format!("{} {}", b.title, b.url).to_lowercase();
            words.iter().all(|w| hay.contains(w))
        })
        .take(max)
        .collect())
}

/// The titles of a node's folders from the root, the node's own last.
async fn folder_titles(browser: &Browser, node: &Value) -> Result<Vec<String>> {
    let mut titles = Vec::new();
    let mut id = node["id"].as_str().map(str::to_owned);
    while let Some(current) = id {
        let this = subtree(browser, &current).await?;
        if let Some(title) = this["title"].as_str().filter(|t| !t.is_empty()) {
            titles.push(title.to_owned());
        }
        id = this["parentId"].as_str().map(str::to_owned);
    }
    titles.reverse();
    Ok(titles)
}

/// The folder path of a bookmark or folder by id.
pub async fn path_of(browser: &Browser, node: &Value) -> Result<Vec<String>> {
    let mut titles = folder_titles(browser, node).await?;
    if node["url"].is_string() {
        titles.pop();
    }
    Ok(titles)
}

/// Saves the subtree under the backup dir, then removes it.
pub async fn remove(
    browser: &Browser,
    backup_dir: &Path,
    id: &str,
    recursive: bool,
) -> Result<Removed> {
    // A bookmark the browser cannot find cannot be backed up: nothing is removed.
    let node = subtree(browser, id).await.map_err(|e| match e.code() {
        ErrorCode::BrowserApiError | ErrorCode::NotFound => EngineError::refused(
            ErrorCode::BackupFailed,
            format!("nothing was removed: '{id}' is not in the bookmark tree to back up ({e})"),
        ),
        _ => e,
    })?;
    let children = node["children"].as_array().map_or(0, Vec::len);
    if children > 0 && !recursive {
        return Err(EngineError::invalid(
            Input::Bookmark,
            format!(
                "'{id}' is a folder with {children} items; removing it needs the recursive flag"
            ),
        ));
    }
    let backed_up_ms = crate::ids::now_ms();
    let backup = save_backup(backup_dir.to_path_buf(), id, node.clone())
        .await
        .map_err(|e| {
            EngineError::refused(
                ErrorCode::BackupFailed,
                format!("nothing was removed: the backup failed: {e}"),
            )
        })?;
    let method = if node.get("children").is_some() {
        "bookmarks.removeTree"
    } else {
        "bookmarks.remove"
    };
    browser
        .extension_call(method, json!({ "id": id }))
        .await
        .map_err(|e| {
            EngineError::page(
                ErrorCode::RemoveUnconfirmed,
                format!(
                    "the backup is at {} but the removal was not confirmed ({e}); read the bookmarks before retrying",
                    backup.path.display()
                ),
                json!({ "backup_path": backup.path, "backup_sha256": backup.sha256 }),
            )
            .may_have_run()
        })?;
    Ok(Removed {
        count: count(&node),
        backup,
        backed_up_ms,
    })
}

async fn save_backup(dir: PathBuf, id: &str, node: Value) -> Result<files::Written> {
    let safe_id: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    tokio::task::spawn_blocking(move || {
        if let Ok(meta) = std::fs::symlink_metadata(&dir)
            && !meta.is_dir()
        {
            return Err(EngineError::Io(format!(
                "{} is not an ordinary directory",
                dir.display()
            )));
        }
        let bytes = serde_json::to_vec_pretty(
            &json!({ "kind": "tabwire.bookmark-backup.v1", "root": node }),
        )
        .map_err(|e| EngineError::Io(e.to_string()))?;
        if bytes.len() > BACKUP_FILE_MAX {
            return Err(EngineError::Io(format!(
                "the subtree is {} bytes, over the {BACKUP_FILE_MAX}-byte backup limit",
                bytes.len()
            )));
        }
        prune(&dir, bytes.len() as u64);
        let stamp = crate::ids::now_ms();
        let name = format!("bookmark-{safe_id}-{stamp}.json");
        let target = files::confined_path(&dir, &name, Input::OutputPath)?;
        files::write_atomic_blocking(&target, &bytes)
    })
    .await
    .map_err(|e| EngineError::Io(format!("backup task failed: {e}")))?
}

/// How many bookmarks and folders a node holds, itself included.
fn count(node: &Value) -> usize {
    1 + node["children"]
        .as_array()
        .map_or(0, |c| c.iter().map(count).sum())
}

/// Drops old backups (over 30 days) and the oldest beyond the count and size limits,
/// leaving room for one more of `incoming` bytes.
fn prune(dir: &Path, incoming: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut backups: Vec<(SystemTime, u64, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("bookmark-"))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    backups.sort();
    let now = SystemTime::now();
    let mut total: u64 = backups.iter().map(|b| b.1).sum::<u64>() + incoming;
    let mut count = backups.len() + 1;
    for (modified, size, path) in backups {
        let old = now.duration_since(modified).unwrap_or_default() > BACKUP_AGE_MAX;
        if (old || count > BACKUP_COUNT_MAX || total > BACKUP_TOTAL_MAX)
            && std::fs::remove_file(&path).is_ok()
        {
            count -= 1;
            total -= size;
        }
    }
}
