//! Bookmarks, history and extensions through the tabwire extension's browser APIs.
//! Removing bookmarks saves the subtree first; a failed backup means nothing is removed.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::files;

/// Backup limits: one file, how many files, all files together, and age.
pub const BACKUP_FILE_MAX: usize = 16 << 20;
pub const BACKUP_COUNT_MAX: usize = 100;
pub const BACKUP_TOTAL_MAX: u64 = 64 << 20;
pub const BACKUP_AGE_MAX: Duration = Duration::from_secs(30 * 24 * 3600);

impl Engine {
    pub async fn bookmarks(&self) -> Result<Value> {
        let tree = self.extension_call("bookmarks.getTree", json!({})).await?;
        Ok(json!({ "tree": tree }))
    }

    pub async fn create_bookmark(
        &self,
        title: &str,
        url: Option<&str>,
        parent_id: Option<&str>,
    ) -> Result<Value> {
        if let Some(url) = url {
            crate::page::check_url_scheme(url).map_err(|_| {
                EngineError::invalid("url", format!("'{url}' is not an http(s) URL"))
            })?;
        }
        let node = self
            .extension_call(
                "bookmarks.create",
                json!({ "title": title, "url": url, "parentId": parent_id }),
            )
            .await?;
        Ok(json!({ "status": "created", "bookmark": node }))
    }

    /// Saves the subtree under the backup dir, then removes it.
    pub async fn remove_bookmark(&self, id: &str, recursive: bool) -> Result<Value> {
        let subtree = self
            .extension_call("bookmarks.getSubTree", json!({ "id": id }))
            .await?;
        let node = subtree.get(0).cloned().ok_or_else(|| {
            EngineError::page(
                "not_found",
                format!("bookmark_id: no bookmark '{id}'"),
                Value::Null,
            )
        })?;
        let children = node["children"].as_array().map_or(0, Vec::len);
        if children > 0 && !recursive {
            return Err(EngineError::invalid(
                "recursive",
                format!(
                    "'{id}' is a folder with {children} items; pass recursive=true to remove it all"
                ),
            ));
        }
        let (path, sha) = self.backup(id, &node).map_err(|e| EngineError::Refused {
            code: "backup_failed".into(),
            message: format!("nothing was removed: the backup failed: {e}"),
        })?;
        let method = if node.get("children").is_some() {
            "bookmarks.removeTree"
        } else {
            "bookmarks.remove"
        };
        self.extension_call(method, json!({ "id": id })).await.map_err(|e| EngineError::page(
            "remove_unconfirmed",
            format!("the backup is at {} but the removal was not confirmed ({e}); inspect get_bookmarks before retrying", path.display()),
            json!({ "backup_path": path, "backup_sha256": sha, "retry_safe": false }),
        ))?;
        Ok(
            json!({ "status": "removed", "removed": count(&node), "backup_path": path, "backup_sha256": sha }),
        )
    }

    fn backup(&self, id: &str, node: &Value) -> Result<(PathBuf, String)> {
        let dir = &self.config.backup_dir;
        if let Ok(meta) = std::fs::symlink_metadata(dir)
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
        prune(dir, bytes.len() as u64);
        let stamp = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let safe_id: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
        files::write_atomic(
            &dir.join(format!("bookmark-{safe_id}-{stamp}.json")),
            &bytes,
        )
    }

    pub async fn history_search(
        &self,
        text: &str,
        start: Option<f64>,
        end: Option<f64>,
        max: u64,
    ) -> Result<Value> {
        let items = self
            .extension_call(
                "history.search",
                json!({ "text": text, "startTime": start, "endTime": end, "maxResults": max }),
            )
            .await?;
        Ok(json!({ "items": items }))
    }
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
