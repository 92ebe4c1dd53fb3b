//! localStorage and sessionStorage, through the page script.

use crate::ids::Deadline;

use serde_json::{Value, json};

use super::Page;
use crate::error::Result;

pub struct StoragePage {
    pub offset: u64,
    pub max_items: u64,
    pub max_bytes: u64,
}

impl Page {
    pub async fn storage_get(
        &self,
        area: &str,
        key: Option<&str>,
        paging: StoragePage,
        deadline: Deadline,
    ) -> Result<Value> {
        let args = json!({
            "area": area, "key": key, "offset": paging.offset,
            "max_items": paging.max_items, "max_bytes": paging.max_bytes,
        });
        self.run_ok(&self.top(), "storage_get", args, deadline)
            .await
    }

    pub async fn storage_set(
        &self,
        area: &str,
        key: &str,
        value: &str,
        deadline: Deadline,
    ) -> Result<Value> {
        self.run_ok(
            &self.top(),
            "storage_set",
            json!({ "area": area, "key": key, "value": value }),
            deadline,
        )
        .await
    }
}
