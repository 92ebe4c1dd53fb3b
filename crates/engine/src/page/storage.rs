//! localStorage and sessionStorage, through the page script.

use crate::ids::Deadline;

use serde_json::json;

use super::Page;
use std::collections::BTreeMap;

use crate::error::Result;

pub struct StoragePage {
    pub offset: u64,
    pub max_items: u64,
    pub max_bytes: u64,
}

/// What a read of web storage found: one key, or a page of items in key order.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
pub enum StorageRead {
    Key {
        key: String,
        /// None: the key is not there (not a stored empty string).
        value: Option<String>,
    },
    Items {
        items: BTreeMap<String, String>,
        total_keys: u64,
        offset: u64,
        /// UTF-8 bytes of the keys and values read.
        bytes: u64,
        /// Where the next page starts; none when this one reached the end.
        next_offset: Option<u64>,
    },
}

/// A value written and read back the same.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct StorageWritten {
    pub key: String,
    /// The value's length in characters (code points).
    pub chars: u64,
    /// The key held a value before.
    pub replaced: bool,
    pub total_keys: u64,
}

impl Page {
    pub async fn storage_get(
        &self,
        area: StorageArea,
        key: Option<&str>,
        paging: StoragePage,
        deadline: Deadline,
    ) -> Result<StorageRead> {
        let args = json!({
            "area": area.as_str(), "key": key, "offset": paging.offset,
            "max_items": paging.max_items, "max_bytes": paging.max_bytes,
        });
        self.run_as(&self.top(), "storage_get", args, deadline)
            .await
    }

    pub async fn storage_set(
        &self,
        area: StorageArea,
        key: &str,
        value: &str,
        deadline: Deadline,
    ) -> Result<StorageWritten> {
        let args = json!({ "area": area.as_str(), "key": key, "value": value });
        self.run_as(&self.top(), "storage_set", args, deadline)
            .await
    }
}

/// localStorage or sessionStorage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageArea {
    Local,
    Session,
}

impl StorageArea {
    fn as_str(self) -> &'static str {
        match self {
            StorageArea::Local => "local",
            StorageArea::Session => "session",
        }
    }
}
