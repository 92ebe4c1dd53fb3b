//! Why a tool call failed, in the words every face maps to its own: a parameter a face
//! checked, the engine's error, or a failure with a code of the face's own. Below both
//! the faces' declarations (`face`) and their parameters (`params`), so neither imports
//! the other for it.

use serde_json::Value;

use engine::EngineError;

/// Why a tool call failed: a parameter the face itself checked, the engine's error, or a
/// failure the face reports with a code of its own.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{name}: {message}")]
    Param { name: String, message: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{message}")]
    Face {
        code: &'static str,
        message: String,
        details: Value,
        /// Whether something was dispatched that may have run.
        may_have_run: bool,
    },
}

impl ToolError {
    /// The engine's error, if this is one.
    pub fn engine_error(&self) -> Option<&EngineError> {
        match self {
            ToolError::Engine(error) => Some(error),
            _ => None,
        }
    }

    pub fn param(name: &str, message: impl Into<String>) -> ToolError {
        ToolError::Param {
            name: name.to_owned(),
            message: message.into(),
        }
    }
}
