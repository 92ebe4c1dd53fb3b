//! A thin Chrome DevTools Protocol client.
//!
//! This crate is the only place that knows the CDP wire format: JSON messages with
//! `id`/`method`/`params`/`sessionId`, NUL-framed over `--remote-debugging-pipe` or one
//! message per text frame over a WebSocket. Everything above it speaks in
//! [`Connection::call`] and [`Event`]s.
//!
//! Invariants:
//! - One reader task per connection; events are parsed only as far as
//!   `{method, sessionId, params}`, so a message we do not understand can never hang a caller.
//! - Every command has a deadline.
//! - When the connection drops, every waiter is answered at once: [`CdpError::Undelivered`]
//!   for a command the browser never read, else [`CdpError::Lost`] (it may have run);
//!   the event stream ends with it.

mod connection;
mod discovery;
mod transport;

pub use connection::{Backlog, CdpError, Connection, Event, Ledger};
pub use discovery::{DiscoveryError, websocket_url};
pub use transport::without_query;
