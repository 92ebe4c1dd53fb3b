//! Cookies through CDP's Network domain, so HttpOnly and cross-path cookies work.

use crate::ids::Deadline;

use serde_json::{Value, json};

use super::Page;
use crate::error::{EngineError, Input, Result};

/// A cookie as the browser keeps it (CDP's `Network.Cookie`).
#[derive(Debug, Clone, PartialEq)]
pub struct Cookie {
    pub name: String,
    pub value: String,
    /// A domain cookie's domain starts with a dot; a host-only cookie's does not.
    pub domain: String,
    pub path: String,
    /// Unix seconds; none for a session cookie.
    pub expires: Option<f64>,
    pub http_only: bool,
    pub secure: bool,
    pub same_site: Option<SameSite>,
    /// The partition of a partitioned (CHIPS) cookie.
    pub partition: Option<CookiePartition>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SameSite {
    Strict,
    Lax,
    None,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CookiePartition {
    pub top_level_site: String,
    pub has_cross_site_ancestor: bool,
}

impl Cookie {
    fn from_cdp(cookie: &Value) -> Cookie {
        let text = |key: &str| cookie[key].as_str().unwrap_or_default().to_owned();
        let session = cookie["session"].as_bool().unwrap_or(false);
        let same_site = match cookie["sameSite"].as_str() {
            Some("Strict") => Some(SameSite::Strict),
            Some("Lax") => Some(SameSite::Lax),
            Some("None") => Some(SameSite::None),
            _ => None,
        };
        // Older browsers name the partition by its site alone.
        let partition = match &cookie["partitionKey"] {
            Value::Object(key) => Some(CookiePartition {
                top_level_site: key["topLevelSite"].as_str().unwrap_or_default().to_owned(),
                has_cross_site_ancestor: key["hasCrossSiteAncestor"].as_bool().unwrap_or(false),
            }),
            _ => None,
        };
        Cookie {
            name: text("name"),
            value: text("value"),
            domain: text("domain"),
            path: text("path"),
            expires: cookie["expires"].as_f64().filter(|_| !session),
            http_only: cookie["httpOnly"].as_bool().unwrap_or(false),
            secure: cookie["secure"].as_bool().unwrap_or(false),
            same_site,
            partition,
        }
    }
}

/// The cookies the browser would send to `url`.
#[derive(Debug, Clone)]
pub struct Cookies {
    pub url: String,
    pub cookies: Vec<Cookie>,
}

/// Each cookie asked to be set, in order, and whether the browser took it.
#[derive(Debug, Clone)]
pub struct CookiesSet {
    pub results: Vec<CookieSet>,
}

#[derive(Debug, Clone)]
pub struct CookieSet {
    pub name: String,
    /// The page it was scoped to, when it named neither url nor domain.
    pub scoped_to: Option<String>,
    /// Why the browser refused it; none when it was set.
    pub error: Option<String>,
}

impl CookiesSet {
    pub fn set(&self) -> usize {
        self.results.iter().filter(|r| r.error.is_none()).count()
    }

    pub fn failed(&self) -> usize {
        self.results.len() - self.set()
    }
}

/// Where a deletion looked, and what it took away.
#[derive(Debug, Clone)]
pub struct CookiesDeleted {
    pub name: String,
    pub scope: CookieScope,
    /// Cookies of that name before, less those after.
    pub deleted: usize,
    /// Cookies of that name left in the profile (other scopes).
    pub remaining: usize,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CookieScope {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Page {
    /// Cookies the page's URL would send (and those of its frames).
    pub async fn cookies(&self, deadline: Deadline) -> Result<Cookies> {
        let (url, _) = self.current_url().await?;
        self.cookies_of(&url, deadline).await
    }

    /// The cookies the browser would send to `url` (its profile's, not only this page's).
    pub async fn cookies_of(&self, url: &str, deadline: Deadline) -> Result<Cookies> {
        let reply = self
            .cdp("Network.getCookies", json!({ "urls": [url] }), deadline)
            .await?;
        let cookies = reply["cookies"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        Ok(Cookies {
            url: url.to_owned(),
            cookies: cookies.iter().map(Cookie::from_cdp).collect(),
        })
    }

    /// Sets cookies; those with neither url nor domain are scoped to the current page.
    /// Each cookie is set on its own and its result says whether the browser took it; a
    /// cookie it refused does not fail the others.
    pub async fn set_cookies(&self, cookies: Vec<Value>, deadline: Deadline) -> Result<CookiesSet> {
        let (url, _) = self.current_url().await?;
        let mut prepared = Vec::with_capacity(cookies.len());
        for (index, cookie) in cookies.into_iter().enumerate() {
            prepared.push(prepare_cookie(cookie, &url, index)?);
        }
        let mut results = Vec::with_capacity(prepared.len());
        for (cookie, scoped) in prepared {
            let name = cookie["name"].as_str().unwrap_or_default().to_owned();
            // One at a time, so a cookie the browser rejects is named.
            let error = match self.cdp("Network.setCookie", cookie, deadline).await {
                Ok(reply) if reply["success"] == false => {
                    Some("the browser rejected the cookie".to_owned())
                }
                Ok(_) => None,
                Err(EngineError::Cdp(cdp::CdpError::Protocol { message, .. })) => Some(message),
                Err(other) => return Err(other),
            };
            results.push(CookieSet {
                name,
                scoped_to: scoped.then(|| url.clone()),
                error,
            });
        }
        Ok(CookiesSet { results })
    }

    pub async fn delete_cookies(
        &self,
        name: &str,
        domain: Option<&str>,
        path: Option<&str>,
        url: Option<&str>,
        deadline: Deadline,
    ) -> Result<CookiesDeleted> {
        // The scope: what was named, else the page's URL.
        let mut scope = CookieScope {
            url: url.map(str::to_owned),
            domain: domain.map(str::to_owned),
            path: path.map(str::to_owned),
        };
        if scope.url.is_none() && scope.domain.is_none() {
            scope.url = Some(self.current_url().await?.0);
        }
        let mut params = json!(scope);
        params["name"] = json!(name);
        let before = self.matching_cookies(name, deadline).await?;
        self.cdp("Network.deleteCookies", params, deadline).await?;
        let after = self.matching_cookies(name, deadline).await?;
        Ok(CookiesDeleted {
            name: name.to_owned(),
            scope,
            deleted: before.saturating_sub(after),
            remaining: after,
        })
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
    fn cdp_cookies_are_read_with_their_session_and_same_site() {
        let session = Cookie::from_cdp(&json!({
            "name": "a", "value": "1", "domain": "example.com", "path": "/", "expires": -1,
            "secure": false, "httpOnly": true, "session": true,
        }));
        assert_eq!(session.expires, None);
        assert!(session.http_only);
        assert_eq!(session.same_site, None);
        let lasting = Cookie::from_cdp(&json!({
            "name": "b", "value": "2", "domain": ".example.com", "path": "/x",
            "expires": 1.9e9, "secure": true, "httpOnly": false, "session": false,
            "sameSite": "None",
            "partitionKey": { "topLevelSite": "https://a.test", "hasCrossSiteAncestor": false },
        }));
        assert_eq!(lasting.expires, Some(1.9e9));
        assert_eq!(lasting.same_site, Some(SameSite::None));
        let partition = lasting.partition.expect("a partition");
        assert_eq!(partition.top_level_site, "https://a.test");
        assert_eq!(
            json!(partition),
            json!({ "topLevelSite": "https://a.test", "hasCrossSiteAncestor": false })
        );
    }

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
