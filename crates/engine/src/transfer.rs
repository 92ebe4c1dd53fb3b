//! Files in and out of the browser: downloads through the browser's own download manager
//! (with the profile's cookies), uploads onto file inputs from allowed roots only.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::browser::HOUSEKEEPING;
use crate::engine::AgentSession;
use crate::error::{EngineError, Result};
use crate::files;
use crate::page::Page;

pub struct DownloadRequest {
    pub url: String,
    pub filename: Option<String>,
    /// Relative to the output dir.
    pub directory: Option<String>,
    pub wait: bool,
    pub timeout: Duration,
    pub overwrite: bool,
}

impl AgentSession {
    /// Downloads a URL in a background tab of the same profile and moves the finished file
    /// to its place under the output dir.
    pub async fn download(&self, request: DownloadRequest) -> Result<Value> {
        crate::page::check_url_scheme(&request.url)?;
        if !request.url.starts_with("http://") && !request.url.starts_with("https://") {
            return Err(EngineError::invalid(
                "url",
                "only http(s) URLs can be downloaded",
            ));
        }
        let output = &self.engine.config.output_dir;
        let directory = match &request.directory {
            Some(dir) => files::confined_path(output, dir, "directory")?,
            None => output.join("downloads"),
        };
        if let Some(name) = &request.filename {
            files::confined_path(&directory, name, "filename")?;
        }
        let browser = self.engine.browser().await?;
        if browser.is_linked() {
            return self.download_linked(&browser, &request, &directory).await;
        }
        let staging = output.join(".staging");
        std::fs::create_dir_all(&staging)
            .map_err(|e| EngineError::Io(format!("cannot create {}: {e}", staging.display())))?;
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
        let tab = self
            .engine
            .open_tab("about:blank", false, Some("tabwire-download"))
            .await?;
        let handle = crate::engine::tab_handle(&browser, &tab);
        let close = || async {
            let _ = browser
                .conn
                .call(
                    None,
                    "Target.closeTarget",
                    json!({ "targetId": tab.target_id }),
                    HOUSEKEEPING,
                )
                .await;
        };
        let shown = async {
            let page = self.page(Some(&handle)).await?;
            let landed = page.navigate(&request.url, request.timeout).await;
            match landed {
                Ok(reply) if reply["type"] == "download" => Ok(None),
                // The browser showed the URL instead: an image, text or JSON is saved from
                // the tab itself; a web page is refused.
                Ok(_) => save_shown_resource(&page, &request, &directory)
                    .await
                    .map(Some),
                Err(error) => Err(EngineError::page(
                    "download_not_started",
                    format!("{} did not start a download: {error}", request.url),
                    json!({ "url": request.url, "retry_safe": true }),
                )),
            }
        }
        .await;
        match shown {
            Ok(None) => {}
            Ok(Some(saved)) => {
                close().await;
                return Ok(saved);
            }
            Err(error) => {
                close().await;
                return Err(error);
            }
        }
        let deadline = Instant::now() + request.timeout;
        let mut guid = None;
        let mut suggested = None;
        // Progress events carry the guid; the file is staged under that name.
        let mut state = "in_progress".to_owned();
        let mut total = 0u64;
        loop {
            let event = match tokio::time::timeout_at(deadline, events.recv()).await {
                Ok(Ok(event)) => event,
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                _ => break,
            };
            match event.method.as_str() {
                "Browser.downloadWillBegin" => {
                    guid = event.params["guid"].as_str().map(str::to_owned);
                    suggested = event.params["suggestedFilename"]
                        .as_str()
                        .map(str::to_owned);
                }
                "Browser.downloadProgress"
                    if guid.is_none() || event.params["guid"].as_str() == guid.as_deref() =>
                {
                    guid = event.params["guid"].as_str().map(str::to_owned);
                    total = event.params["receivedBytes"].as_u64().unwrap_or(total);
                    state = event.params["state"]
                        .as_str()
                        .unwrap_or("inProgress")
                        .to_owned();
                    if state != "inProgress" || !request.wait {
                        break;
                    }
                }
                _ => {}
            }
        }
        close().await;
        let Some(guid) = guid else {
            return Err(EngineError::page(
                "download_not_started",
                format!("{} did not start a download", request.url),
                Value::Null,
            ));
        };
        match state.as_str() {
            "completed" => {}
            "canceled" => {
                return Ok(
                    json!({ "status": "failed", "reason": "interrupted", "download_id": guid, "url": request.url }),
                );
            }
            _ => {
                return Ok(json!({
                    "status": "in_progress", "download_id": guid, "received_bytes": total,
                    "directory_applied": false, "staging_path": staging.join(&guid),
                }));
            }
        }
        let name = request
            .filename
            .clone()
            .or(suggested)
            .unwrap_or_else(|| "download".into());
        let target = files::confined_path(&directory, &sanitize(&name), "filename")?;
        place(&staging.join(&guid), &target, request.overwrite)?;
        let bytes = std::fs::read(&target)
            .map_err(|e| EngineError::Io(format!("cannot read {}: {e}", target.display())))?;
        Ok(json!({
            "status": "completed", "path": target, "bytes": bytes.len(),
            "sha256": files::sha256_hex(&bytes), "download_id": guid, "url": request.url,
        }))
    }
}

impl AgentSession {
    /// A linked browser downloads through chrome.downloads into its own download folder;
    /// the finished file is copied (the user's copy stays) under the output dir.
    async fn download_linked(
        &self,
        browser: &crate::browser::Browser,
        request: &DownloadRequest,
        directory: &Path,
    ) -> Result<Value> {
        let args = json!({ "url": request.url, "timeoutMs": request.timeout.as_millis() as u64 });
        let item = self
            .engine
            .extension_call_on(browser, "downloads.fetch", args)
            .await?;
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
        let target = files::confined_path(directory, &sanitize(&name), "filename")?;
        if target.exists() && !request.overwrite {
            return Err(file_exists(&target));
        }
        let bytes = std::fs::read(&source).map_err(|e| {
            EngineError::Io(format!(
                "cannot read the download {}: {e}",
                source.display()
            ))
        })?;
        let (path, sha) = files::write_atomic(&target, &bytes)?;
        Ok(json!({
            "status": "completed", "path": path, "bytes": bytes.len(), "sha256": sha,
            "download_id": item["id"], "browser_path": source, "url": request.url,
        }))
    }
}

/// What the browser shows as a page rather than saving it.
const PAGE_TYPES: [&str; 2] = ["text/html", "application/xhtml+xml"];

/// Saves the main resource a tab shows (the browser displayed the URL rather than
/// downloading it) without fetching it again; a web page is refused.
async fn save_shown_resource(
    page: &Page,
    request: &DownloadRequest,
    directory: &Path,
) -> Result<Value> {
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
    let target = files::confined_path(directory, &sanitize(&name), "filename")?;
    if target.exists() && !request.overwrite {
        return Err(file_exists(&target));
    }
    let (path, sha) = files::write_atomic(&target, &bytes)?;
    Ok(json!({
        "status": "completed", "path": path, "bytes": bytes.len(), "sha256": sha,
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

fn file_exists(target: &Path) -> EngineError {
    EngineError::Refused {
        code: "file_exists".into(),
        message: format!(
            "{} exists; pass overwrite=true to replace it",
            target.display()
        ),
    }
}

/// The same refusal on both links for a URL the browser shows as a page.
fn not_a_download(url: &str, mime: Option<&str>) -> EngineError {
    let served = mime.map_or_else(|| "a web page".to_owned(), |m| format!("a web page ({m})"));
    EngineError::page(
        "download_not_started",
        format!(
            "{url} did not start a download: the server answered with {served}; read it with the page tools instead"
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

fn place(staged: &Path, target: &Path, overwrite: bool) -> Result<()> {
    if target.exists() && !overwrite {
        let _ = std::fs::remove_file(staged);
        return Err(file_exists(target));
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| EngineError::Io(format!("cannot create {}: {e}", parent.display())))?;
    }
    std::fs::rename(staged, target).map_err(|e| {
        EngineError::Io(format!(
            "cannot move the download to {}: {e}",
            target.display()
        ))
    })
}

impl Page {
    /// Sets files on an `<input type=file>`. Every path must lie under an allowed root.
    pub async fn upload(
        &self,
        locator: &Value,
        paths: &[String],
        roots: &[PathBuf],
        timeout: Duration,
    ) -> Result<Value> {
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            files.push(allowed_file(path, roots)?);
        }
        let args = json!({ "locator": locator });
        let reply = self
            .evaluate_op(&self.top(), "element", &args, false, timeout)
            .await?;
        let object = &reply["result"];
        if object["subtype"] != "node" {
            let status = object["preview"]["properties"]
                .as_array()
                .and_then(|p| p.iter().find(|p| p["name"] == "status"))
                .and_then(|p| p["value"].as_str())
                .unwrap_or("not_found")
                .to_owned();
            return Err(EngineError::page(
                &status,
                format!("selector: no single file input ({status})"),
                Value::Null,
            ));
        }
        let object_id = object["objectId"].as_str().unwrap_or_default().to_owned();
        let set = self
            .cdp(
                "DOM.setFileInputFiles",
                json!({ "files": files, "objectId": object_id }),
                timeout,
            )
            .await;
        let _ = self
            .cdp(
                "Runtime.releaseObject",
                json!({ "objectId": object_id }),
                timeout,
            )
            .await;
        set.map_err(|e| match e {
            EngineError::Cdp(cdp::CdpError::Protocol { message, .. }) => {
                EngineError::invalid("selector", format!("not a file input: {message}"))
            }
            other => other,
        })?;
        Ok(json!({ "status": "set", "files": files }))
    }
}

/// The canonical path, if it is a regular file under one of the roots.
fn allowed_file(path: &str, roots: &[PathBuf]) -> Result<String> {
    let refused = |why: String| EngineError::Refused {
        code: "path_not_allowed".into(),
        message: format!("paths: {why}"),
    };
    if roots.is_empty() {
        return Err(refused(
            "uploads are off: no upload root is configured (start tabwire with --upload-root DIR)"
                .into(),
        ));
    }
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| EngineError::invalid("paths", format!("'{path}': {e}")))?;
    if !canonical.is_file() {
        return Err(EngineError::invalid(
            "paths",
            format!("'{path}' is not a regular file"),
        ));
    }
    let inside = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|root| canonical.starts_with(root));
    if !inside {
        return Err(refused(format!(
            "'{path}' is outside the allowed upload roots"
        )));
    }
    Ok(canonical.display().to_string())
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
