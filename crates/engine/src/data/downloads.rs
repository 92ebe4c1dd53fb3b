//! Downloads through the browser's own download manager, with the profile's cookies:
//! a background tab navigates to the URL and the finished file is moved from a staging
//! folder to its place (a linked browser downloads through chrome.downloads and the file
//! is copied). A URL the browser shows instead of saving (a web page, an image, JSON) is
//! saved from the tab, byte for byte as the server sent it, and the reply names its
//! content type.

use crate::ids::Deadline;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::browser::{Browser, HOUSEKEEPING};
use crate::config::EngineConfig;
use crate::error::{EngineError, ErrorCode, Input, Result};
use crate::files::{self, ConfinedDir, Staging};
use crate::page::Page;

pub struct DownloadRequest {
    pub url: String,
    pub filename: Option<String>,
    /// Where the file lands: an absolute directory inside the output dir or a download
    /// root; None, the output dir's `downloads/`.
    pub directory: Option<String>,
    pub wait: bool,
    pub deadline: Deadline,
    pub overwrite: bool,
}

/// A download request with its directory confined.
struct Download {
    url: String,
    filename: Option<String>,
    directory: ConfinedDir,
    wait: bool,
    deadline: Deadline,
    overwrite: bool,
    /// The browser context the download runs in (an isolated session's, with its
    /// cookies); None: the browser's default.
    context: Option<String>,
}

/// Where a download may land: an absolute `directory` inside the output dir or one of the
/// operator's download roots (`--download-root`), or by default the output dir's
/// `downloads/`.
pub fn download_dir(config: &EngineConfig, directory: Option<&str>) -> Result<ConfinedDir> {
    let Some(directory) = directory else {
        return ConfinedDir::under(&config.output_dir, "downloads", Input::Directory);
    };
    if !Path::new(directory).is_absolute() {
        return Err(EngineError::invalid(
            Input::Directory,
            format!("'{directory}' must be an absolute path"),
        ));
    }
    let mut roots = vec![config.output_dir.clone()];
    roots.extend(config.download_roots.iter().cloned());
    files::dir_within_roots(&roots, Path::new(directory), Input::Directory).ok_or_else(|| {
        EngineError::refused_input(
            ErrorCode::PathNotAllowed,
            Input::Directory,
            format!(
                "'{directory}' is outside the output dir {} and every download root; start tabwire with --download-root DIR to allow it",
                config.output_dir.display()
            ),
        )
    })
}

/// The owner recorded on the throw-away tab a download runs in.
const DOWNLOAD_OWNER: &str = "tabwire-download";

/// The throw-away tab a download runs in, in the request's browser context (with its
/// cookies).
async fn download_tab(browser: &Browser, request: &Download) -> Result<crate::browser::Tab> {
    browser
        .open_tab_in(
            "about:blank",
            false,
            Some(DOWNLOAD_OWNER),
            None,
            request.context.as_deref(),
        )
        .await
}

/// Downloads a URL in a background tab of the browser's profile and moves the finished
/// file into the request's directory.
pub async fn download(
    browser: Arc<Browser>,
    config: Arc<EngineConfig>,
    request: DownloadRequest,
    context: Option<String>,
) -> Result<Downloaded> {
    crate::page::check_url_scheme(&request.url)?;
    let request = Download {
        directory: download_dir(&config, request.directory.as_deref())?,
        url: request.url,
        filename: request.filename,
        wait: request.wait,
        deadline: request.deadline,
        overwrite: request.overwrite,
        context,
    };
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
    if matches!(config.link, crate::config::LinkConfig::Endpoint(_)) {
        return download_streamed(browser, config, request).await;
    }
    let staging = Staging::of(&config.output_dir);
    let mut events = browser.conn.subscribe();
    catch_downloads_in(&browser, &config, request.context.as_deref()).await?;
    let tab = download_tab(&browser, &request).await?;
    let mut session = None;
    let shown = async {
        let page = Page::reserve(browser.clone(), tab.clone(), config.clone()).await?;
        // The response's type is in the network events (the download events lack it).
        page.cdp("Network.enable", json!({}), Deadline::after(HOUSEKEEPING))
            .await?;
        session = Some(page.session.clone());
        let landed = page.navigate(&request.url, request.deadline).await;
        match landed {
            Ok(landed) if landed.download => Ok(None),
            // The browser showed the URL instead: an image, text or JSON is saved from
            // the tab itself; a web page is refused.
            Ok(_) => save_shown_resource(&page, &request).await.map(Some),
            Err(error) => Err(EngineError::page(
                ErrorCode::DownloadNotStarted,
                format!("{} did not start a download: {error}", request.url),
                json!({ "url": request.url }),
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
    let progress = follow_progress(&mut events, session.as_deref(), &request).await;
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
            let mut failed = failed(local_id(), "interrupted", &request.url);
            failed.guid = Some(guid);
            return Ok(failed);
        }
        _ => {
            let mut pending = unfinished(&request, local_id(), Some(progress.received));
            if let DownloadState::InProgress { staging_path, .. } = &mut pending.state {
                *staging_path = Some(staging.file(&guid));
            }
            pending.guid = Some(guid);
            return Ok(pending);
        }
    }
    let name = request
        .filename
        .clone()
        .or(progress.suggested)
        .unwrap_or_else(|| "download".into());
    let target = request.directory.file(&sanitize(&name), Input::Filename)?;
    let written = files::move_into(staging.file(&guid), target, request.overwrite).await?;
    let mut done = completed(written, local_id(), &request.url, progress.mime.as_deref());
    done.guid = Some(guid);
    Ok(done)
}

/// A browser reached at a CDP endpoint may not share our file system (another machine, a
/// farm, another OS: its download folder is not ours), so its download is streamed to
/// us instead. A background tab navigates to the URL (the request a click would make,
/// with the profile's cookies), the response is held before the browser handles it
/// (`Fetch`, at the response stage), its body is read through `IO.read` chunk by chunk
/// into the staging folder and moved into place, and the navigation is then dropped.
async fn download_streamed(
    browser: Arc<Browser>,
    config: Arc<EngineConfig>,
    request: Download,
) -> Result<Downloaded> {
    let tab = download_tab(&browser, &request).await?;
    let saved = async {
        let page = Page::reserve(browser.clone(), tab.clone(), config.clone()).await?;
        let mut events = browser.conn.subscribe();
        let pattern =
            json!({ "urlPattern": "*", "resourceType": "Document", "requestStage": "Response" });
        page.cdp(
            "Fetch.enable",
            json!({ "patterns": [pattern] }),
            Deadline::after(HOUSEKEEPING),
        )
        .await?;
        // The navigation answers only once the held response is let go, so it runs
        // beside the handling of that response; it ends first only when it failed.
        let navigate = page.cdp(
            "Page.navigate",
            json!({ "url": request.url }),
            request.deadline,
        );
        tokio::pin!(navigate);
        let held = held_response(&mut events, &page.session, request.deadline);
        tokio::pin!(held);
        let paused = tokio::select! {
            paused = &mut held => paused?,
            navigated = &mut navigate => {
                if let Some(error) = navigated?["errorText"].as_str() {
                    return Ok(failed(None, error, &request.url));
                }
                held.await?
            }
        };
        let id = paused["requestId"].clone();
        let status = paused["responseStatusCode"].as_u64().unwrap_or(0);
        let outcome = if let Some(reason) = paused["responseErrorReason"].as_str() {
            Ok(failed(None, reason, &request.url))
        } else if status >= 400 {
            Ok(failed(None, &format!("http_{status}"), &request.url))
        } else {
            save_held_body(&page, &config, &request, &paused).await
        };
        let _ = page
            .cdp(
                "Fetch.failRequest",
                json!({ "requestId": id, "errorReason": "Aborted" }),
                Deadline::after(HOUSEKEEPING),
            )
            .await;
        outcome
    }
    .await;
    let _ = browser.close_tab(&tab).await;
    saved
}

/// The first document response held in `session`, before the deadline.
async fn held_response(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    session: &str,
    deadline: Deadline,
) -> Result<Value> {
    let seconds = deadline.budget().as_secs_f64();
    let deadline = deadline.at();
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(event))
                if event.method == "Fetch.requestPaused"
                    && event.session_id.as_deref() == Some(session) =>
            {
                return Ok(event.params.clone());
            }
            Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(_)) => return Err(EngineError::Cdp(cdp::CdpError::Disconnected)),
            Err(_) => {
                return Err(EngineError::page(
                    ErrorCode::DownloadNotStarted,
                    format!("no response within {seconds} s"),
                    Value::Null,
                ));
            }
        }
    }
}

/// Streams a held response's body into the request's directory.
async fn save_held_body(
    page: &Page,
    config: &EngineConfig,
    request: &Download,
    paused: &Value,
) -> Result<Downloaded> {
    let header = |name: &str| {
        paused["responseHeaders"].as_array().and_then(|headers| {
            headers
                .iter()
                .find(|h| {
                    h["name"]
                        .as_str()
                        .is_some_and(|n| n.eq_ignore_ascii_case(name))
                })
                .and_then(|h| h["value"].as_str())
        })
    };
    let name = request
        .filename
        .clone()
        .or_else(|| header("content-disposition").and_then(disposition_filename))
        .or_else(|| name_from_url(&request.url))
        .unwrap_or_else(|| "download".into());
    let target = request.directory.file(&sanitize(&name), Input::Filename)?;
    let body = page
        .cdp(
            "Fetch.takeResponseBodyAsStream",
            json!({ "requestId": paused["requestId"] }),
            request.deadline,
        )
        .await?;
    let stream = body["stream"].as_str().unwrap_or_default().to_owned();
    let staging = Staging::of(&config.output_dir);
    let read = page
        .read_stream_to_staging(&stream, &staging, "stream", request.deadline)
        .await;
    page.close_stream(&stream).await;
    let staged = read?;
    let written = files::move_into(staged, target, request.overwrite).await?;
    let mime = header("content-type").map(|t| t.split(';').next().unwrap_or(t).trim());
    let mut done = completed(written, local_id(), &request.url, mime);
    done.streamed = true;
    Ok(done)
}

/// The file name a `Content-Disposition` header gives: `filename*=UTF-8''…` (RFC 5987,
/// preferred) or `filename=…`, a token or a quoted string.
fn disposition_filename(header: &str) -> Option<String> {
    let params = disposition_params(header);
    let value = |key: &str| {
        params
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(key))
            .map(|(_, value)| value.as_str())
    };
    if let Some(extended) = value("filename*") {
        let encoded = extended.split_once("''").map_or(extended, |(_, rest)| rest);
        return Some(percent_decoded(encoded)).filter(|n| !n.is_empty());
    }
    value("filename")
        .map(str::to_owned)
        .filter(|n| !n.is_empty())
}

/// The parameters after a `Content-Disposition` header's type, as (name, value). A
/// value may be a quoted string (RFC 9110): a `;` or `=` inside the quotes is part of it,
/// and `\x` stands for `x`.
fn disposition_params(header: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    let mut chars = header.chars().peekable();
    // The type (`attachment`, `inline`).
    while chars.next_if(|c| *c != ';').is_some() {}
    // Each turn starts at a `;` (or the end).
    while chars.next().is_some() {
        let name: String =
            std::iter::from_fn(|| chars.next_if(|c| *c != '=' && *c != ';')).collect();
        if chars.next_if_eq(&'=').is_none() {
            continue;
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let value = if chars.next_if_eq(&'"').is_some() {
            let mut value = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => value.extend(chars.next()),
                    c => value.push(c),
                }
            }
            // Whatever follows the closing quote up to the next `;` is not the value's.
            while chars.next_if(|c| *c != ';').is_some() {}
            value
        } else {
            let token: String = std::iter::from_fn(|| chars.next_if(|c| *c != ';')).collect();
            token.trim().to_owned()
        };
        params.push((name.trim().to_owned(), value));
    }
    params
}

/// Which download a wait is for.
pub struct DownloadWait {
    /// A part of its file name or URL.
    pub name_contains: Option<String>,
    pub deadline: Deadline,
    /// Wait for it to finish (else: for it to start).
    pub wait_complete: bool,
}

/// A download a page started, as a wait found it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FoundDownload {
    pub id: String,
    pub url: String,
    /// Where the file is (inside the output dir for a browser tabwire drives by CDP; the
    /// browser's own download folder over the extension link).
    pub path: Option<PathBuf>,
    pub filename: String,
    pub mime: Option<String>,
    pub size: u64,
    /// `in_progress`, `complete` or `interrupted`.
    pub state: String,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
    pub exists: bool,
    pub sha256: Option<String>,
}

/// Lets the browser save what pages download into the staging folder and say so, so a
/// wait can find a download the page started before it. (A browser tabwire launched has
/// this from the start; an attached one from the first wait or download.)
pub async fn catch_downloads(browser: &Browser, config: &EngineConfig) -> Result<()> {
    catch_downloads_in(browser, config, None).await
}

/// The same for one browser context (an isolated session's), into its own staging
/// folder (under its own output dir).
pub async fn catch_downloads_in(
    browser: &Browser,
    config: &EngineConfig,
    context: Option<&str>,
) -> Result<()> {
    if browser.is_linked() {
        return Ok(());
    }
    let staging = Staging::of(&config.output_dir);
    staging.create_dir()?;
    let mut behavior = json!({
        "behavior": "allowAndName", "downloadPath": staging.path(), "eventsEnabled": true,
    });
    if let Some(context) = context {
        behavior["browserContextId"] = json!(context);
    }
    browser
        .conn
        .call(None, "Browser.setDownloadBehavior", behavior, HOUSEKEEPING)
        .await?;
    Ok(())
}

/// Waits for a download a page started (the oldest one no earlier wait took, matching
/// the name) and, once it is done, moves it into the output dir under its own name.
pub async fn wait_for_download(
    browser: &Browser,
    config: &EngineConfig,
    wait: DownloadWait,
) -> Result<FoundDownload> {
    if browser.is_linked() {
        return wait_linked(browser, &wait).await;
    }
    catch_downloads(browser, config).await?;
    let deadline = wait.deadline.at();
    let wanted = |r: &crate::browser::download_log::DownloadRecord| {
        wait.name_contains.as_deref().is_none_or(|part| {
            let part = part.to_lowercase();
            r.suggested_filename.to_lowercase().contains(&part)
                || r.url.to_lowercase().contains(&part)
        })
    };
    let log = &browser.downloads;
    let mut guid: Option<String> = None;
    loop {
        let changed = log.changed.notified();
        let record = match &guid {
            None => log.find(wanted, true),
            Some(guid) => log.get(guid),
        };
        if let Some(record) = record {
            guid = Some(record.guid.clone());
            if record.state != "inProgress" || !wait.wait_complete {
                return settle(config, record).await;
            }
        }
        if tokio::time::timeout_at(deadline, changed).await.is_err() {
            return match guid.and_then(|g| log.get(&g)) {
                Some(record) => settle(config, record).await,
                None => Err(EngineError::page(
                    ErrorCode::NoDownload,
                    format!(
                        "no download{} started within {} s",
                        wait.name_contains
                            .as_deref()
                            .map(|p| format!(" matching '{p}'"))
                            .unwrap_or_default(),
                        wait.deadline.budget().as_secs_f64()
                    ),
                    Value::Null,
                )),
            };
        }
    }
}

/// A finished download moved from the staging folder into the output dir (under a free
/// name: an existing file is never replaced).
async fn settle(
    config: &EngineConfig,
    record: crate::browser::download_log::DownloadRecord,
) -> Result<FoundDownload> {
    let state = match record.state.as_str() {
        "completed" => "complete",
        "canceled" => "interrupted",
        _ => "in_progress",
    };
    let mut found = FoundDownload {
        id: record.guid.clone(),
        url: record.url.clone(),
        path: None,
        filename: sanitize(&record.suggested_filename),
        mime: None,
        size: record.received_bytes,
        state: state.to_owned(),
        started_ms: record.started_ms,
        ended_ms: record.ended_ms,
        exists: false,
        sha256: None,
    };
    if state != "complete" {
        return Ok(found);
    }
    let staged = Staging::of(&config.output_dir).file(&record.guid);
    if !staged.exists() {
        // Moved by an earlier wait for the same download.
        return Ok(found);
    }
    let root = ConfinedDir::root(&config.output_dir);
    let (stem, extension) = match found.filename.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem.to_owned(), format!(".{extension}")),
        _ => (found.filename.clone(), String::new()),
    };
    for n in 0..100 {
        let name = if n == 0 {
            found.filename.clone()
        } else {
            format!("{stem} ({n}){extension}")
        };
        let target = root.file(&name, Input::Filename)?;
        match files::move_into(staged.clone(), target, false).await {
            Ok(written) => {
                found.filename = name;
                found.size = written.bytes;
                found.sha256 = Some(written.sha256);
                found.exists = true;
                found.path = Some(written.path);
                return Ok(found);
            }
            Err(error) if error.code() == ErrorCode::FileExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(EngineError::page(
        ErrorCode::FileExists,
        format!(
            "too many files named like {} in the output dir",
            found.filename
        ),
        Value::Null,
    ))
}

/// Over the extension link: the browser's own download list (chrome.downloads).
/// How long the extension waits, in ms: at least 1 (it reads 0 as its own default).
fn extension_wait(deadline: Deadline) -> u64 {
    (deadline.for_waiting().as_millis() as u64).max(1)
}

async fn wait_linked(browser: &Browser, wait: &DownloadWait) -> Result<FoundDownload> {
    let item = browser
        .extension_call(
            "downloads.waitNext",
            json!({
                "filenameContains": wait.name_contains,
                "timeoutMs": extension_wait(wait.deadline),
                "waitForComplete": wait.wait_complete,
            }),
        )
        .await?;
    if item.is_null() {
        return Err(EngineError::page(
            ErrorCode::NoDownload,
            format!(
                "no download started within {} s",
                wait.deadline.budget().as_secs_f64()
            ),
            Value::Null,
        ));
    }
    let filename = item["filename"].as_str().unwrap_or_default().to_owned();
    let parse_time = |v: &Value| v.as_f64().map(|t| t as u64);
    Ok(FoundDownload {
        id: item["id"].to_string(),
        url: item["url"].as_str().unwrap_or_default().to_owned(),
        path: Some(PathBuf::from(&filename)).filter(|p| !p.as_os_str().is_empty()),
        filename: sanitize(&filename),
        mime: item["mime"].as_str().map(str::to_owned),
        size: item["fileSize"]
            .as_u64()
            .or(item["bytesReceived"].as_u64())
            .unwrap_or_default(),
        state: item["state"].as_str().unwrap_or("in_progress").to_owned(),
        started_ms: parse_time(&item["startMs"]).unwrap_or_default(),
        ended_ms: parse_time(&item["endMs"]),
        exists: item["exists"] == true,
        sha256: None,
    })
}

/// What the browser's download events said before the deadline.
struct Progress {
    guid: Option<String>,
    suggested: Option<String>,
    /// The content type, where the browser says (CDP's events do not).
    mime: Option<String>,
    state: String,
    received: u64,
}

/// Reads download events until the download ends (or, without `wait`, starts), or the
/// request's deadline passes.
async fn follow_progress(
    events: &mut tokio::sync::broadcast::Receiver<Arc<cdp::Event>>,
    session: Option<&str>,
    request: &Download,
) -> Progress {
    let deadline = request.deadline.at();
    let mut progress = Progress {
        guid: None,
        suggested: None,
        mime: None,
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
            "Network.responseReceived"
                if event.session_id.as_deref() == session && params["type"] == "Document" =>
            {
                progress.mime = params["response"]["mimeType"].as_str().map(str::to_owned);
            }
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
async fn download_linked(browser: &Browser, request: &Download) -> Result<Downloaded> {
    let args = json!({ "url": request.url, "timeoutMs": extension_wait(request.deadline) });
    let item = browser.extension_call("downloads.fetch", args).await?;
    match item["state"].as_str() {
        Some("complete") => {}
        Some("interrupted") => {
            let reason = item["error"].as_str().unwrap_or("interrupted");
            return Ok(failed(item["id"].as_u64(), reason, &request.url));
        }
        _ => {
            let mut pending =
                unfinished(request, item["id"].as_u64(), item["bytesReceived"].as_u64());
            pending.browser_path = item["filename"].as_str().map(PathBuf::from);
            return Ok(pending);
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
    let mut done = completed(
        written,
        item["id"].as_u64(),
        &request.url,
        item["mime"].as_str(),
    );
    done.browser_path = Some(source);
    Ok(done)
}

/// Saves the main resource a tab shows (the browser displayed the URL rather than
/// downloading it) without fetching it again.
async fn save_shown_resource(page: &Page, request: &Download) -> Result<Downloaded> {
    // An error page is not the file: report it as the extension link's download would.
    let status = page
        .cdp(
            "Runtime.evaluate",
            json!({
                "expression": "performance.getEntriesByType('navigation')[0]?.responseStatus ?? 0",
                "returnByValue": true,
            }),
            Deadline::after(HOUSEKEEPING),
        )
        .await?["result"]["value"]
        .as_u64()
        .unwrap_or(0);
    if status >= 400 {
        return Ok(failed(None, &format!("http_{status}"), &request.url));
    }
    let tree = page
        .cdp(
            "Page.getResourceTree",
            json!({}),
            Deadline::after(HOUSEKEEPING),
        )
        .await?;
    let frame = &tree["frameTree"]["frame"];
    let mime = frame["mimeType"].as_str().unwrap_or_default();
    let cached = page
        .cdp(
            "Page.getResourceContent",
            json!({ "frameId": frame["id"], "url": frame["url"] }),
            request.deadline,
        )
        .await;
    let content = match cached {
        Ok(content) => content,
        // A response the browser may not cache (`Cache-Control: no-store`) is not in the
        // resource cache, but the network domain (enabled before the navigation) kept its
        // body; the document's request id is its loader id.
        Err(EngineError::Cdp(cdp::CdpError::Protocol { .. })) => {
            let body = page
                .cdp(
                    "Network.getResponseBody",
                    json!({ "requestId": frame["loaderId"] }),
                    request.deadline,
                )
                .await?;
            json!({ "content": body["body"], "base64Encoded": body["base64Encoded"] })
        }
        Err(other) => return Err(other),
    };
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
    let mut done = completed(written, local_id(), &request.url, Some(mime));
    done.shown_by_browser = true;
    Ok(done)
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

/// What a download came to, on every link alike.
#[derive(Debug, Clone)]
pub struct Downloaded {
    /// The browser's number for it (chrome.downloads' id), else one counted here; none
    /// for a streamed download that failed before it began.
    pub id: Option<u64>,
    /// CDP's name for it, where CDP downloaded it.
    pub guid: Option<String>,
    pub state: DownloadState,
    /// Where the user's own browser put it (the extension link; tabwire copies it).
    pub browser_path: Option<PathBuf>,
    /// Streamed to this machine from a browser that may not share its files.
    pub streamed: bool,
    /// The browser showed the URL rather than download it; the shown file was saved.
    pub shown_by_browser: bool,
}

#[derive(Debug, Clone)]
pub enum DownloadState {
    /// The file is in place.
    Completed {
        url: String,
        file: files::Written,
        content_type: Option<String>,
    },
    /// It ended without its file; `reason` is the browser's (`http_404`, `interrupted`).
    Failed { url: String, reason: String },
    /// Still running when the call returned: its file is not moved into place.
    InProgress {
        bytes_received: Option<u64>,
        requested_directory: PathBuf,
        /// Where the browser is writing it meanwhile (CDP).
        staging_path: Option<PathBuf>,
    },
}

impl Downloaded {
    fn new(id: Option<u64>, state: DownloadState) -> Downloaded {
        Downloaded {
            id,
            guid: None,
            state,
            browser_path: None,
            streamed: false,
            shown_by_browser: false,
        }
    }

    /// What went wrong, when it failed: its reason and a sentence saying so.
    pub fn failure(&self) -> Option<(&str, String)> {
        match &self.state {
            DownloadState::Failed { url, reason } => Some((
                reason.as_str(),
                format!("the download of {url} failed: {reason}"),
            )),
            _ => None,
        }
    }
}

fn completed(
    written: files::Written,
    id: Option<u64>,
    url: &str,
    mime: Option<&str>,
) -> Downloaded {
    let state = DownloadState::Completed {
        url: url.to_owned(),
        file: written,
        content_type: mime.filter(|m| !m.is_empty()).map(str::to_owned),
    };
    Downloaded::new(id, state)
}

/// A download's number where the browser gives none (a CDP download has a guid, kept
/// beside it; a file saved from a tab or streamed has nothing): counted per process, as
/// chrome.downloads counts its ids.
fn local_id() -> Option<u64> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    Some(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

fn failed(id: Option<u64>, reason: &str, url: &str) -> Downloaded {
    let state = DownloadState::Failed {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    Downloaded::new(id, state)
}

fn unfinished(request: &Download, id: Option<u64>, received: Option<u64>) -> Downloaded {
    let state = DownloadState::InProgress {
        bytes_received: received,
        requested_directory: request.directory.path(),
        staging_path: None,
    };
    Downloaded::new(id, state)
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
    use super::{disposition_filename, name_from_url, without_uniquifier};

    #[test]
    fn a_disposition_names_the_file() {
        assert_eq!(
            disposition_filename("attachment; filename=\"report.csv\"").as_deref(),
            Some("report.csv")
        );
        assert_eq!(
            disposition_filename("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf").as_deref(),
            Some("résumé.pdf")
        );
        assert_eq!(disposition_filename("inline"), None);
        // A `;` or `=` inside quotes is the name's own; `\"` is a quote.
        assert_eq!(
            disposition_filename("attachment; filename=\"a;b=c.csv\"; size=3").as_deref(),
            Some("a;b=c.csv")
        );
        assert_eq!(
            disposition_filename(r#"attachment; filename="say \"hi\".txt""#).as_deref(),
            Some("say \"hi\".txt")
        );
        assert_eq!(
            disposition_filename("attachment; FILENAME = plain.txt ; creation-date=x").as_deref(),
            Some("plain.txt")
        );
        // The extended form wins wherever it stands.
        assert_eq!(
            disposition_filename(
                "attachment; filename=\"fallback.pdf\"; filename*=UTF-8''na%C3%AFve.pdf"
            )
            .as_deref(),
            Some("naïve.pdf")
        );
    }

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
