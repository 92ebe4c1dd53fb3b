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

/// A bookmark or folder as chrome.bookmarks describes it; what tabwire does not read
/// (`index`, `dateGroupModified`, `folderType`, …) is kept as the browser gave it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BookmarkNode {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub title: String,
    /// None for a folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// ms since the epoch, as the browser wrote the number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_added: Option<serde_json::Number>,
    /// A folder's, when it was read with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<BookmarkNode>>,
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

impl BookmarkNode {
    pub fn is_folder(&self) -> bool {
        self.url.is_none()
    }

    fn children(&self) -> &[BookmarkNode] {
        self.children.as_deref().unwrap_or_default()
    }
}

/// An extension call's answer as the type chrome.bookmarks promises.
async fn bookmarks_call<T: serde::de::DeserializeOwned>(
    browser: &Browser,
    method: &str,
    args: Value,
) -> Result<T> {
    let answer = browser.extension_call(method, args).await?;
    serde_json::from_value(answer).map_err(|error| {
        EngineError::Io(format!("{method} answered in an unexpected shape: {error}"))
    })
}

/// The whole tree: its roots (one, holding the bar, other and mobile folders).
pub async fn tree(browser: &Browser) -> Result<Vec<BookmarkNode>> {
    bookmarks_call(browser, "bookmarks.getTree", json!({})).await
}

/// One node with its children, or not_found.
pub async fn subtree(browser: &Browser, id: &str) -> Result<BookmarkNode> {
    let subtree: Vec<BookmarkNode> =
        bookmarks_call(browser, "bookmarks.getSubTree", json!({ "id": id })).await?;
    subtree.into_iter().next().ok_or_else(|| {
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
) -> Result<BookmarkNode> {
    if let Some(url) = url {
        crate::page::check_url_scheme(url).map_err(|_| {
            EngineError::invalid(Input::Url, format!("'{url}' is not an http(s) URL"))
        })?;
    }
    let args = json!({ "title": title, "url": url, "parentId": parent_id });
    bookmarks_call(browser, "bookmarks.create", args).await
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
fn bookmarks_under(node: &BookmarkNode, folders: &mut Vec<String>, out: &mut Vec<Bookmark>) {
    if let Some(url) = &node.url {
        out.push(Bookmark {
            id: node.id.clone(),
            title: node.title.clone(),
            url: url.clone(),
            date_added: node
                .date_added
                .as_ref()
                .and_then(serde_json::Number::as_f64),
            folders: folders.clone(),
        });
        return;
    }
    let named = !node.title.is_empty();
    if named {
        folders.push(node.title.clone());
    }
    for child in node.children() {
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
pub async fn folder(
    browser: &Browser,
    path_or_id: &str,
    create: bool,
) -> Result<(BookmarkNode, bool)> {
    let root = tree(browser)
        .await?
        .into_iter()
        .next()
        .ok_or_else(no_tree)?;
    if let Some(node) = find_node(&root, &|n| n.id == path_or_id && n.is_folder()) {
        return Ok((node.clone(), false));
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
    let same = |node: &BookmarkNode, title: &str| {
        node.is_folder() && node.title.eq_ignore_ascii_case(title)
    };
    let roots = root.children();
    let (mut current, rest) = match roots.iter().find(|r| same(r, parts[0])) {
        Some(top) => (top.clone(), &parts[1..]),
        None => (roots.first().cloned().ok_or_else(no_tree)?, &parts[..]),
    };
    let mut created = false;
    for part in rest {
        let child = current.children().iter().find(|k| same(k, part)).cloned();
        current = match child {
            Some(child) => child,
            None if create => {
                created = true;
                let mut made = self::create(browser, part, None, Some(&current.id)).await?;
                made.children = Some(Vec::new());
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

/// The browser answered with no bookmark tree at all.
fn no_tree() -> EngineError {
    EngineError::page(
        ErrorCode::NotFound,
        "the browser has no bookmark tree",
        Value::Null,
    )
}

fn find_node<'a>(
    node: &'a BookmarkNode,
    wanted: &dyn Fn(&BookmarkNode) -> bool,
) -> Option<&'a BookmarkNode> {
    if wanted(node) {
        return Some(node);
    }
    node.children()
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
            tree(browser)
                .await?
                .into_iter()
                .next()
                .ok_or_else(no_tree)?,
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
async fn folder_titles(browser: &Browser, node: &BookmarkNode) -> Result<Vec<String>> {
    let mut titles = Vec::new();
    let mut id = Some(node.id.clone());
    while let Some(current) = id {
        let this = subtree(browser, &current).await?;
        if !this.title.is_empty() {
            titles.push(this.title);
        }
        id = this.parent_id;
    }
    titles.reverse();
    Ok(titles)
}

/// The folder path of a bookmark or folder by id.
pub async fn path_of(browser: &Browser, node: &BookmarkNode) -> Result<Vec<String>> {
    let mut titles = folder_titles(browser, node).await?;
    if !node.is_folder() {
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
    let children = node.children().len();
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
    let method = if node.children.is_some() {
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

async fn save_backup(dir: PathBuf, id: &str, node: BookmarkNode) -> Result<files::Written> {
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
fn count(node: &BookmarkNode) -> usize {
    1 + node.children().iter().map(count).sum::<usize>()
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
