//! Downloads through the browser's own download manager, with the profile's cookies:
//! a background tab navigates to the URL and the finished file is moved from a staging
//! folder to its place (a linked browser downloads through chrome.downloads and the file
//! is copied). A URL the browser shows instead of saving (an image, JSON) is saved from
//! the tab; a web page is refused.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::browser::{Browser, HOUSEKEEPING};
use crate::config::EngineConfig;
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::files::{self, ConfinedDir};
use crate::page::Page;

pub struct DownloadRequest {
    pub url: String,
    pub filename: Option<String>,
    /// Where the file lands.
    pub directory: ConfinedDir,
    pub wait: bool,
    pub timeout: Duration,
    pub overwrite: bool,
}

/// The owner recorded on the throw-away tab a download runs in.
const DOWNLOAD_OWNER: &str = "tabwire-download";

/// Downloads a URL in a background tab of the browser's profile and moves the finished
/// file into the request's directory.
pub async fn download(
    browser: Arc<Browser>,
    config: Arc<EngineConfig>,
    request: DownloadRequest,
) -> Result<Value> {
    crate::page::check_url_scheme(&request.url)?;
    if !request.url.starts_with("http://") && !request.url.starts_with("https://") {
        return Err(EngineError::invalid(
            Input::Url,
            "only http(s) URLs can be downloaded",
        ));
    }
    if let Some(name) = &request.filename {
        request.directory.file(name, Input::Filename)?;
    }
    if browser.is_linked() {
        return download_linked(&browser, &request).await;
    }
    let staging = config.output_dir.join(".staging");
    tokio::fs::create_dir_all(&staging)
        .await
        .map_err(|e| EngineError::io(format!("cannot create {}", staging.display()), e))?;
    let mut events = browser.conn.subscribe();
    browser
        .conn
        .call(
            None,
            "Browser.setDownloadBehavior",
            json!({ "behavior": "allowAndName", "downloadPath": staging, "eventsEnabled": true }),
            HOUSEKEEPING,
        )
        .await?;
    let tab = browser
        .open_tab("about:blank", false, Some(DOWNLOAD_OWNER))
        .await?;
    let shown = async {
        let page = Page::reserve(browser.clone(), tab.clone(), config.clone()).await?;
        let landed = page.navigate(&request.url, request.timeout).await;
        match landed {
            Ok(reply) if reply["type"] == "download" => Ok(None),
            // The browser showed the URL instead: an image, text or JSON is saved from
            // the tab itself; a web page is refused.
            Ok(_) => save_shown_resource(&page, &request).await.map(Some),
            Err(error) => Err(EngineError::page(
                ErrorCode::DownloadNotStarted,
                format!("{} did not start a download: {error}", request.url),
                json!({ "url": request.url, "retry_safe": true }),
            )),
        }
    }
    .await;
    match shown {
        Ok(None) => {}
        Ok(Some(saved)) => {
            let _ = browser.close_tab(&tab).await;
            return Ok(saved);
        }
        Err(error) => {
            let _ = browser.close_tab(&tab).await;
            return Err(error);
        }
    }
    let progress = follow_progress(&mut events, &request).await;
    let _ = browser.close_tab(&tab).await;
    let Some(guid) = progress.guid else {
        return Err(EngineError::page(
            ErrorCode::DownloadNotStarted,
            format!("{} did not start a download", request.url),
            Value::Null,
        ));
    };
    match progress.state.as_str() {
        "completed" => {}
        "canceled" => {
            return Ok(
                json!({ "status": "failed", "reason": "interrupted", "download_id": guid, "url": request.url }),
            );
        }
        _ => {
            return Ok(json!({
                "status": "in_progress", "download_id": guid, "received_bytes": progress.received,
                "directory_applied": false, "staging_path": staging.join(&guid),
            }));
        }
    }
    let name = request
        .filename
        .clone()
        .or(progress.suggested)
        .unwrap_or_else(|| "download".into());
    let target = request.directory.file(&sanitize(&name), Input::Filename)?;
    let written = files::move_into(staging.join(&guid), target, request.overwrite).await?;
    Ok(json!({
        "status": "completed", "path": written.path, "bytes": written.bytes,
        "sha256": written.sha256, "download_id": guid, "url": request.url,
    }))
}

/// What the browser's download events said before the deadline.
struct Progress {
    guid: Option<String>,
    suggested: Option<String>,
    state: String,
    received: u64,
}

/// Reads download events until the download ends (or, without `wait`, starts), or the
/// request's deadline passes.
async fn follow_progress(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    request: &DownloadRequest,
) -> Progress {
    let deadline = Instant::now() + request.timeout;
    let mut progress = Progress {
        guid: None,
        suggested: None,
        state: "in_progress".to_owned(),
        received: 0,
    };
    loop {
        let event = match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event)) => event,
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
            _ => return progress,
        };
        let params = &event.params;
        match event.method.as_str() {
            "Browser.downloadWillBegin" => {
                progress.guid = params["guid"].as_str().map(str::to_owned);
                progress.suggested = params["suggestedFilename"].as_str().map(str::to_owned);
            }
            // Progress events carry the guid; the file is staged under that name.
            "Browser.downloadProgress"
                if progress.guid.is_none()
                    || params["guid"].as_str() == progress.guid.as_deref() =>
            {
                progress.guid = params["guid"].as_str().map(str::to_owned);
                progress.received = params["receivedBytes"]
                    .as_u64()
                    .unwrap_or(progress.received);
                progress.state = params["state"].as_str().unwrap_or("inProgress").to_owned();
                if progress.state != "inProgress" || !request.wait {
                    return progress;
                }
            }
            _ => {}
        }
    }
}

/// A linked browser downloads through chrome.downloads into its own download folder;
/// the finished file is copied (the user's copy stays) into the request's directory.
async fn download_linked(browser: &Browser, request: &DownloadRequest) -> Result<Value> {
    let args = json!({ "url": request.url, "timeoutMs": request.timeout.as_millis() as u64 });
    let item = browser.extension_call("downloads.fetch", args).await?;
    match item["state"].as_str() {
        Some("complete") => {}
        Some("not_a_download") => {
            return Err(not_a_download(&request.url, item["mime"].as_str()));
        }
        Some("interrupted") => {
            return Ok(
                json!({ "status": "failed", "reason": item["error"], "download_id": item["id"], "url": request.url }),
            );
        }
        _ => {
            return Ok(json!({
                "status": "in_progress", "download_id": item["id"], "received_bytes": item["bytesReceived"],
                "directory_applied": false, "browser_path": item["filename"],
            }));
        }
    }
    let source = PathBuf::from(item["filename"].as_str().unwrap_or_default());
    // The browser's folder may have renamed it "report (1).csv"; ours keeps the name.
    let name = request
        .filename
        .clone()
        .or_else(|| {
            source
                .file_name()
                .map(|n| without_uniquifier(&n.to_string_lossy()))
        })
        .unwrap_or_else(|| "download".into());
    let target = request.directory.file(&sanitize(&name), Input::Filename)?;
    let written = files::copy_into(source.clone(), target, request.overwrite).await?;
    Ok(json!({
        "status": "completed", "path": written.path, "bytes": written.bytes, "sha256": written.sha256,
        "download_id": item["id"], "browser_path": source, "url": request.url,
    }))
}

/// What the browser shows as a page rather than saving it.
const PAGE_TYPES: [&str; 2] = ["text/html", "application/xhtml+xml"];

/// Saves the main resource a tab shows (the browser displayed the URL rather than
/// downloading it) without fetching it again; a web page is refused.
async fn save_shown_resource(page: &Page, request: &DownloadRequest) -> Result<Value> {
    // An error page is not the file: report it as the extension link's download would.
    let status = page
        .cdp(
            "Runtime.evaluate",
            json!({
                "expression": "performance.getEntriesByType('navigation')[0]?.responseStatus ?? 0",
                "returnByValue": true,
            }),
            HOUSEKEEPING,
        )
        .await?["result"]["value"]
        .as_u64()
        .unwrap_or(0);
    if status >= 400 {
        return Ok(json!({
            "status": "failed", "reason": format!("http_{status}"), "url": request.url,
        }));
    }
    let tree = page
        .cdp("Page.getResourceTree", json!({}), HOUSEKEEPING)
        .await?;
    let frame = &tree["frameTree"]["frame"];
    let mime = frame["mimeType"].as_str().unwrap_or_default();
    if mime.is_empty() || PAGE_TYPES.contains(&mime) {
        return Err(not_a_download(
            &request.url,
            Some(mime).filter(|m| !m.is_empty()),
        ));
    }
    let content = page
        .cdp(
            "Page.getResourceContent",
            json!({ "frameId": frame["id"], "url": frame["url"] }),
            request.timeout,
        )
        .await?;
    let text = content["content"].as_str().unwrap_or_default();
    let bytes = if content["base64Encoded"] == true {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| EngineError::Io(format!("the browser sent undecodable content: {e}")))?
    } else {
        text.as_bytes().to_vec()
    };
    let name = request
        .filename
        .clone()
        .or_else(|| name_from_url(&request.url))
        .unwrap_or_else(|| "download".into());
    let target = request.directory.file(&sanitize(&name), Input::Filename)?;
    if !request.overwrite && tokio::fs::symlink_metadata(target.path()).await.is_ok() {
        return Err(EngineError::refused(
            ErrorCode::FileExists,
            format!(
                "{} exists and overwriting was not asked for",
                target.path().display()
            ),
        ));
    }
    let written = files::write_atomic(target, bytes).await?;
    Ok(json!({
        "status": "completed", "path": written.path, "bytes": written.bytes, "sha256": written.sha256,
        "url": request.url, "content_type": mime, "shown_by_browser": true,
    }))
}

/// The last path segment of a URL, if it names something.
fn name_from_url(url: &str) -> Option<String> {
    let path = url.split(['?', '#']).next()?;
    let last = path.rsplit('/').next()?;
    (!last.is_empty() && !path.ends_with("//") && path.matches('/').count() > 2)
        .then(|| percent_decoded(last))
}

/// `report%20final.png` → `report final.png`, as the browser would name the file.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            // A control character has no place in a file name.
            (b'%', Some(byte)) => {
                out.push(if byte < 0x20 || byte == 0x7f {
                    b'_'
                } else {
                    byte
                });
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The same refusal on both links for a URL the browser shows as a page.
fn not_a_download(url: &str, mime: Option<&str>) -> EngineError {
    let served = mime.map_or_else(|| "a web page".to_owned(), |m| format!("a web page ({m})"));
    EngineError::page(
        ErrorCode::DownloadNotStarted,
        format!(
            "{url} did not start a download: the server answered with {served}; read it as a page instead"
        ),
        json!({ "url": url, "retry_safe": true }),
    )
}

/// "report (1).csv" → "report.csv": the suffix a browser adds to avoid a clash in its own
/// download folder.
fn without_uniquifier(name: &str) -> String {
    let (stem, extension) = match name.rfind('.') {
        Some(dot) if dot > 0 => (&name[..dot], &name[dot..]),
        _ => (name, ""),
    };
    match stem.rfind(" (") {
        Some(open)
            if stem.ends_with(')')
                && stem[open + 2..stem.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_digit()) =>
        {
            format!("{}{extension}", &stem[..open])
        }
        _ => name.to_owned(),
    }
}

/// A suggested filename may carry path separators; keep only its last component.
fn sanitize(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    if last.is_empty() || last == "." || last == ".." {
        "download".into()
    } else {
        last.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::{name_from_url, without_uniquifier};

    #[test]
    fn browser_uniquifiers_are_dropped() {
        assert_eq!(without_uniquifier("report (1).csv"), "report.csv");
        assert_eq!(without_uniquifier("report (12)"), "report");
        assert_eq!(without_uniquifier("notes (draft).txt"), "notes (draft).txt");
        assert_eq!(without_uniquifier("plain.csv"), "plain.csv");
    }

    #[test]
    fn a_shown_file_is_named_from_its_url_decoded() {
        assert_eq!(
            name_from_url("http://h/files/report%20final.png?x=1").as_deref(),
            Some("report final.png")
        );
        assert_eq!(
            name_from_url("http://h/caf%C3%A9.json").as_deref(),
            Some("café.json")
        );
        assert_eq!(
            name_from_url("http://h/odd%zz%4").as_deref(),
            Some("odd%zz%4")
        );
        assert_eq!(
            name_from_url("http://h/a%00b%0A.txt").as_deref(),
            Some("a_b_.txt")
        );
        assert_eq!(name_from_url("http://h/"), None);
        assert_eq!(name_from_url("http://h"), None);
    }
}
