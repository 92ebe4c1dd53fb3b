//! One MCP client for every server: rmcp's, over the child's stdio or Streamable HTTP.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

/// A tool reply as the agent's model would read it.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    /// Every text block, joined by newlines.
    pub text: String,
    /// Base64 characters of image blocks (not text the model reads as tokens).
    pub image_chars: usize,
    pub is_error: bool,
    pub elapsed: Duration,
}

impl Reply {
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }

    pub fn tokens(&self) -> usize {
        tokens(&self.text)
    }
}

/// o200k_base tokens (the vocabulary of current OpenAI models), counted offline.
pub fn tokens(text: &str) -> usize {
    tiktoken_rs::o200k_base_singleton()
        .encode_with_special_tokens(text)
        .len()
}

/// Calls a tool and times the round trip; a reply flagged `isError` is still a reply.
pub async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> anyhow::Result<Reply> {
    let arguments = args.as_object().cloned().unwrap_or_default();
    let started = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(120),
        peer.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)),
    )
    .await
    .with_context(|| format!("{tool}: no reply within 120 s"))?
    .with_context(|| format!("{tool}: MCP error"))?;
    let elapsed = started.elapsed();
    let mut reply = Reply {
        is_error: result.is_error == Some(true),
        elapsed,
        ..Reply::default()
    };
    for block in &result.content {
        match block {
            ContentBlock::Text(t) => {
                if !reply.text.is_empty() {
                    reply.text.push('\n');
                }
                reply.text.push_str(&t.text);
            }
            ContentBlock::Image(image) => reply.image_chars += image.data.len(),
            _ => {}
        }
    }
    Ok(reply)
}

/// Like `call`, but an error reply is an error.
pub async fn call_ok(peer: &Peer<RoleClient>, tool: &str, args: Value) -> anyhow::Result<Reply> {
    let reply = call(peer, tool, args).await?;
    if reply.is_error {
        bail!("{tool} failed: {}", clip(&reply.text, 400));
    }
    Ok(reply)
}

pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        text.chars().take(max).collect::<String>() + "…"
    }
}
