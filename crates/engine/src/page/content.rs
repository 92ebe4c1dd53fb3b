//! Reading a page as a reader would: its main content as text with the article's
//! metadata (`content.js`), its HTML cleaned of what only a browser needs, and HTTP
//! requests sent from the page itself (`net.js`), with its origin and cookies.

use crate::ids::Deadline;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::Page;
use crate::error::{EngineError, ErrorCode, Input, Result};

/// The page's main content, or an element's text.
#[derive(Debug, Clone, Serialize)]
pub struct MainContent {
    pub url: String,
    pub title: String,
    pub text: String,
    /// What the page says of itself as an article (absent when a selector was given).
    pub article: Option<Article>,
    pub metadata: Option<Metadata>,
    /// Locators of the frames inside the main content (in this document).
    #[serde(skip)]
    pub frames: Vec<Value>,
    /// The document's `readyState` when it was read.
    #[serde(skip)]
    pub ready_state: String,
    /// The main content's section headings (h1-h3), in order.
    #[serde(skip)]
    pub headings: Vec<String>,
}

/// How deep frames inside frames are read for [`Page::main_text_with_frames`].
const MAX_CONTENT_FRAME_DEPTH: usize = 2;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Article {
    pub title: String,
    pub byline: String,
    #[serde(rename(deserialize = "siteName"))]
    pub site_name: String,
    pub excerpt: String,
    pub lang: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Metadata {
    pub title: String,
    pub description: String,
    pub author: String,
    pub keywords: String,
    pub published: String,
    #[serde(rename(deserialize = "siteName"))]
    pub site_name: String,
}

/// The page's (or an element's) cleaned HTML.
#[derive(Debug, Clone, Serialize)]
pub struct CleanHtml {
    pub url: String,
    pub title: String,
    pub html: String,
}

/// A request sent from the page.
#[derive(Debug, Clone)]
pub struct FetchRequest {
    pub url: String,
    pub method: String,
    pub headers: Map<String, Value>,
    pub body: Option<String>,
    /// Multipart form data: `{fields: {..}, files: [{name, filename, type, base64}]}`.
    pub form: Option<Value>,
    pub deadline: Deadline,
}

/// What the server answered.
#[derive(Debug, Clone, Serialize)]
pub struct FetchResponse {
    pub status: u64,
    pub status_text: String,
    pub headers: Map<String, Value>,
    /// Parsed JSON, text, or a note naming binary data.
    pub body: Value,
    pub url: String,
    pub redirected: bool,
    pub bytes: u64,
    /// When the text was cut: how much was shown of how much.
    pub truncated: Option<Value>,
}

fn content_of(reply: &Value) -> MainContent {
    let text = |key: &str| reply[key].as_str().unwrap_or_default().to_owned();
    MainContent {
        url: text("url"),
        title: text("title"),
        text: text("text"),
        article: serde_json::from_value(reply["article"].clone()).ok(),
        metadata: serde_json::from_value(reply["metadata"].clone()).ok(),
        frames: reply["frames"].as_array().cloned().unwrap_or_default(),
        ready_state: text("ready_state"),
        headings: reply["headings"]
            .as_array()
            .map(|all| {
                all.iter()
                    .filter_map(|h| h.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

impl Page {
    /// The main content of the page, or with `selector`, that element's text.
    pub async fn main_content(
        &self,
        selector: Option<Value>,
        deadline: Deadline,
    ) -> Result<MainContent> {
        let reply = self
            .run_ok(
                &self.top(),
                "main_content",
                json!({ "selector": selector }),
                deadline,
            )
            .await?;
        Ok(content_of(&reply))
    }

    /// The main content with the main content of the frames inside it (depth first, two
    /// levels), each frame's text after its parent's. A frame that cannot be read is left
    /// out.
    pub async fn main_text_with_frames(&self, deadline: Deadline) -> Result<MainContent> {
        let mut top = self.main_content(None, deadline).await?;
        let mut queue: Vec<Vec<Value>> = top.frames.iter().map(|f| vec![f.clone()]).collect();
        queue.reverse();
        while let Some(path) = queue.pop() {
            let Ok(ctx) = self.frame_context(&path, deadline).await else {
                continue;
            };
            let Ok(reply) = self.run_ok(&ctx, "main_content", json!({}), deadline).await else {
                continue;
            };
            let inner = content_of(&reply);
            if !inner.text.is_empty() {
                top.text.push_str("\n\n");
                top.text.push_str(&inner.text);
            }
            if path.len() < MAX_CONTENT_FRAME_DEPTH {
                for frame in inner.frames.iter().rev() {
                    let mut deeper = path.clone();
                    deeper.push(frame.clone());
                    queue.push(deeper);
                }
            }
        }
        Ok(top)
    }

    pub async fn clean_html(
        &self,
        selector: Option<Value>,
        deadline: Deadline,
    ) -> Result<CleanHtml> {
        let reply = self
            .run_ok(
                &self.top(),
                "clean_html",
                json!({ "selector": selector }),
                deadline,
            )
            .await?;
        let text = |key: &str| reply[key].as_str().unwrap_or_default().to_owned();
        Ok(CleanHtml {
            url: text("url"),
            title: text("title"),
            html: text("html"),
        })
    }

    /// Sends an HTTP request from the page (relative URLs are the page's).
    pub async fn fetch_in_page(&self, request: &FetchRequest) -> Result<FetchResponse> {
        let has_scheme = request.url.split_once(':').is_some_and(|(scheme, _)| {
            !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        });
        if has_scheme {
            let lower = request.url.to_ascii_lowercase();
            if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                return Err(EngineError::refused_input(
                    ErrorCode::UrlSchemeRefused,
                    Input::Url,
                    format!("'{}' is refused; requests go to http(s) URLs", request.url),
                ));
            }
        }
        let method = if request.method.is_empty() {
            "GET"
        } else {
            &request.method
        };
        let reply = self
            .run_ok(
                &self.top(),
                "fetch",
                json!({
                    "url": request.url, "method": method, "headers": request.headers,
                    "body": request.body, "form": request.form,
                    "timeout_ms": request.deadline.for_waiting().as_millis() as u64,
                }),
                // The page's own deadline answers first; this one only bounds a hang.
                request.deadline,
            )
            .await?;
        let r = &reply["response"];
        Ok(FetchResponse {
            status: r["status"].as_u64().unwrap_or_default(),
            status_text: r["statusText"].as_str().unwrap_or_default().to_owned(),
            headers: r["headers"].as_object().cloned().unwrap_or_default(),
            body: r["body"].clone(),
            url: r["url"].as_str().unwrap_or_default().to_owned(),
            redirected: r["redirected"] == true,
            bytes: r["bytes"].as_u64().unwrap_or_default(),
            truncated: r.get("truncated").cloned(),
        })
    }
}
