//! Hands tabwire's own log events to MCP clients that asked for logs
//! (`logging/setLevel`): the layer turns each event into one JSON object (its message and
//! fields) and publishes it on the server's log feed, which each listening session
//! filters by its own level. Nothing is formatted while no session listens.

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

pub struct McpLog;

impl<S: Subscriber> Layer<S> for McpLog {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if !mcp::logging::listened() {
            return;
        }
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let metadata = event.metadata();
        mcp::logging::publish(mcp::logging::Line {
            level: *metadata.level(),
            target: metadata.target().to_owned(),
            message: Value::Object(fields.0).to_string(),
        });
    }
}

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_owned(), Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_owned(), Value::from(format!("{value:?}")));
    }
}
