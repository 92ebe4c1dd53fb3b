//! Raw CDP on a tab. What may be sent is decided before this is called.

use std::time::Duration;

use serde_json::Value;

use super::Page;
use crate::error::Result;

impl Page {
    /// Sends one command on this tab's session.
    pub async fn raw_cdp(&self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        self.cdp(method, params, timeout).await
    }
}
