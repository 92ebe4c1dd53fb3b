//! Bookmarks and history through the tabwire extension's browser APIs. Removing
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

/// Saves the subtree under the backup dir, then removes it.
pub async fn remove(
    browser: &Browser,
    backup_dir: &Path,
    id: &str,
    recursive: bool,
) -> Result<Removed> {
    let node = subtree(browser, id).await?;
    let children = node["children"].as_array().map_or(0, Vec::len);
    if children > 0 && !recursive {
        return Err(EngineError::invalid(
            Input::Bookmark,
            format!(
                "'{id}' is a folder with {children} items; removing it needs the recursive flag"
            ),
        ));
    }
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

/// History items matching `text`, visited between `start` and `end` (ms since the epoch).
pub async fn history(
    browser: &Browser,
    text: &str,
    start: Option<f64>,
    end: Option<f64>,
    max: u64,
) -> Result<Value> {
    browser
        .extension_call(
            "history.search",
            json!({ "text": text, "startTime": start, "endTime": end, "maxResults": max }),
        )
        .await
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
