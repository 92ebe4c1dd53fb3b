//! Cookies through CDP's Network domain, so HttpOnly and cross-path cookies work.

use crate::ids::Deadline;

use serde_json::{Value, json};

use super::Page;
use crate::error::{EngineError, Input, Result};

impl Page {
    /// Cookies the page's URL would send (and those of its frames).
    pub async fn cookies(&self, deadline: Deadline) -> Result<Value> {
        let (url, _) = self.current_url().await?;
        self.cookies_of(&url, deadline).await
    }

    /// The cookies the browser would send to `url` (its profile's, not only this page's).
    pub async fn cookies_of(&self, url: &str, deadline: Deadline) -> Result<Value> {
        let reply = self
            .cdp("Network.getCookies", json!({ "urls": [url] }), deadline)
            .await?;
        let cookies = reply["cookies"].as_array().cloned().unwrap_or_default();
        Ok(json!({ "url": url, "count": cookies.len(), "cookies": cookies }))
    }

    /// Sets cookies; those with neither url nor domain are scoped to the current page
    /// (their result says `scoped_to`). Each cookie is set on its own and its result says
    /// whether the browser took it; a cookie it refused does not fail the others.
    pub async fn set_cookies(&self, cookies: Vec<Value>, deadline: Deadline) -> Result<Value> {
        let (url, _) = self.current_url().await?;
        let mut prepared = Vec::with_capacity(cookies.len());
        for (index, cookie) in cookies.into_iter().enumerate() {
            prepared.push(prepare_cookie(cookie, &url, index)?);
        }
        let mut results = Vec::with_capacity(prepared.len());
        for (cookie, scoped) in prepared {
            let mut result = json!({ "name": cookie["name"].clone() });
            if scoped {
                result["scoped_to"] = json!(url);
            }
            // One at a time, so a cookie the browser rejects is named.
            match self.cdp("Network.setCookie", cookie, deadline).await {
                Ok(reply) if reply["success"] == false => {
                    result["set"] = json!(false);
                    result["error"] = json!("the browser rejected the cookie");
                }
                Ok(_) => result["set"] = json!(true),
                Err(EngineError::Cdp(cdp::CdpError::Protocol { message, .. })) => {
                    result["set"] = json!(false);
                    result["error"] = json!(message);
                }
                Err(other) => return Err(other),
            }
            results.push(result);
        }
        let failed = results.iter().filter(|r| r["set"] == false).count();
        Ok(json!({ "results": results, "set": results.len() - failed, "failed": failed }))
    }

    pub async fn delete_cookies(
        &self,
        name: &str,
        domain: Option<&str>,
        path: Option<&str>,
        url: Option<&str>,
        deadline: Deadline,
    ) -> Result<Value> {
        // The scope: what was named, else the page's URL.
        let mut scope = serde_json::Map::new();
        if let Some(url) = url {
            scope.insert("url".into(), json!(url));
        }
        if let Some(domain) = domain {
            scope.insert("domain".into(), json!(domain));
        }
        if scope.is_empty() {
            scope.insert("url".into(), json!(self.current_url().await?.0));
        }
        if let Some(path) = path {
            scope.insert("path".into(), json!(path));
        }
        let mut params = Value::Object(scope.clone());
        params["name"] = json!(name);
        let before = self.matching_cookies(name, deadline).await?;
        self.cdp("Network.deleteCookies", params, deadline).await?;
        let after = self.matching_cookies(name, deadline).await?;
        Ok(json!({
            "name": name, "scope": scope,
            "deleted": before.saturating_sub(after), "remaining": after,
        }))
    }

    async fn matching_cookies(&self, name: &str, deadline: Deadline) -> Result<usize> {
        let all = self
            .cdp("Network.getAllCookies", json!({}), deadline)
            .await?;
        Ok(all["cookies"]
            .as_array()
            .map_or(0, |c| c.iter().filter(|c| c["name"] == name).count()))
    }
}

/// Maps the seed's cookie fields to Network.setCookie's; `expires` is Unix seconds.
/// Also says whether the cookie was scoped to the page (it named neither url nor domain).
fn prepare_cookie(cookie: Value, page_url: &str, index: usize) -> Result<(Value, bool)> {
    let Value::Object(fields) = cookie else {
        return Err(EngineError::invalid(
            Input::Cookies,
            format!("cookie {index} is not an object with at least a name"),
        ));
    };
    let mut out = serde_json::Map::new();
    for (key, value) in fields {
        let key = match key.as_str() {
            "name" | "value" | "url" | "domain" | "path" | "expires" | "secure" | "priority"
            | "partitionKey" => key,
            "httpOnly" | "httponly" | "http_only" => "httpOnly".to_owned(),
            "sameSite" | "same_site" => {
                let same_site = same_site(&value, index)?;
                if !same_site.is_null() {
                    out.insert("sameSite".into(), same_site);
                }
                continue;
            }
            // chrome.cookies' name for the expiry, so a cookie read with get_cookies can
            // be written back as it is.
            "expirationDate" => "expires".to_owned(),
            // What the browser decides itself (get_cookies reports them).
            "hostOnly" | "session" | "storeId" | "size" | "sourceScheme" | "sourcePort" => {
                continue;
            }
            other => {
                return Err(EngineError::invalid(
                    Input::Cookies,
                    format!("cookie {index}: unknown field '{other}'"),
                ));
            }
        };
        out.insert(key, value);
    }
    // Without Secure the browser drops a SameSite=None cookie silently.
    if out.get("sameSite").is_some_and(|s| s == "None") && out.get("secure") != Some(&json!(true)) {
        return Err(EngineError::invalid(
            Input::Cookies,
            format!("cookie {index}: sameSite None needs secure: true, or the browser drops it"),
        ));
    }
    if !out.get("name").is_some_and(Value::is_string) {
        return Err(EngineError::invalid(
            Input::Cookies,
            format!("cookie {index}: name (a string) is required"),
        ));
    }
    out.entry("value").or_insert(json!(""));
    let scoped = !out.contains_key("url") && !out.contains_key("domain");
    if scoped {
        out.insert("url".into(), json!(page_url));
    }
    Ok((Value::Object(out), scoped))
}

/// A cookie's SameSite in CDP's words (`Strict`, `Lax`, `None`), from either CDP's or
/// chrome.cookies' spelling, any case; `unspecified` leaves it to the browser (null).
fn same_site(value: &Value, index: usize) -> Result<Value> {
    let text = value
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    Ok(match text.as_str() {
        "strict" => json!("Strict"),
        "lax" => json!("Lax"),
        "none" | "no_restriction" => json!("None"),
        "unspecified" | "" => Value::Null,
        _ => {
            return Err(EngineError::invalid(
                Input::Cookies,
                format!("cookie {index}: sameSite must be Strict, Lax or None, not {value}"),
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_read_with_get_cookies_can_be_written_back() {
        // chrome.cookies' own fields: its names are mapped, what the browser decides is
        // left to it.
        let read = json!({
            "name": "k", "value": "v", "domain": ".example.com", "hostOnly": false,
            "path": "/", "secure": true, "httpOnly": true, "sameSite": "no_restriction",
            "session": false, "storeId": "0", "expirationDate": 1.9e9,
        });
        let (cookie, scoped) = prepare_cookie(read, "https://example.com/", 0).unwrap();
        assert!(!scoped);
        assert_eq!(cookie["sameSite"], "None");
        assert_eq!(cookie["expires"], 1.9e9);
        assert!(cookie.get("hostOnly").is_none() && cookie.get("storeId").is_none());
    }

    #[test]
    fn a_cookie_without_url_or_domain_is_scoped_to_the_page() {
        let (cookie, scoped) = prepare_cookie(
            json!({ "name": "k", "sameSite": "lax" }),
            "https://a.test/x",
            0,
        )
        .unwrap();
        assert!(scoped);
        assert_eq!(cookie["url"], "https://a.test/x");
        assert_eq!(cookie["sameSite"], "Lax");
        assert_eq!(cookie["value"], "");
    }

    #[test]
    fn bad_cookies_are_refused_before_anything_is_sent() {
        let refused = |cookie: Value| prepare_cookie(cookie, "https://a.test/", 0).is_err();
        assert!(refused(json!({ "value": "no name" })));
        assert!(refused(json!({ "name": "k", "vaule": "typo" })));
        assert!(refused(json!({ "name": "k", "sameSite": "sometimes" })));
        // The browser drops SameSite=None without Secure silently.
        assert!(refused(json!({ "name": "k", "sameSite": "None" })));
    }
}
