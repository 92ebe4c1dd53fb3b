//! Browser data: cookies, storage, downloads, permission leases, network and console
//! recordings.

use serde_json::{Value, json};

use engine::{
    ConsolePage, DownloadRequest, LeaseRequest, NetworkFilter, NetworkOptions, StoragePage,
};

use super::args::named;
use crate::face::{Call, Profile, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

tool_params! {
    pub struct GetCookies {
        session_id: Option<TabRef> = Session, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
    }
}

tool_params! {
    pub struct SetCookies {
        cookies: Value = StrListOrObject, required, "cookie object or list (or JSON text): name, value, url, domain, path, expires (Unix s), httpOnly, secure, sameSite";
        session_id: Option<TabRef> = Session, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
        timeout: f64 = Seconds { max: 86_400.0 }, default(20.0), "seconds";
    }
}

tool_params! {
    pub struct DeleteCookies {
        name: String = Str, required, "";
        domain: Option<String> = Str, nullable, "";
        path: Option<String> = Str, nullable, "";
        url: Option<String> = Str, nullable, "default: the page's URL";
        session_id: Option<TabRef> = Session, nullable, "";
        tab_id: Option<TabRef> = NativeTabId, nullable, "the browser's tab id (or a handle)";
        timeout: f64 = Seconds { max: 86_400.0 }, default(20.0), "seconds";
    }
}

tool_params! {
    pub struct StorageGet {
        key: Option<String> = Str, nullable, "omit to page through all keys";
        area: String = Str, default("local"), "local or session";
        session_id: Option<TabRef> = Session, nullable, "";
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
        session_id: Option<TabRef> = Session, nullable, "";
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
        session_id: Option<TabRef> = Session, nullable, "";
        overwrite: bool = Bool, default(false), "";
    }
}

tool_params! {
    pub struct SetPermission {
        permission: String = Choice(&["notifications", "geolocation", "location", "camera", "microphone", "clipboard"]), required, "";
        setting: String = Choice(&["allow", "block", "ask"]), required, "";
        origin: String = Str, default(""), "http(s) origin; default: the tab's";
        duration_seconds: i64 = Int { min: 1, max: 600 }, default(300), "lease length, 60 to 600";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct ResetPermissions {
        origin: String = Str, default(""), "";
        permission: String = Str, default(""), "";
        session_id: Option<TabRef> = Session, nullable, "";
    }
}

tool_params! {
    pub struct NetworkStart {
        session_id: Option<TabRef> = Session, nullable, "";
        include_bodies: bool = Bool, default(true), "";
        max_entries: i64 = Int { min: 10, max: 2000 }, default(500), "ring size";
        max_body_bytes: i64 = Int { min: 1024, max: 2_097_152 }, default(262_144), "";
        body_timeout: f64 = Num { min: 0.1, max: 10.0 }, default(5.0), "seconds";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct NetworkStop {
        session_id: Option<TabRef> = Session, nullable, "";
        url_pattern: String = Str, default(""), "JavaScript RegExp";
        resource_type: String = Str, default(""), "e.g. Fetch, XHR, Document";
        status_min: Option<i64> = Int { min: 100, max: 599 }, nullable, "";
        status_max: Option<i64> = Int { min: 100, max: 599 }, nullable, "";
        include_response_bodies: bool = Bool, default(true), "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct ConsoleStart {
        session_id: Option<TabRef> = Session, nullable, "";
        max_entries: i64 = Int { min: 10, max: 5000 }, default(500), "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct ConsoleMessages {
        session_id: Option<TabRef> = Session, nullable, "";
        offset: i64 = Int { min: 0, max: 100_000_000 }, default(0), "";
        max_items: i64 = Int { min: 1, max: 5000 }, default(200), "";
        clear: bool = Bool, default(false), "empty the buffer after reading";
        filter: String = Choice(&["", "user", "all"]), default(""), "user: page main-world output only";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

tool_params! {
    pub struct ConsoleStop {
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(10.0), "seconds";
    }
}

pub async fn get_cookies(call: Call, p: GetCookies) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &p.tab_id).as_deref())
        .await?;
    let data = page.cookies(params::seconds(20.0)).await?;
    Ok(Reply::data(data).on(page.info()))
}

pub async fn set_cookies(call: Call, p: SetCookies) -> Result<Reply, ToolError> {
    let cookies = match p.cookies {
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
    let page = call
        .session
        .page(named(&p.session_id, &p.tab_id).as_deref())
        .await?;
    let data = page
        .set_cookies(cookies, params::seconds(p.timeout))
        .await?;
    Ok(Reply::data(data).on(page.info()))
}

pub async fn delete_cookies(call: Call, p: DeleteCookies) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &p.tab_id).as_deref())
        .await?;
    let data = page
        .delete_cookies(
            &p.name,
            p.domain.as_deref(),
            p.path.as_deref(),
            p.url.as_deref(),
            params::seconds(p.timeout),
        )
        .await?;
    Ok(Reply::data(data).on(page.info()))
}

/// `local`, `session`, `localStorage` or `sessionStorage`, any case.
fn storage_area(area: &str) -> Result<&'static str, ToolError> {
    match area.trim().to_ascii_lowercase().as_str() {
        "local" | "localstorage" => Ok("local"),
        "session" | "sessionstorage" => Ok("session"),
        other => Err(ToolError::param(
            "area",
            format!("'{other}' is not local or session"),
        )),
    }
}

pub async fn storage_get(call: Call, p: StorageGet) -> Result<Reply, ToolError> {
    let area = storage_area(&p.area)?;
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let paging = StoragePage {
        offset: p.offset as u64,
        max_items: p.max_items as u64,
        max_bytes: p.max_bytes as u64,
    };
    let data = page
        .storage_get(area, p.key.as_deref(), paging, params::seconds(p.timeout))
        .await?;
    Ok(Reply::data(data).on(page.info()))
}

pub async fn storage_set(call: Call, p: StorageSet) -> Result<Reply, ToolError> {
    if p.key.is_empty() {
        return Err(ToolError::param("key", "must not be empty"));
    }
    let area = storage_area(&p.area)?;
    let value = match p.value {
        Value::String(text) => text,
        other => other.to_string(),
    };
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let data = page
        .storage_set(area, &p.key, &value, params::seconds(p.timeout))
        .await?;
    Ok(Reply::data(data).on(page.info()))
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
        timeout: params::seconds(p.timeout),
        overwrite: p.overwrite,
    };
    Ok(Reply::reported(
        call.session.download(handle.as_deref(), request).await?,
    ))
}

pub async fn set_site_permission(call: Call, p: SetPermission) -> Result<Reply, ToolError> {
    if call.settings.profile() == Profile::Safe && p.setting == "allow" {
        // Safe needs the user's approval for every allow, and this server cannot ask.
        let message =
            "the safe profile needs the user's approval to allow a permission; nothing was changed";
        return Ok(Reply::data(json!({
            "status": "requires_user_action", "changed": false, "message": message,
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
    let data = call
        .session
        .set_site_permission(named(&p.session_id, &None).as_deref(), request)
        .await?;
    Ok(Reply::data(data))
}

pub async fn reset_site_permissions(call: Call, p: ResetPermissions) -> Result<Reply, ToolError> {
    let given = |s: &str| Some(s.to_owned()).filter(|s| !s.is_empty());
    let (origin, permission) = (given(&p.origin), given(&p.permission));
    let handle = p.session_id.map(|t| t.0);
    let data = call
        .session
        .reset_site_permissions(handle.as_deref(), origin.as_deref(), permission.as_deref())
        .await?;
    Ok(Reply::data(data))
}

pub async fn network_capture_start(call: Call, p: NetworkStart) -> Result<Reply, ToolError> {
    let options = NetworkOptions {
        include_bodies: p.include_bodies,
        max_entries: p.max_entries as usize,
        max_body_bytes: p.max_body_bytes as usize,
        body_timeout: params::seconds(p.body_timeout),
        stop_after: None,
        stop_when_idle: None,
        exclude_static: false,
    };
    let data = call
        .session
        .network_capture_start(
            named(&p.session_id, &None).as_deref(),
            options,
            params::seconds(p.timeout),
        )
        .await?;
    Ok(Reply::data(data))
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
    let given = |s: String| Some(s).filter(|s| !s.is_empty());
    let filter = NetworkFilter {
        url_pattern: given(p.url_pattern),
        resource_type: given(p.resource_type),
        status_min: p.status_min.map(|s| s as u16),
        status_max: p.status_max.map(|s| s as u16),
        include_bodies: p.include_response_bodies,
        exclude_static: false,
    };
    let mut data = call
        .session
        .network_capture_stop(
            named(&p.session_id, &None).as_deref(),
            filter,
            params::seconds(p.timeout),
        )
        .await?;
    // BrowserTap's records carry no headers: they would cost an agent more than they
    // tell it here.
    if let Some(records) = data["records"].as_array_mut() {
        for record in records.iter_mut().filter_map(Value::as_object_mut) {
            for key in [
                "request_headers",
                "response_headers",
                "post_data",
                "sent_at",
            ] {
                record.remove(key);
            }
        }
    }
    if let Some(data) = data.as_object_mut() {
        for key in ["ended_by_itself", "started_ms", "stopped_ms"] {
            data.remove(key);
        }
    }
    Ok(Reply::data(data))
}

pub async fn console_capture_start(call: Call, p: ConsoleStart) -> Result<Reply, ToolError> {
    let data = call
        .session
        .console_capture_start(
            named(&p.session_id, &None).as_deref(),
            p.max_entries as usize,
            params::seconds(p.timeout),
        )
        .await?;
    Ok(Reply::data(data))
}

pub async fn get_console_messages(call: Call, p: ConsoleMessages) -> Result<Reply, ToolError> {
    // Reading the buffer waits for nothing: `timeout` is accepted and has nothing to bound.
    let _ = p.timeout;
    let page = ConsolePage {
        offset: p.offset as usize,
        max_items: p.max_items as usize,
        clear: p.clear,
        user_only: p.filter == "user",
    };
    let data = call
        .session
        .console_messages(named(&p.session_id, &None).as_deref(), page)
        .await?;
    Ok(Reply::data(data))
}

pub async fn console_capture_stop(call: Call, p: ConsoleStop) -> Result<Reply, ToolError> {
    let _ = p.timeout; // as for get_console_messages
    let data = call
        .session
        .console_capture_stop(named(&p.session_id, &None).as_deref())
        .await?;
    Ok(Reply::data(data))
}

/// A JSON object given as text (`params_json`).
pub fn json_object(name: &str, text: &str) -> Result<Value, ToolError> {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(ToolError::param(name, "must be a JSON object")),
        Err(e) => Err(ToolError::param(name, format!("not valid JSON: {e}"))),
    }
}
