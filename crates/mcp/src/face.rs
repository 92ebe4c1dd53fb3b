//! A face is a catalogue of MCP tools. Each tool is a short adapter from its parameters
//! to engine calls and from the engine's answer to its documented reply; faces hold no
//! browser logic.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use engine::{AgentSession, Engine, EngineError};

use crate::envelope::Reply;
use crate::params::{Args, Param};

pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Reply, ToolError>> + Send>>;

/// Why a tool call failed: a parameter the face itself checked, or the engine's error.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{name}: {message}")]
    Param { name: String, message: String },
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A failure the face itself reports, with a code of its own.
    #[error("{message}")]
    Face {
        code: &'static str,
        message: String,
        details: serde_json::Value,
    },
}

impl ToolError {
    pub fn param(name: &str, message: impl Into<String>) -> ToolError {
        ToolError::Param {
            name: name.to_owned(),
            message: message.into(),
        }
    }

    /// The stable code of the failure.
    pub fn code(&self) -> &str {
        match self {
            ToolError::Param { .. } => "invalid_argument",
            ToolError::Engine(EngineError::Invalid { .. }) => "invalid_argument",
            ToolError::Engine(error) => error.code().as_str(),
            ToolError::Face { code, .. } => code,
        }
    }
}

/// Honest hints for every parameter path of a tool.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

/// Reads the browser; changes nothing.
pub const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};
/// Changes page or browser state, nothing irreversible.
pub const ACT: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: true,
};
/// Can lose state that cannot be recovered (closing tabs, running arbitrary script).
pub const DESTROY: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
    open_world: true,
};

pub struct ToolDef {
    pub name: &'static str,
    pub group: &'static str,
    pub description: &'static str,
    pub params: &'static [Param],
    pub hints: Hints,
    pub run: fn(Call) -> ToolFuture,
}

/// What a tool adapter gets: the calling agent's session, checked arguments and the
/// server-wide state.
pub struct Call {
    pub session: Arc<AgentSession>,
    pub args: Args,
    pub server: Arc<ServerState>,
}

impl Call {
    pub fn engine(&self) -> &Arc<Engine> {
        &self.session.engine
    }

    pub fn tab(&self) -> Option<String> {
        self.args.id("session_id")
    }
}

/// Automation profile: `safe` refuses risky operations outright; `lab` allows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Safe,
    Lab,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Safe => "safe",
            Profile::Lab => "lab",
        }
    }
}

pub struct ServerState {
    pub engine: Arc<Engine>,
    pub face: &'static str,
    pub tools: &'static [ToolDef],
    pub profile: std::sync::Mutex<Profile>,
}

impl ServerState {
    pub fn profile(&self) -> Profile {
        *self.profile.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_profile(&self, profile: Profile) {
        *self.profile.lock().unwrap_or_else(|p| p.into_inner()) = profile;
    }
}
