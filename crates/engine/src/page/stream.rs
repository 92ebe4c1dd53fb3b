//! Reading a CDP stream (`IO.read`) to a file: a download's held body, a trace.

use crate::ids::Deadline;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::Page;
use crate::error::{EngineError, Result};
use crate::files::Staging;

/// What one `IO.read` asks for.
const CHUNK: usize = 1 << 20;

impl Page {
    /// Reads the CDP stream `stream` to its end into a new staged file named from
    /// `kind`; each read has what is left of the deadline. The file's path, or the error
    /// with nothing left behind. The caller closes the stream, read or not.
    pub(crate) async fn read_stream_to_staging(
        &self,
        stream: &str,
        staging: &Staging,
        kind: &str,
        deadline: Deadline,
    ) -> Result<PathBuf> {
        let (path, file) = staging.create(kind)?;
        let read = self
            .read_stream_into(stream, tokio::fs::File::from_std(file), &path, deadline)
            .await;
        if let Err(error) = read {
            let _ = tokio::fs::remove_file(&path).await;
            return Err(error);
        }
        Ok(path)
    }

    async fn read_stream_into(
        &self,
        stream: &str,
        mut file: tokio::fs::File,
        path: &Path,
        deadline: Deadline,
    ) -> Result<()> {
        let io = |e: std::io::Error| EngineError::io(format!("cannot write {}", path.display()), e);
        loop {
            let chunk = self
                .cdp(
                    "IO.read",
                    json!({ "handle": stream, "size": CHUNK }),
                    deadline,
                )
                .await?;
            let data = chunk["data"].as_str().unwrap_or_default();
            if chunk["base64Encoded"] == true {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|e| {
                        EngineError::Io(format!("the browser sent undecodable content: {e}"))
                    })?;
                file.write_all(&bytes).await.map_err(io)?;
            } else {
                file.write_all(data.as_bytes()).await.map_err(io)?;
            }
            if chunk["eof"] == true {
                break;
            }
        }
        file.flush().await.map_err(io)
    }

    /// Lets the browser free a stream (read or not).
    pub(crate) async fn close_stream(&self, stream: &str) {
        let _ = self
            .cdp(
                "IO.close",
                json!({ "handle": stream }),
                Deadline::after(crate::browser::HOUSEKEEPING),
            )
            .await;
    }
}
