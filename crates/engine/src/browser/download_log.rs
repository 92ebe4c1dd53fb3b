//! The downloads a browser reports (`Browser.downloadWillBegin`, `downloadProgress`),
//! newest last, so a wait for "the download the page just started" finds it even when
//! it began before the wait did. Bounded: the oldest are forgotten first.

use parking_lot::Mutex;
use std::collections::VecDeque;

use serde_json::Value;

const KEPT: usize = 64;

/// One download as the browser reported it.
#[derive(Debug, Clone, Default)]
pub struct DownloadRecord {
    pub guid: String,
    pub url: String,
    pub suggested_filename: String,
    /// `inProgress`, `completed` or `canceled`.
    pub state: String,
    pub received_bytes: u64,
    pub total_bytes: u64,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
    /// Already handed to a waiting call.
    pub claimed: bool,
}

#[derive(Default)]
pub struct DownloadLog {
    records: Mutex<VecDeque<DownloadRecord>>,
    pub(crate) changed: tokio::sync::Notify,
}

impl DownloadLog {
    pub(super) fn on_event(&self, method: &str, params: &Value) {
        let mut records = self.records.lock();
        match method {
            "Browser.downloadWillBegin" => {
                if records.len() == KEPT {
                    records.pop_front();
                }
                records.push_back(DownloadRecord {
                    guid: params["guid"].as_str().unwrap_or_default().to_owned(),
                    url: params["url"].as_str().unwrap_or_default().to_owned(),
                    suggested_filename: params["suggestedFilename"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    state: "inProgress".to_owned(),
                    started_ms: crate::ids::now_ms(),
                    ..DownloadRecord::default()
                });
            }
            "Browser.downloadProgress" => {
                let guid = params["guid"].as_str().unwrap_or_default();
                if let Some(record) = records.iter_mut().rev().find(|r| r.guid == guid) {
                    record.state = params["state"].as_str().unwrap_or("inProgress").to_owned();
                    record.received_bytes = params["receivedBytes"].as_u64().unwrap_or_default();
                    record.total_bytes = params["totalBytes"].as_u64().unwrap_or_default();
                    if record.state != "inProgress" {
                        record.ended_ms = Some(crate::ids::now_ms());
                    }
                }
            }
            _ => return,
        }
        drop(records);
        self.changed.notify_waiters();
    }

    /// The oldest unclaimed download that `matches` (claimed if `claim`).
    pub fn find(
        &self,
        matches: impl Fn(&DownloadRecord) -> bool,
        claim: bool,
    ) -> Option<DownloadRecord> {
        let mut records = self.records.lock();
        let record = records.iter_mut().find(|r| !r.claimed && matches(r))?;
        record.claimed |= claim;
        Some(record.clone())
    }

    /// The record of one download now.
    pub fn get(&self, guid: &str) -> Option<DownloadRecord> {
        self.records.lock().iter().find(|r| r.guid == guid).cloned()
    }
}
