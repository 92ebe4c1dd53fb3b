//! tabwire's MCP layer: the only crate that knows MCP.
//!
//! It owns the faces (tool catalogues: names, parameter schemas, descriptions,
//! annotations, reply shapes), the `btap.result.v1` envelope, and the stdio and Streamable
//! HTTP transports. Tools are adapters: parameters in, engine calls, documented replies out.

pub mod btap;
mod envelope;
mod face;
mod params;
mod policy;
mod server;

pub use face::{Profile, ServerState, ToolDef};
pub use server::{HttpOptions, ServeError, TabwireServer, serve_http, serve_stdio, serve_stream};

use std::sync::Arc;

/// The server-wide state for a face.
pub fn state(
    engine: Arc<engine::Engine>,
    face: &str,
    profile: Profile,
) -> Option<Arc<ServerState>> {
    let tools = match face {
        "btap" => btap::TOOLS,
        _ => return None,
    };
    Some(Arc::new(ServerState {
        engine,
        face: "btap",
        tools,
        profile: std::sync::Mutex::new(profile),
    }))
}
