//! Cookies through CDP's Network domain, so HttpOnly and cross-path cookies work.

use std::time::Duration;

use serde_json::{Value, json};

use super::Page;
use crate::error::{EngineError, ErrorCode, Input, Result};

impl Page {
    /// Cookies the page's URL would send (and those of its frames).
    pub async fn cookies(&self, timeout: Duration) -> Result<Value> {
        let (url, _) = self.current_url().await?;
        self.cookies_of(&url, timeout).await
    }

    /// The cookies the browser would send to `url` (its profile's, not only this page's).
    pub async fn cookies_of(&self, url: &str, timeout: Duration) -> Result<Value> {
        let reply = self
            .cdp("Network.getCookies", json!({ "urls": [url] }), timeout)
            .await?;
        let cookies = reply["cookies"].as_array().cloned().unwrap_or_default();
        Ok(json!({ "url": url, "count": cookies.len(), "cookies": cookies }))
    }

    /// Sets cookies; those with neither url nor domain are scoped to the current page.
    pub async fn set_cookies(&self, cookies: Vec<Value>, timeout: Duration) -> Result<Value> {
        let (url, _) = self.current_url().await?;
        let mut prepared = Vec::with_capacity(cookies.len());
        for (index, cookie) in cookies.into_iter().enumerate() {
            prepared.push(prepare_cookie(cookie, &url, index)?);
        }
        let mut results = Vec::with_capacity(prepared.len());
        for cookie in prepared {
            let name = cookie["name"].clone();
            // One at a time, so a cookie the browser rejects is named.
            match self.cdp("Network.setCookie", cookie, timeout).await {
                Ok(reply) if reply["success"] == false => {
                    results.push(json!({ "name": name, "set": false, "error": "the browser rejected the cookie" }))
                }
                Ok(_) => results.push(json!({ "name": name, "set": true })),
                Err(EngineError::Cdp(cdp::CdpError::Protocol { message, .. })) => {
                    results.push(json!({ "name": name, "set": false, "error": message }))
                }
                Err(other) => return Err(other),
            }
        }
        let failed = results.iter().filter(|r| r["set"] == false).count();
        if failed == results.len() {
            return Err(EngineError::page(
                ErrorCode::CookieRejected,
                "no cookie was set",
                json!({ "results": results }),
            ));
        }
        Ok(json!({ "results": results, "set": results.len() - failed, "failed": failed }))
    }

    pub async fn delete_cookies(
        &self,
        name: &str,
        domain: Option<&str>,
        path: Option<&str>,
        url: Option<&str>,
        timeout: Duration,
    ) -> Result<Value> {
        let mut params = json!({ "name": name });
        match (url, domain) {
            (Some(url), _) => params["url"] = json!(url),
            (None, Some(domain)) => params["domain"] = json!(domain),
            (None, None) => params["url"] = json!(self.current_url().await?.0),
        }
        if let Some(path) = path {
            params["path"] = json!(path);
        }
        let before = self.matching_cookies(name, timeout).await?;
        self.cdp("Network.deleteCookies", params, timeout).await?;
        let after = self.matching_cookies(name, timeout).await?;
        Ok(json!({ "name": name, "deleted": before.saturating_sub(after), "remaining": after }))
    }

    async fn matching_cookies(&self, name: &str, timeout: Duration) -> Result<usize> {
        let all = self
            .cdp("Network.getAllCookies", json!({}), timeout)
            .await?;
        Ok(all["cookies"]
            .as_array()
            .map_or(0, |c| c.iter().filter(|c| c["name"] == name).count()))
    }
}

/// Maps the seed's cookie fields to Network.setCookie's; `expires` is Unix seconds.
fn prepare_cookie(cookie: Value, page_url: &str, index: usize) -> Result<Value> {
    let Value::Object(fields) = cookie else {
        return Err(EngineError::invalid(
            Input::Cookies,
            format!("cookie {index} is not an object with at least a name"),
        ));
    };
    let mut out = serde_json::Map::new();
    for (key, value) in fields {
        let key = match key.as_str() {
            "name" | "value" | "url" | "domain" | "path" | "expires" | "secure" | "sameSite"
            | "priority" => key,
            "httpOnly" | "http_only" => "httpOnly".to_owned(),
            "same_site" => "sameSite".to_owned(),
            other => {
                return Err(EngineError::invalid(
                    Input::Cookies,
                    format!("cookie {index}: unknown field '{other}'"),
                ));
            }
        };
        out.insert(key, value);
    }
    if !out.get("name").is_some_and(Value::is_string) {
        return Err(EngineError::invalid(
            Input::Cookies,
            format!("cookie {index}: name (a string) is required"),
        ));
    }
    out.entry("value").or_insert(json!(""));
    if !out.contains_key("url") && !out.contains_key("domain") {
        out.insert("url".into(), json!(page_url));
    }
    Ok(Value::Object(out))
}
