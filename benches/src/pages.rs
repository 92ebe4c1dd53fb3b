//! The benchmark's pages, served on loopback.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A page with about 10,000 elements: a product table and a long link list, the shape of
/// a search-results or admin page.
fn big_page() -> String {
    let mut html = String::from(
        "<!doctype html><title>Big</title><h1>Inventory</h1><table id=inventory><thead><tr><th>SKU<th>Name<th>Stock<th></tr></thead><tbody>",
    );
    for i in 0..1500 {
        html.push_str(&format!(
            "<tr class=row><td>SKU-{i:05}</td><td>Widget {i}</td><td>{}</td><td><button>Edit</button></td></tr>",
            i * 7 % 300
        ));
    }
    html.push_str("</tbody></table><nav><ul class=links>");
    for i in 0..800 {
        html.push_str(&format!("<li><a href=\"/p/{i}\">Page {i}</a></li>"));
    }
    html.push_str("</ul></nav><footer>End</footer>");
    html
}

/// A small page: a button that counts its clicks and a text field.
const SMALL: &str = "<!doctype html><title>Small</title><h1>Small page</h1>\
<button id=go onclick=\"window.clicks = (window.clicks || 0) + 1; document.getElementById('count').textContent = window.clicks\">Go</button>\
<label>Name <input id=name></label><p>Clicks: <span id=count>0</span></p>";

/// The snapshot-fidelity corpus the end-to-end tests use, page by page.
pub const CORPUS: &[&str] = &[
    "forms.html",
    "tables.html",
    "menus.html",
    "dialogs.html",
    "modal.html",
    "shadow.html",
    "frames.html",
    "widgets.html",
    "names.html",
    "dates.html",
    "long-list.html",
];

/// Real pages nobody here wrote: documentation from Debian packages (Apache, Debian
/// Reference, git, PostgreSQL, Python, SQLite), fetched into `target/search-corpus` by
/// `scripts/fetch-search-corpus.sh` (the bench's set-up runs it when they are missing).
pub const REAL: &[&str] = &[
    "apache-name-vhosts",
    "debref-gui",
    "git-stash",
    "pg-vacuum",
    "py-csv",
    "sqlite-autoincrement",
];

/// A fetched real page (only names of `REAL`).
fn real_page(name: &str) -> Option<String> {
    REAL.contains(&name).then_some(())?;
    let path = crate::workspace()
        .join("target/search-corpus/pages")
        .join(format!("{name}.html"));
    std::fs::read_to_string(path).ok()
}

/// A page of `tests/pages/corpus` (only plain file names are served).
fn corpus_page(name: &str) -> Option<String> {
    if name.contains('/') || name.contains("..") || !name.ends_with(".html") {
        return None;
    }
    std::fs::read_to_string(crate::workspace().join("tests/pages/corpus").join(name)).ok()
}

/// A file of the lean corpus (`scripts/fetch-lean-corpus.sh`): MiniWoB++'s tree under
/// /wob/, documentation pages under /lean-docs/. A MiniWoB++ task page starts its task
/// when it loads, as MiniWoB++'s own harness starts it (past the START cover).
fn lean_corpus(path: &str) -> Option<(Vec<u8>, &'static str)> {
    if path.contains("..") {
        return None;
    }
    let root = crate::workspace().join("target/lean-corpus");
    let file = if let Some(rest) = path.strip_prefix("wob/") {
        root.join("miniwob/miniwob/html").join(rest)
    } else {
        root.join("docs").join(path.strip_prefix("lean-docs/")?)
    };
    let mut body = std::fs::read(&file).ok()?;
    let kind = match file.extension().and_then(|e| e.to_str()) {
        Some("js") => "application/javascript",
        Some("css") => "text/css",
        Some("png") => "image/png",
        _ => "text/html; charset=utf-8",
    };
    if path.starts_with("wob/miniwob/") && kind.starts_with("text/html") {
        // MiniWoB++ draws each task at random: every load of a page gets the same draw
        // (a seeded Math.random, set before the task's own scripts), so each server and
        // the reference browser see the very same instance.
        let seeded = b"<script>(() => { let s = 0x2545f491; Math.random = () => { s = (s + 0x6d2b79f5) | 0; let t = Math.imul(s ^ (s >>> 15), 1 | s); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; })();</script>";
        body.splice(0..0, seeded.iter().copied());
        body.extend_from_slice(
            b"<script>addEventListener('load', () => core.startEpisodeReal());</script>",
        );
    }
    Some((body, kind))
}

/// A page of the task benchmark's admin app (`benches/pages/task`, plain file names).
fn task_page(name: &str) -> Option<String> {
    if name.contains('/') || name.contains("..") || !name.ends_with(".html") {
        return None;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("pages/task");
    std::fs::read_to_string(dir.join(name)).ok()
}

/// The user and password the task app's login accepts.
pub const TASK_USER: &str = "ada";
pub const TASK_PASSWORD: &str = "lovelace";

/// The task app's login: a form POST answered with a redirect, so signing in is a real
/// navigation (to the dashboard, naming the user, or back to the form on a wrong
/// password).
fn task_login(form: &str) -> String {
    let field = |key: &str| {
        form.split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.replace('+', " "))
            .unwrap_or_default()
    };
    let location = if field("username") == TASK_USER && field("password") == TASK_PASSWORD {
        format!("/task/dashboard.html?user={TASK_USER}")
    } else {
        "/task/login.html?failed=1".to_owned()
    };
    format!(
        "HTTP/1.1 303 See Other\r\nLocation: {location}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
}

/// A whole request: its head, and as much body as its Content-Length says (a POST's body
/// may come in a later packet than its head).
async fn read_request(socket: &mut tokio::net::TcpStream) -> String {
    let mut request = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = socket.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        request.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&request);
        let Some(head_end) = text.find("\r\n\r\n") else {
            if request.len() > 65_536 {
                break;
            }
            continue;
        };
        let length = text[..head_end]
            .lines()
            .find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            })
            .unwrap_or(0);
        if request.len() >= head_end + 4 + length {
            break;
        }
    }
    String::from_utf8_lossy(&request).into_owned()
}

/// Serves /big (any path starting so), /corpus/NAME (the fidelity corpus), /real/NAME (a
/// fetched real page), /task/NAME (the task benchmark's app, and its login POST) and
/// everything else as the small page; returns the base URL.
pub async fn serve() -> anyhow::Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let big = big_page();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let big = big.clone();
            tokio::spawn(async move {
                let request = read_request(&mut socket).await;
                if request.starts_with("POST /task/login") {
                    let form = request.split_once("\r\n\r\n").map_or("", |(_, b)| b);
                    let _ = socket.write_all(task_login(form).as_bytes()).await;
                    return;
                }
                let path = request
                    .strip_prefix("GET /")
                    .and_then(|rest| rest.split([' ', '?']).next())
                    .unwrap_or_default();
                if let Some((body, kind)) = lean_corpus(path) {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                    return;
                }
                let body = if request.starts_with("GET /big") {
                    big
                } else if let Some(page) = request
                    .strip_prefix("GET /task/")
                    .and_then(|rest| rest.split([' ', '?']).next())
                {
                    task_page(page).unwrap_or_else(|| SMALL.to_owned())
                } else if let Some(page) = request
                    .strip_prefix("GET /corpus/")
                    .and_then(|rest| rest.split([' ', '?']).next())
                {
                    corpus_page(page).unwrap_or_else(|| SMALL.to_owned())
                } else if let Some(page) = request
                    .strip_prefix("GET /real/")
                    .and_then(|rest| rest.split([' ', '?']).next())
                {
                    real_page(page).unwrap_or_else(|| SMALL.to_owned())
                } else {
                    SMALL.to_owned()
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
            });
        }
    });
    Ok(base)
}
