//! tabwire's MCP layer: the only crate that knows MCP.
//!
//! It owns the faces (tool catalogues: names, parameter schemas, descriptions,
//! annotations, reply shapes; `faces/`), the shared parameter and reply machinery
//! (`params`, `face`), the raw CDP policy, and the stdio and Streamable HTTP transports
//! (`server`). Tools are adapters: parameters in, engine calls, documented replies out.

mod error;
mod face;
pub mod faces;
mod http;
mod identity;
mod lean;
#[allow(deprecated)] // MCP logging is deprecated by SEP-2577; clients still use it.
pub mod logging;
mod page_tools;
mod params;
#[cfg(test)]
mod params_fuzz;
mod routes;
#[allow(deprecated)]
mod server;
mod stream;
mod tools;

pub use face::OVERRIDE_ENV;
pub use face::{Face, Guide, Profile, Replies, ToolDef};
pub use http::{DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS, HttpOptions, serve_http};
pub use server::{
    ServeError, SessionOptions, TabwireServer, serve_stdio, serve_stream, serve_stream_as,
};
pub use tools::ToolSet;

/// A tool's parameters as the JSON Schema its `tools/list` entry declares (in full).
pub fn input_schema(tool: &ToolDef) -> serde_json::Value {
    serde_json::Value::Object(params::schema((tool.params)()))
}
