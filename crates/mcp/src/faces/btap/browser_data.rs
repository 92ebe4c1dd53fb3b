//! Browser data: cookies, storage, downloads, permission leases, network and console
//! recordings.

use serde_json::{Value, json};

use engine::{
    CaptureStarted, CaptureSummary, ConsoleKind, ConsolePage, ConsoleRecord, Cookie, CookiesSet,
    DownloadRequest, DownloadState, Downloaded, EngineError, ErrorCode, LeaseRequest,
    NetworkFilter, NetworkOptions, NetworkRecord, SameSite, StorageArea, StoragePage, StorageRead,
    TabInfo,
};

use super::args::{named, page_by_tab_id};
use crate::face::{Call, Profile, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct GetCookies {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
    }
}

tool_params! {
    pub struct SetCookies {
        cookies: Value = StrListOrObject, required, "cookie object or list (or JSON text): name, value, url, domain, path, expires (Unix s), httpOnly, secure, sameSite";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(20.0), "seconds";
    }
}

tool_params! {
    pub struct DeleteCookies {
        name: String = Str, required, "";
        domain: Option<String> = Str, nullable, "";
        path: Option<String> = Str, nullable, "";
        url: Option<String> = Str, nullable, "default: the page's URL";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(20.0), "seconds";
    }
}

tool_params! {
    pub struct StorageGet {
        key: Option<String> = Str, nullable, "omit to page through all keys";
        area: String = Str, default("local"), "local or session";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(30.0), "seconds";
        offset: i64 = Int { min: 0, max: 100_000_000 }, default(0), "";
        max_items: i64 = Int { min: 1, max: 5000 }, default(500), "";
        max_bytes: i64 = Int { min: 1, max: 5_000_000 }, default(20_000), "";
    }
}

tool_params! {
    pub struct StorageSet {
        key: String = Str, required, "";
        value: Value = Text, required, "non-strings are JSON-encoded";
        area: String = Str, default("local"), "local or session";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(30.0), "seconds";
    }
}

tool_params! {
    pub struct DownloadFile {
        url: String = Str, required, "http(s)";
        filename: Option<String> = Str, nullable, "default: the name the server suggests";
        directory: Option<String> = Str, nullable, "an absolute directory inside the output dir or a --download-root; default: the output dir's downloads/";
        wait: bool = Bool, default(true), "";
        timeout: f64 = Seconds { max: 1800.0 }, default(60.0), "seconds";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        overwrite: bool = Bool, default(false), "";
    }
}

tool_params! {
    pub struct SetPermission {
        permission: String = Choice(&["notifications", "geolocation", "location", "camera", "microphone", "clipboard"]), required, "";
        setting: String = Choice(&["allow", "block", "ask"]), required, "";
        origin: String = Str, default(""), "http(s) origin; default: the tab's";
        duration_seconds: i64 = Int { min: 1, max: 600 }, default(300), "lease length, 60 to 600";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct ResetPermissions {
        origin: String = Str, default(""), "";
        permission: String = Str, default(""), "";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

tool_params! {
    pub struct NetworkStart {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        include_bodies: bool = Bool, default(true), "";
        max_entries: i64 = Int { min: 10, max: 2000 }, default(500), "ring size";
        max_body_bytes: i64 = Int { min: 1024, max: 2_097_152 }, default(262_144), "";
        body_timeout: f64 = Num { min: 0.1, max: 10.0 }, default(5.0), "seconds";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct NetworkStop {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        url_pattern: String = Str, default(""), "JavaScript RegExp";
        resource_type: String = Str, default(""), "e.g. Fetch, XHR, Document";
        status_min: Option<i64> = Int { min: 100, max: 599 }, nullable, "";
        status_max: Option<i64> = Int { min: 100, max: 599 }, nullable, "";
        include_response_bodies: bool = Bool, default(true), "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct ConsoleStart {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        max_entries: i64 = Int { min: 10, max: 5000 }, default(500), "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct ConsoleMessages {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        offset: i64 = Int { min: 0, max: 100_000_000 }, default(0), "";
        max_items: i64 = Int { min: 1, max: 1000 }, default(200), "";
        clear: bool = Bool, default(false), "empty the buffer after reading";
        filter: String = Choice(&["", "user", "all"]), default(""), "user: page main-world output only";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct ConsoleStop {
        session_id: Option<TabRef> = TabHandle, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

pub async fn get_cookies(call: Call, p: GetCookies) -> Result<Reply, ToolError> {
    let page = page_by_tab_id(&call, &p.session_id, &p.tab_id).await?;
    let read = page.cookies(call.deadline).await?;
    let info = page.info();
    // BrowserTap reads them with chrome.cookies: its objects, its names.
    let data = json!({
        "data": chrome_cookies(&read.cookies),
        "client_id": info.client_id,
        "url": read.url,
        "count": read.cookies.len(),
    });
    Ok(Reply::data(data).on(info))
}

/// Cookies as chrome.cookies describes them (what BrowserTap's extension reads).
pub fn chrome_cookies(cookies: &[Cookie]) -> Value {
    cookies.iter().map(chrome_cookie).collect()
}

/// One cookie as a chrome.cookies `Cookie`: a domain cookie's domain starts with a dot,
/// SameSite is lower case (`no_restriction` for None, `unspecified` when unset), and a
/// session cookie has no expirationDate. The default profile's store is "0".
fn chrome_cookie(cookie: &Cookie) -> Value {
    let same_site = match cookie.same_site {
        Some(SameSite::Strict) => "strict",
        Some(SameSite::Lax) => "lax",
        Some(SameSite::None) => "no_restriction",
        None => "unspecified",
    };
    let mut out = json!({
        "name": cookie.name, "value": cookie.value, "domain": cookie.domain,
        "hostOnly": !cookie.domain.starts_with('.'), "path": cookie.path,
        "secure": cookie.secure, "httpOnly": cookie.http_only,
        "sameSite": same_site, "session": cookie.expires.is_none(), "storeId": "0",
    });
    if let Some(expires) = cookie.expires {
        out["expirationDate"] = json!(expires);
    }
    if let Some(partition) = &cookie.partition {
        out["partitionKey"] = json!(partition);
    }
    out
}

pub async fn set_cookies(call: Call, p: SetCookies) -> Result<Reply, ToolError> {
    let cookies = match p.cookies {
        Value::String(text) if text.trim().is_empty() => {
            return Err(ToolError::param("cookies", "must not be empty"));
        }
        Value::String(text) => serde_json::from_str::<Value>(&text)
            .map_err(|e| ToolError::param("cookies", format!("not valid JSON: {e}")))?,
        other => other,
    };
    let cookies = match cookies {
        Value::Array(list) if !list.is_empty() => list,
        Value::Object(_) => vec![cookies],
        _ => {
            return Err(ToolError::param(
                "cookies",
                "expected a cookie object or a non-empty list of them",
            ));
        }
    };
    let page = page_by_tab_id(&call, &p.session_id, &p.tab_id).await?;
    let set = page.set_cookies(cookies, call.deadline).await?;
    Ok(cookies_set_reply(&set).on(page.info()))
}

/// BrowserTap's answer to set_cookies: each cookie `ok` or `failed` by its CDP write, and
/// the call `ok`, `partial` or `failed` (the last two reported as its own failure).
fn cookies_set_reply(set: &CookiesSet) -> Reply {
    let results: Vec<Value> = set
        .results
        .iter()
        .map(|r| {
            let mut out = json!({
                "name": r.name, "method": "cdp",
                "status": if r.error.is_none() { "ok" } else { "failed" },
            });
            if let Some(page) = &r.scoped_to {
                out["scoped_to"] = json!(page);
            }
            if let Some(error) = &r.error {
                out["error"] = json!(error);
            }
            out
        })
        .collect();
    let (ok, failed) = (set.set(), set.failed());
    let status = match (ok, failed) {
        (_, 0) => "ok",
        (0, _) => "failed",
        _ => "partial",
    };
    let mut data = json!({ "status": status, "set": ok, "failed": failed, "results": results });
    if failed == 0 {
        return Reply::data(data);
    }
    let hint = "Some cookies were not written. Read them back with get_cookies and check that domain, secure and sameSite fit the site.";
    data["hint"] = json!(hint);
    Reply::data(data).failed(
        status,
        format!("{failed} of {} cookies were not set", ok + failed),
    )
}

pub async fn delete_cookies(call: Call, p: DeleteCookies) -> Result<Reply, ToolError> {
    if p.name.trim().is_empty() {
        return Err(ToolError::param("name", "must not be empty"));
    }
    let page = page_by_tab_id(&call, &p.session_id, &p.tab_id).await?;
    let deleted = page
        .delete_cookies(
            p.name.trim(),
            p.domain.as_deref().filter(|d| !d.is_empty()),
            p.path.as_deref().filter(|d| !d.is_empty()),
            p.url.as_deref().filter(|d| !d.is_empty()),
            call.deadline,
        )
        .await?;
    let data = json!({
        "name": deleted.name, "scope": deleted.scope,
        "deleted": deleted.deleted, "remaining": deleted.remaining,
        "method": "cdp", "status": "ok",
    });
    Ok(Reply::data(data).on(page.info()))
}

/// `local`, `session`, `localStorage` or `sessionStorage`, any case: the engine's area
/// and the name BrowserTap reports it by.
fn storage_area(area: &str) -> Result<(StorageArea, &'static str), ToolError> {
    match area.trim().to_ascii_lowercase().as_str() {
        "local" | "localstorage" => Ok((StorageArea::Local, "localStorage")),
        "session" | "sessionstorage" => Ok((StorageArea::Session, "sessionStorage")),
        other => Err(ToolError::param(
            "area",
            format!("'{other}' is not local or session"),
        )),
    }
}

pub async fn storage_get(call: Call, p: StorageGet) -> Result<Reply, ToolError> {
    let (area, store) = storage_area(&p.area)?;
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let paging = StoragePage {
        offset: p.offset as u64,
        max_items: p.max_items as u64,
        max_bytes: p.max_bytes as u64,
    };
    let read = page
        .storage_get(area, p.key.as_deref(), paging, call.deadline)
        .await;
    let read = match read {
        Ok(read) => read,
        Err(error) => return storage_failure(error, store, p.key.as_deref(), &page),
    };
    let mut data = match read {
        StorageRead::Key { key, value } => {
            let mut data = json!({ "key": key, "found": value.is_some(), "value": value });
            if value.is_none() {
                data["note"] = json!(
                    "The key is not there: value is null, which is not a stored empty string."
                );
            }
            data
        }
        StorageRead::Items {
            items,
            total_keys,
            offset,
            bytes,
            next_offset,
        } => {
            let mut data = json!({
                "items": items, "count": items.len(), "total_keys": total_keys,
                "offset": offset, "bytes": bytes, "next_offset": next_offset,
                "truncated": next_offset.is_some(),
            });
            if next_offset.is_some() {
                data["hint"] = json!(
                    "The page of items hit max_items or max_bytes; go on from next_offset, or read one key."
                );
            }
            data
        }
    };
    data["status"] = json!("success");
    data["area"] = json!(store);
    Ok(Reply::data(data).on(page.info()))
}

pub async fn storage_set(call: Call, p: StorageSet) -> Result<Reply, ToolError> {
    if p.key.is_empty() {
        return Err(ToolError::param("key", "must not be empty"));
    }
    let (area, store) = storage_area(&p.area)?;
    let (value, encoded) = match p.value {
        Value::String(text) => (text, false),
        other => (other.to_string(), true),
    };
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let written = page.storage_set(area, &p.key, &value, call.deadline).await;
    let written = match written {
        Ok(written) => written,
        Err(error) => return storage_failure(error, store, Some(&p.key), &page),
    };
    let mut data = json!({
        "status": "success", "area": store, "key": written.key, "chars": written.chars,
        // BrowserTap's `bytes` here is the value's length in characters.
        "bytes": written.chars,
        "replaced": written.replaced, "total_keys": written.total_keys, "verified": true,
    });
    if encoded {
        data["note"] = json!("The value was not a string; it was stored as its JSON text.");
    }
    Ok(Reply::data(data).on(page.info()))
}

/// A storage call the page could not carry out, reported as BrowserTap reports it: storage
/// the page cannot reach as `error` (code `storage_unavailable`), a write that did not
/// land as `failed`. Anything else is raised.
fn storage_failure(
    error: EngineError,
    store: &str,
    key: Option<&str>,
    page: &engine::Page,
) -> Result<Reply, ToolError> {
    let message = error.bare_message();
    let (status, hint) = match error.code() {
        ErrorCode::StorageUnavailable => (
            "error",
            "Storage can be out of reach when third-party storage is blocked or the page is sandboxed or a data: URL; use an ordinary http(s) page.",
        ),
        ErrorCode::QuotaExceeded | ErrorCode::StorageError | ErrorCode::NotPersisted => (
            "failed",
            "Check that this is an ordinary http(s) page with site data allowed; if the quota is full, remove keys no longer needed.",
        ),
        _ => return Err(error.into()),
    };
    let mut data = json!({
        "status": status, "area": store, "error": message,
        "reason": error.code().as_str(), "hint": hint,
    });
    if let Some(key) = key {
        data["key"] = json!(key);
    }
    let code = if status == "error" {
        data["error_code"] = json!("storage_unavailable");
        data["retryable"] = json!(false);
        "storage_unavailable"
    } else {
        "failed"
    };
    Ok(Reply::data(data).failed(code, message).on(page.info()))
}

pub async fn download_file(call: Call, p: DownloadFile) -> Result<Reply, ToolError> {
    if p.directory.is_some() && !p.wait {
        return Err(ToolError::param("directory", "requires wait=true"));
    }
    if p.timeout <= 0.0 {
        return Err(ToolError::param("timeout", "must be more than 0 seconds"));
    }
    let handle = p.session_id.map(|t| t.0);
    let request = DownloadRequest {
        url: p.url,
        filename: p.filename.map(|name| name.replace('\\', "/")),
        directory: p.directory,
        wait: p.wait,
        deadline: call.deadline,
        overwrite: p.overwrite,
    };
    let downloaded = call.session.download(handle.as_deref(), request).await?;
    let reply = Reply::data(download_json(&downloaded));
    Ok(match downloaded.failure() {
        Some((reason, message)) => reply.failed(reason, message),
        None => reply,
    })
}

/// A download in BrowserTap's words: `completed` with the file's path, size and hash,
/// `failed` with the browser's reason, or `in_progress` with how far it got.
fn download_json(downloaded: &Downloaded) -> Value {
    let mut data = match &downloaded.state {
        DownloadState::Completed {
            url,
            file,
            content_type,
        } => json!({
            "status": "completed", "path": file.path, "size": file.bytes,
            "bytes_received": file.bytes, "total_bytes": file.bytes,
            "sha256": file.sha256, "url": url, "content_type": content_type,
        }),
        DownloadState::Failed { url, reason } => json!({
            "status": "failed", "code": reason, "reason": reason, "url": url,
            "error": downloaded.failure().map(|(_, message)| message),
        }),
        DownloadState::InProgress {
            bytes_received,
            requested_directory,
            staging_path,
        } => {
            let mut data = json!({
                "status": "in_progress", "bytes_received": bytes_received, "total_bytes": null,
                "directory_applied": false, "requested_directory": requested_directory,
                "hint": "the download had not finished when the call returned; its file was not moved into the requested directory",
            });
            if let Some(path) = staging_path {
                data["staging_path"] = json!(path);
            }
            data
        }
    };
    data["type"] = json!("download");
    data["download_id"] = json!(downloaded.id);
    if let Some(guid) = &downloaded.guid {
        data["guid"] = json!(guid);
    }
    if let Some(path) = &downloaded.browser_path {
        data["browser_path"] = json!(path);
    }
    if downloaded.streamed {
        data["streamed"] = json!(true);
    }
    if downloaded.shown_by_browser {
        data["shown_by_browser"] = json!(true);
    }
    data
}

pub async fn set_site_permission(call: Call, p: SetPermission) -> Result<Reply, ToolError> {
    if call.settings.profile() == Profile::Safe && p.setting == "allow" {
        // Safe needs the user's approval for every allow, and this server cannot ask.
        let message =
            "the safe profile needs the user's approval to allow a permission; nothing was changed";
        return Ok(Reply::data(json!({
            "status": "requires_user_action", "changed": false, "message": message,
            "reason": "elicitation_unsupported",
        }))
        .failed("requires_user_action", message));
    }
    let origin = Some(p.origin.as_str()).filter(|o| !o.is_empty());
    let request = LeaseRequest {
        permission: &p.permission,
        setting: &p.setting,
        origin,
        duration: std::time::Duration::from_secs(p.duration_seconds as u64),
    };
    let lease = call
        .session
        .set_site_permission(named(&p.session_id, &None).as_deref(), request)
        .await?;
    let data = json!({
        "ok": true, "status": "ok",
        "lease_id": lease.id, "origin": lease.origin,
        "permission": content_setting(&lease.permission),
        "expires_at": lease.expires_at * 1000,
        "duration_seconds": p.duration_seconds,
        "lease": lease,
    });
    Ok(Reply::data(data))
}

/// The browser's content-setting name of a permission, as BrowserTap reports it
/// (geolocation is `location`).
fn content_setting(permission: &str) -> &str {
    match permission {
        "geolocation" => "location",
        other => other,
    }
}

pub async fn reset_site_permissions(call: Call, p: ResetPermissions) -> Result<Reply, ToolError> {
    let given = |s: &str| Some(s.to_owned()).filter(|s| !s.is_empty());
    let (origin, permission) = (given(&p.origin), given(&p.permission));
    let handle = p.session_id.map(|t| t.0);
    let reset = call
        .session
        .reset_site_permissions(handle.as_deref(), origin.as_deref(), permission.as_deref())
        .await?;
    let failures: Vec<Value> = reset
        .manual_recovery
        .iter()
        .map(|m| {
            json!({
                "id": m.id, "origin": m.origin,
                "permission": content_setting(&m.permission),
                "previous_setting": m.prior, "error": m.guidance,
                "unsupported": true, "manual_recovery_required": true,
                "recovery_instruction": m.guidance,
            })
        })
        .collect();
    let mut data = json!({
        "ok": failures.is_empty(), "status": "ok", "restored": reset.restored.len(),
        "failures": failures, "remaining": reset.remaining,
        "origin": origin.as_deref().map_or("", |o| o.trim_end_matches('/')),
        "restored_leases": reset.restored,
    });
    if let Some(permission) = &permission {
        data["permission"] = json!(content_setting(permission));
    }
    if failures.is_empty() {
        return Ok(Reply::data(data));
    }
    // Some could not be put back: they stay on record for a person to restore.
    let message =
        "some permissions could not be restored; failures says how to restore them by hand";
    data["status"] = json!("error");
    data["manual_recovery_required"] = json!(true);
    data["message"] = json!(message);
    Ok(Reply::data(data).failed("operation_failed", message))
}

/// The tab a capture call names, resolved once so the reply can say which it was.
async fn capture_tab(call: &Call, session: &Option<TabRef>) -> Result<TabInfo, ToolError> {
    let (browser, tab) = call
        .session
        .resolve_tab(named(session, &None).as_deref())
        .await?;
    Ok(browser.info(&tab, None))
}

/// What every capture reply starts with, as BrowserTap's extension reports a capture:
/// the operation, the tab, and the recording's times and counts (`records` is the
/// buffer's size: requests or messages).
fn capture_head(
    operation: &str,
    tab: &TabInfo,
    summary: &CaptureSummary,
    status: &str,
    stopped_ms: Option<u64>,
    count_key: &str,
) -> Value {
    json!({
        "status": status, "operation": operation,
        "session_id": tab.handle, "tab_id": tab.tab_id,
        "started_at": summary.started_ms, "stopped_at": stopped_ms,
        count_key: summary.records, "dropped": summary.dropped,
        "max_entries": summary.max_entries, "events_lost": summary.events_lost,
    })
}

/// A capture's start as BrowserTap answers it: one this session runs already goes on.
fn started_head(
    operation: &str,
    tab: &TabInfo,
    started: &CaptureStarted,
    count_key: &str,
) -> Value {
    let mut data = capture_head(
        operation,
        tab,
        &started.summary,
        "capturing",
        None,
        count_key,
    );
    if started.already_running {
        data["already_running"] = json!(true);
    }
    data
}

/// A capture stop or read where none runs: BrowserTap answers it, it does not fail.
fn not_running(operation: &str, tab: &TabInfo, list_key: &str) -> Reply {
    let data = json!({
        "status": "not_running", "operation": operation,
        "session_id": tab.handle, "tab_id": tab.tab_id, list_key: [],
    });
    Reply::data(data).on(tab.clone())
}

/// The engine's answer, or None where no capture of that kind runs on the tab.
fn running<T>(outcome: Result<T, EngineError>) -> Result<Option<T>, ToolError> {
    match outcome {
        Ok(value) => Ok(Some(value)),
        Err(error) if error.code() == ErrorCode::NoCapture => Ok(None),
        Err(error) => Err(error.into()),
    }
}

pub async fn network_capture_start(call: Call, p: NetworkStart) -> Result<Reply, ToolError> {
    let tab = capture_tab(&call, &p.session_id).await?;
    let options = NetworkOptions {
        include_bodies: p.include_bodies,
        max_entries: p.max_entries as usize,
        max_body_bytes: p.max_body_bytes as usize,
        body_timeout: params::seconds(p.body_timeout),
        stop_after: None,
        stop_when_idle: None,
        exclude_static: false,
    };
    let started = call
        .session
        .network_capture_start(Some(&tab.handle), options, call.deadline)
        .await?;
    let mut data = started_head("network_capture_start", &tab, &started, "request_count");
    with_body_options(&mut data, &started.summary, 0);
    Ok(Reply::data(data).on(tab))
}

/// A network capture's body options and count of unread bodies, as BrowserTap says them.
fn with_body_options(data: &mut Value, summary: &CaptureSummary, body_errors: usize) {
    data["body_errors"] = json!(body_errors);
    if let Some(bodies) = summary.bodies {
        data["include_bodies"] = json!(bodies.include);
        data["max_body_bytes"] = json!(bodies.max_bytes);
    }
}

pub async fn network_capture_stop(call: Call, p: NetworkStop) -> Result<Reply, ToolError> {
    if let (Some(min), Some(max)) = (p.status_min, p.status_max)
        && min > max
    {
        return Err(ToolError::param(
            "status_max",
            "must be at least status_min",
        ));
    }
    let tab = capture_tab(&call, &p.session_id).await?;
    let given = |s: String| Some(s).filter(|s| !s.is_empty());
    let filter = NetworkFilter {
        url_pattern: given(p.url_pattern),
        resource_type: given(p.resource_type),
        status_min: p.status_min.map(|s| s as u16),
        status_max: p.status_max.map(|s| s as u16),
        include_bodies: p.include_response_bodies,
        exclude_static: false,
    };
    let stopped = call
        .session
        .network_capture_stop(Some(&tab.handle), filter, call.deadline)
        .await;
    let Some(stopped) = running(stopped)? else {
        return Ok(not_running("network_capture_stop", &tab, "requests"));
    };
    let head = ("network_capture_stop", "stopped", Some(stopped.stopped_ms));
    let mut data = capture_head(
        head.0,
        &tab,
        &stopped.summary,
        head.1,
        head.2,
        "request_count",
    );
    with_body_options(&mut data, &stopped.summary, stopped.body_errors);
    // The buffer's size before the filter, as BrowserTap counts it.
    data["request_count"] = json!(stopped.total_captured);
    data["returned"] = json!(stopped.records.len());
    data["filtered"] = json!(stopped.filtered);
    data["requests"] = stopped.records.iter().map(request_record).collect();
    Ok(Reply::data(data).on(tab))
}

/// One request as BrowserTap's capture records it (its names; its body fields only when
/// the body was read or failed to be).
fn request_record(record: &NetworkRecord) -> Value {
    let mut out = json!({
        "request_id": record.request_id, "url": record.url, "method": record.method,
        "type": record.resource_type, "timestamp": record.sent_at, "wall_time": record.started,
        "document_url": record.document_url, "request_headers": record.request_headers,
        "post_data": record.post_data, "status": record.status,
        "status_text": record.status_text, "mime_type": record.mime_type,
        "protocol": record.protocol, "response_headers": record.response_headers,
        "from_disk_cache": record.from_cache, "from_service_worker": record.from_service_worker,
        "remote_address": record.remote_address, "response_ms": record.response_ms,
        "encoded_data_length": record.encoded_bytes,
        "finished": record.finished.then_some(true), "failed": record.failed.then_some(true),
        "error_text": record.error_text, "canceled": record.canceled,
        "body_error": record.body_error,
    });
    if let Some(body) = &record.body {
        out["body"] = json!(body.text);
        out["body_size"] = json!(body.bytes);
        out["body_truncated"] = json!(body.truncated);
        out["base64_encoded"] = json!(body.base64);
    }
    // What was never seen is left out, not said as null.
    if let Some(fields) = out.as_object_mut() {
        fields.retain(|_, value| !value.is_null());
    }
    out
}

pub async fn console_capture_start(call: Call, p: ConsoleStart) -> Result<Reply, ToolError> {
    let tab = capture_tab(&call, &p.session_id).await?;
    let started = call
        .session
        .console_capture_start(Some(&tab.handle), p.max_entries as usize, call.deadline)
        .await?;
    let data = started_head("console_capture_start", &tab, &started, "message_count");
    Ok(Reply::data(data).on(tab))
}

pub async fn get_console_messages(call: Call, p: ConsoleMessages) -> Result<Reply, ToolError> {
    // Reading the buffer waits for nothing: `timeout` is accepted and has nothing to bound.
    let _ = p.timeout;
    let tab = capture_tab(&call, &p.session_id).await?;
    let page = ConsolePage {
        offset: p.offset as usize,
        max_items: p.max_items as usize,
        clear: p.clear,
        user_only: p.filter == "user",
    };
    let read = call.session.console_messages(Some(&tab.handle), page);
    let Some(read) = running(read.await)? else {
        return Ok(not_running("get_console_messages", &tab, "messages"));
    };
    let head = ("get_console_messages", "capturing");
    let mut data = capture_head(head.0, &tab, &read.summary, head.1, None, "message_count");
    data["offset"] = json!(read.offset);
    data["total"] = json!(read.total);
    data["filtered"] = json!(read.filtered);
    data["next_offset"] = json!(read.next_offset);
    data["truncated"] = json!(read.next_offset.is_some());
    if let Some(cleared) = read.cleared {
        data["cleared"] = json!(cleared);
    }
    data["messages"] = console_records(&read.messages);
    Ok(Reply::data(data).on(tab))
}

pub async fn console_capture_stop(call: Call, p: ConsoleStop) -> Result<Reply, ToolError> {
    let _ = p.timeout; // as for get_console_messages
    let tab = capture_tab(&call, &p.session_id).await?;
    let stopped = call.session.console_capture_stop(Some(&tab.handle));
    let Some(stopped) = running(stopped.await)? else {
        return Ok(not_running("console_capture_stop", &tab, "messages"));
    };
    let head = ("console_capture_stop", "stopped", Some(stopped.stopped_ms));
    let mut data = capture_head(
        head.0,
        &tab,
        &stopped.summary,
        head.1,
        head.2,
        "message_count",
    );
    data["messages"] = console_records(&stopped.messages);
    Ok(Reply::data(data).on(tab))
}

/// Console messages as BrowserTap's capture records them: `type` is the console call
/// (`log`, `warning`, …) or `exception`; an exception has its place in the source.
fn console_records(records: &[ConsoleRecord]) -> Value {
    records
        .iter()
        .map(|r| {
            let exception = r.kind == ConsoleKind::Exception;
            let mut out = json!({
                "type": if exception { "exception" } else { r.level.as_str() },
                "timestamp": r.timestamp, "text": r.text,
                "execution_context_id": r.execution_context_id,
                "stack_trace": r.stack_trace,
                "context": if r.main_world { "main" } else { "isolated" },
            });
            if exception {
                out["url"] = json!(r.url);
                out["line_number"] = json!(r.line);
                out["column_number"] = json!(r.column);
            } else {
                out["args"] = json!(r.args);
            }
            out
        })
        .collect()
}

/// A JSON object given as text (`params_json`).
pub fn json_object(name: &str, text: &str) -> Result<Value, ToolError> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ToolError::param(name, "must be a JSON object")),
        Err(e) => Err(ToolError::param(name, format!("not valid JSON: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie(name: &str, domain: &str) -> Cookie {
        Cookie {
            name: name.into(),
            value: "1".into(),
            domain: domain.into(),
            path: "/".into(),
            expires: None,
            http_only: false,
            secure: false,
            same_site: None,
            partition: None,
        }
    }

    #[test]
    fn cookies_read_as_chrome_cookies() {
        let session = cookie("a", "example.com");
        let lasting = Cookie {
            expires: Some(1.9e9),
            same_site: Some(SameSite::None),
            secure: true,
            ..cookie("b", ".example.com")
        };
        let chrome = chrome_cookies(&[session, lasting]);
        assert_eq!(chrome[0]["hostOnly"], true);
        assert_eq!(chrome[0]["sameSite"], "unspecified");
        assert_eq!(chrome[0]["session"], true);
        assert!(chrome[0].get("expirationDate").is_none());
        assert_eq!(chrome[1]["hostOnly"], false);
        assert_eq!(chrome[1]["sameSite"], "no_restriction");
        assert_eq!(chrome[1]["expirationDate"], 1.9e9);
        assert_eq!(chrome[1]["session"], false);
        assert_eq!(chrome[1]["storeId"], "0");
    }

    #[test]
    fn a_set_that_missed_some_cookies_is_reported_partial() {
        let result = |name: &str, error: Option<&str>| engine::CookieSet {
            name: name.into(),
            scoped_to: None,
            error: error.map(str::to_owned),
        };
        let set = CookiesSet {
            results: vec![result("a", None), result("b", Some("no"))],
        };
        let reply = cookies_set_reply(&set);
        assert_eq!(reply.data["status"], "partial");
        assert_eq!(reply.data["set"], 1);
        assert_eq!(reply.data["results"][1]["status"], "failed");
        assert_eq!(reply.data["results"][1]["error"], "no");
        assert_eq!(reply.data["results"][0]["method"], "cdp");
        assert!(reply.failure.is_some());
        let all = CookiesSet {
            results: vec![result("a", None)],
        };
        assert!(cookies_set_reply(&all).failure.is_none());
    }

    #[test]
    fn a_download_reads_as_browsertaps_record() {
        let file = engine::files::Written {
            path: "/out/downloads/a.csv".into(),
            bytes: 12,
            sha256: "ab".into(),
        };
        let done = Downloaded {
            id: Some(3),
            guid: Some("g-1".into()),
            state: DownloadState::Completed {
                url: "http://127.0.0.1/a.csv".into(),
                file,
                content_type: None,
            },
            browser_path: None,
            streamed: false,
            shown_by_browser: false,
        };
        let data = download_json(&done);
        assert_eq!(data["type"], "download");
        assert_eq!(data["status"], "completed");
        assert_eq!(data["download_id"], 3);
        assert_eq!(data["size"], 12);
        assert_eq!(data["path"], "/out/downloads/a.csv");
        assert_eq!(data["guid"], "g-1");
        assert!(data["content_type"].is_null() && data.get("streamed").is_none());
        assert!(done.failure().is_none());
        let failed = Downloaded {
            state: DownloadState::Failed {
                url: "http://127.0.0.1/gone".into(),
                reason: "http_404".into(),
            },
            guid: None,
            ..done
        };
        let data = download_json(&failed);
        assert_eq!(data["status"], "failed");
        assert_eq!(data["code"], "http_404");
        assert_eq!(
            data["error"],
            "the download of http://127.0.0.1/gone failed: http_404"
        );
        assert_eq!(failed.failure().map(|(reason, _)| reason), Some("http_404"));
    }

    #[test]
    fn a_storage_area_is_named_either_way_in_any_case() {
        assert_eq!(
            storage_area(" Local ").unwrap(),
            (StorageArea::Local, "localStorage")
        );
        assert_eq!(
            storage_area("sessionStorage").unwrap().0,
            StorageArea::Session
        );
        assert!(storage_area("cookies").is_err());
    }
}
