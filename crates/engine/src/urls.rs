//! What the engine reads from a URL, through the `url` crate: a URL split by hand
//! mistakes `//cdn/x` for a path, a user's `@` for a host, an IPv6 host for a port.

use url::{Host, Url};

/// The host of a URL, lowercased (`https://user@Shell.Example:8080/x` → `shell.example`;
/// an IPv6 host without its brackets); None for a URL without one (about:blank, data:)
/// or none at all.
pub fn host_of(url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    let host = match parsed.host()? {
        Host::Domain(domain) => domain.to_owned(),
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => ip.to_string(),
    };
    (!host.is_empty()).then_some(host)
}

/// The host and port of a URL, the scheme's own port where it names none
/// (`ws://[::1]/devtools` → `("::1", 80)`).
pub fn host_and_port(url: &str) -> Option<(String, u16)> {
    let port = Url::parse(url).ok()?.port_or_known_default()?;
    Some((host_of(url)?, port))
}

/// `host[:port]` of a URL, as a person reads where a page is (`example.org`,
/// `127.0.0.1:8080`); None without a host.
pub fn authority_of(url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    let host = parsed.host_str().filter(|host| !host.is_empty())?;
    Some(match parsed.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// The scheme and `host[:port]` of an http(s) URL (`("https", "example.org")`); None
/// for any other.
pub fn web_site(url: &str) -> Option<(&'static str, String)> {
    let scheme = match Url::parse(url).ok()?.scheme() {
        "http" => "http",
        "https" => "https",
        _ => return None,
    };
    Some((scheme, authority_of(url)?))
}

/// The origin of an http(s) URL (`https://example.org:8443`); None for another scheme.
pub fn web_origin(url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    matches!(parsed.scheme(), "http" | "https").then(|| parsed.origin().ascii_serialization())
}

/// The origin a caller named, if what it gave is an http(s) origin and nothing more
/// (`https://Example.com/` → `https://example.com`): no user, path, query or fragment.
pub fn origin_named(given: &str) -> Option<String> {
    let parsed = Url::parse(given.trim()).ok()?;
    let bare = parsed.username().is_empty()
        && parsed.password().is_none()
        && parsed.path() == "/"
        && parsed.query().is_none()
        && parsed.fragment().is_none();
    bare.then(|| web_origin(parsed.as_str())).flatten()
}

/// `reference` (an attribute's `src`, `href`) resolved against the page's URL, as the
/// page itself resolves it: absolute, scheme-relative (`//cdn/x`), root-relative or
/// relative to the page's directory.
pub fn resolve(base: &str, reference: &str) -> Option<String> {
    Url::parse(base)
        .ok()?
        .join(reference)
        .ok()
        .map(String::from)
}

/// Whether two URLs show the same page, as the Chrome MCP Server matches an open tab:
/// the same host (a leading `www.` aside), port, path (a final slash aside) and query.
/// The scheme is not compared (an `http` link to a page open over `https` finds it), nor
/// the fragment (a place on the page, not another page). A URL that does not parse is
/// the same only as itself.
pub fn same_page(a: &str, b: &str) -> bool {
    fn key(url: &Url) -> (Option<String>, Option<u16>, String, Option<String>) {
        let host = url
            .host_str()
            .map(|h| h.strip_prefix("www.").unwrap_or(h).to_owned());
        let path = url.path().trim_end_matches('/').to_owned();
        (host, url.port(), path, url.query().map(str::to_owned))
    }
    match (Url::parse(a), Url::parse(b)) {
        (Ok(a), Ok(b)) => key(&a) == key(&b),
        _ => !a.is_empty() && a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_found_past_users_ports_and_brackets() {
        assert_eq!(
            host_of("https://user@Shell.Example:8080/x").as_deref(),
            Some("shell.example")
        );
        assert_eq!(host_of("http://[::1]:9222/json").as_deref(), Some("::1"));
        assert_eq!(host_of("about:blank"), None);
        assert_eq!(host_of("data:text/html,hi"), None);
        assert_eq!(host_of("not a url"), None);
        assert_eq!(
            host_and_port("http://127.0.0.1:9222"),
            Some(("127.0.0.1".into(), 9222))
        );
        assert_eq!(
            host_and_port("ws://[::1]/devtools/browser/x"),
            Some(("::1".into(), 80))
        );
        assert_eq!(
            authority_of("http://127.0.0.1:8080/a").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            authority_of("https://example.org/a").as_deref(),
            Some("example.org")
        );
    }

    #[test]
    fn an_origin_is_a_web_pages_only() {
        assert_eq!(
            web_origin("https://a.example:8443/x?y").as_deref(),
            Some("https://a.example:8443")
        );
        assert_eq!(
            web_origin("https://u:p@a.example/x").as_deref(),
            Some("https://a.example")
        );
        assert_eq!(web_origin("file:///etc/passwd"), None);
        assert_eq!(
            web_site("https://u@www.example.org:8443/a"),
            Some(("https", "www.example.org:8443".into()))
        );
        assert_eq!(web_site("chrome://settings"), None);
        assert_eq!(
            origin_named("https://Example.com/").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(
            origin_named("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(origin_named("https://example.com/path"), None);
        assert_eq!(origin_named("https://example.com/?q"), None);
        assert_eq!(origin_named("ftp://example.com"), None);
        assert_eq!(origin_named("example.com"), None);
    }

    #[test]
    fn references_resolve_as_the_page_resolves_them() {
        let base = "https://site.example/docs/page.html?q=1";
        assert_eq!(
            resolve(base, "//cdn.example/x.js").as_deref(),
            Some("https://cdn.example/x.js")
        );
        assert_eq!(
            resolve(base, "/img/a.png").as_deref(),
            Some("https://site.example/img/a.png")
        );
        assert_eq!(
            resolve(base, "b.png").as_deref(),
            Some("https://site.example/docs/b.png")
        );
        assert_eq!(
            resolve(base, "../c.png").as_deref(),
            Some("https://site.example/c.png")
        );
        assert_eq!(
            resolve(base, "http://other.example/d").as_deref(),
            Some("http://other.example/d")
        );
    }

    #[test]
    fn the_same_page_ignores_www_a_final_slash_and_the_fragment_only() {
        assert!(same_page(
            "https://www.example.org/a/",
            "https://example.org/a#top"
        ));
        assert!(same_page("https://EXAMPLE.org/a", "https://example.org/a"));
        assert!(same_page(
            "https://example.org:443/a",
            "https://example.org/a"
        ));
        assert!(same_page("http://example.org/a", "https://example.org/a"));
        assert!(!same_page("https://example.org/A", "https://example.org/a"));
        assert!(!same_page(
            "https://example.org/a?x=1",
            "https://example.org/a?x=2"
        ));
        assert!(!same_page(
            "https://example.org:8443/a",
            "https://example.org/a"
        ));
        assert!(!same_page("", ""));
    }
}
