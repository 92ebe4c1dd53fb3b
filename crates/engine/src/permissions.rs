//! Temporary, origin-scoped permission leases. Each lease records the setting it
//! replaced and restores it on expiry, on reset, and after a restart (leases are kept in
//! a state file written atomically). A lease whose restoration fails stays on record as
//! `manual_recovery` with the prior setting.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::browser::{HOUSEKEEPING, lock};
use crate::engine::{AgentSession, Engine};
use crate::error::{EngineError, Result};
use crate::files;

/// Shortest and longest lease, in seconds.
pub const LEASE_RANGE: (u64, u64) = (60, 600);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Lease {
    pub id: String,
    pub origin: String,
    pub permission: String,
    /// What the origin had before: granted, denied or prompt.
    pub prior: String,
    /// Whether `prior` was read from the page (false: assumed the default, prompt).
    pub prior_verified: bool,
    pub setting: String,
    pub expires_at: u64,
    #[serde(default)]
    pub manual_recovery: Option<String>,
}

pub(crate) struct Leases {
    active: Mutex<Vec<Lease>>,
    loaded: std::sync::Once,
}

impl Default for Leases {
    fn default() -> Self {
        Leases {
            active: Mutex::new(Vec::new()),
            loaded: std::sync::Once::new(),
        }
    }
}

/// The Permissions API name and the CDP PermissionDescriptor name of a permission.
fn names(permission: &str) -> Result<(&'static str, &'static str)> {
    Ok(match permission {
        "notifications" => ("notifications", "notifications"),
        "geolocation" | "location" => ("geolocation", "geolocation"),
        "camera" => ("camera", "videoCapture"),
        "microphone" => ("microphone", "audioCapture"),
        "clipboard" => {
            return Err(EngineError::Unsupported(
                "permission: clipboard is unsupported because its exact prior state cannot be restored".into(),
            ));
        }
        other => {
            return Err(EngineError::invalid(
                "permission",
                format!("'{other}' is not notifications, geolocation, camera or microphone"),
            ));
        }
    })
}

fn cdp_setting(setting: &str) -> Result<&'static str> {
    match setting {
        "allow" | "granted" => Ok("granted"),
        "block" | "denied" => Ok("denied"),
        "ask" | "prompt" => Ok("prompt"),
        other => Err(EngineError::invalid(
            "setting",
            format!("'{other}' is not allow, block or ask"),
        )),
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty()).then(|| format!("{scheme}://{host}"))
}

impl AgentSession {
    pub async fn set_site_permission(
        &self,
        handle: Option<&str>,
        permission: &str,
        setting: &str,
        origin: Option<&str>,
        duration: Duration,
    ) -> Result<Value> {
        let (api_name, cdp_name) = names(permission)?;
        let (min, max) = (
            self.engine.config.min_lease_seconds.min(LEASE_RANGE.0),
            LEASE_RANGE.1,
        );
        if !(min..=max).contains(&duration.as_secs()) {
            return Err(EngineError::invalid(
                "duration_seconds",
                format!("must be from {} to {max}", LEASE_RANGE.0),
            ));
        }
        let setting = cdp_setting(setting)?;
        let page = self.page(handle).await?;
        let (url, _) = page.current_url().await?;
        let page_origin = origin_of(&url);
        let origin = match origin {
            Some(given) => origin_of(given)
                .filter(|o| o.len() == given.trim_end_matches('/').len())
                .ok_or_else(|| {
                    EngineError::invalid(
                        "origin",
                        format!("'{given}' is not an http(s) origin like https://example.com"),
                    )
                })?,
            None => page_origin.clone().ok_or_else(|| {
                EngineError::invalid(
                    "origin",
                    format!("the tab's URL {url} has no http(s) origin; pass origin"),
                )
            })?,
        };
        // The prior setting is read from a page of that origin when we have one.
        let prior = if page_origin.as_deref() == Some(origin.as_str()) {
            let expression =
                format!("navigator.permissions.query({{name: '{api_name}'}}).then(s => s.state)");
            page.cdp(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
                HOUSEKEEPING,
            )
            .await
            .ok()
            .and_then(|r| r["result"]["value"].as_str().map(str::to_owned))
        } else {
            None
        };
        let engine = &self.engine;
        engine.load_leases();
        // A second lease on the same origin and permission keeps the first one's prior.
        let existing = lock(&engine.leases.active)
            .iter()
            .find(|l| l.origin == origin && l.permission == cdp_name)
            .cloned();
        let browser = page.browser.clone();
        drop(page);
        let prior = match engine.current_permission(&browser, cdp_name, &origin).await {
            Some(read) => Some(read),
            None => prior,
        };
        engine
            .apply_permission(&browser, cdp_name, setting, &origin)
            .await?;
        let lease = Lease {
            id: existing.as_ref().map(|l| l.id.clone()).unwrap_or_else(|| {
                format!("lease-{:x}", now() ^ u64::from(std::process::id()) << 20)
            }),
            origin: origin.clone(),
            permission: cdp_name.to_owned(),
            prior: existing
                .as_ref()
                .map(|l| l.prior.clone())
                .or(prior.clone())
                .unwrap_or_else(|| "prompt".into()),
            prior_verified: existing
                .as_ref()
                .map(|l| l.prior_verified)
                .unwrap_or(prior.is_some()),
            setting: setting.to_owned(),
            expires_at: now() + duration.as_secs(),
            manual_recovery: None,
        };
        {
            let mut active = lock(&engine.leases.active);
            active.retain(|l| l.id != lease.id);
            active.push(lease.clone());
        }
        engine.save_leases();
        let (weak, id) = (Arc::downgrade(engine), lease.id.clone());
        tokio::spawn(async move {
            tokio::time::sleep(duration).await;
            if let Some(engine) = weak.upgrade() {
                let _ = engine
                    .restore_leases(|l| l.id == id && l.expires_at <= now())
                    .await;
            }
        });
        Ok(json!({ "status": "applied", "lease": lease, "duration_seconds": duration.as_secs() }))
    }

    pub async fn reset_site_permissions(
        &self,
        origin: Option<&str>,
        permission: Option<&str>,
    ) -> Result<Value> {
        let permission = permission.map(names).transpose()?.map(|(_, cdp)| cdp);
        let origin = origin.map(|o| o.trim_end_matches('/').to_owned());
        self.engine.load_leases();
        self.engine
            .restore_leases(|l| {
                origin.as_deref().is_none_or(|o| l.origin == o)
                    && permission.is_none_or(|p| l.permission == p)
            })
            .await
    }
}

/// The chrome.contentSettings type of a CDP permission name (the extension link).
fn content_type(name: &str) -> &'static str {
    match name {
        "notifications" => "notifications",
        "geolocation" => "location",
        "videoCapture" => "camera",
        _ => "microphone",
    }
}

impl Engine {
    /// Sets a permission: through CDP on a browser we launched or attached to, through
    /// chrome.contentSettings on a linked one (its debugger cannot reach Browser.*).
    async fn apply_permission(
        &self,
        browser: &crate::browser::Browser,
        name: &str,
        setting: &str,
        origin: &str,
    ) -> Result<()> {
        if browser.is_linked() {
            let setting = match setting {
                "granted" => "allow",
                "denied" => "block",
                _ => "ask",
            };
            let args = json!({ "type": content_type(name), "pattern": format!("{origin}/*"), "setting": setting });
            self.extension_call_on(browser, "contentSettings.set", args)
                .await?;
            return Ok(());
        }
        browser
            .conn
            .call(
                None,
                "Browser.setPermission",
                json!({ "permission": { "name": name }, "setting": setting, "origin": origin }),
                HOUSEKEEPING,
            )
            .await?;
        Ok(())
    }

    /// The setting an origin has now, where the browser can say (the extension link).
    async fn current_permission(
        &self,
        browser: &crate::browser::Browser,
        name: &str,
        origin: &str,
    ) -> Option<String> {
        if !browser.is_linked() {
            return None;
        }
        let args = json!({ "type": content_type(name), "url": format!("{origin}/") });
        let reply = self
            .extension_call_on(browser, "contentSettings.get", args)
            .await
            .ok()?;
        Some(
            match reply["setting"].as_str()? {
                "allow" => "granted",
                "block" => "denied",
                _ => "prompt",
            }
            .to_owned(),
        )
    }
}

impl Engine {
    /// Reads leases a previous run left (once per process).
    fn load_leases(&self) {
        self.leases.loaded.call_once(|| {
            let Some(path) = &self.config.state_file else {
                return;
            };
            let Ok(text) = std::fs::read_to_string(path) else {
                return;
            };
            match serde_json::from_str::<Vec<Lease>>(&text) {
                Ok(leases) => lock(&self.leases.active).extend(leases),
                Err(error) => {
                    tracing::warn!(%error, path = %path.display(), "unreadable lease file ignored")
                }
            }
        });
    }

    fn save_leases(&self) {
        let Some(path) = &self.config.state_file else {
            return;
        };
        let leases = lock(&self.leases.active).clone();
        let bytes = serde_json::to_vec_pretty(&leases).unwrap_or_default();
        if let Err(error) = files::write_atomic(path, &bytes) {
            tracing::warn!(%error, "cannot save permission leases");
        }
    }

    /// Restores the leases `matching` selects; those that cannot be restored stay on
    /// record as manual_recovery.
    pub(crate) async fn restore_leases(&self, matching: impl Fn(&Lease) -> bool) -> Result<Value> {
        let selected: Vec<Lease> = lock(&self.leases.active)
            .iter()
            .filter(|l| matching(l))
            .cloned()
            .collect();
        if selected.is_empty() {
            return Ok(json!({ "status": "nothing_to_reset", "restored": [] }));
        }
        let browser = self.browser().await?;
        let mut restored = Vec::new();
        let mut manual = Vec::new();
        for lease in selected {
            match self
                .apply_permission(&browser, &lease.permission, &lease.prior, &lease.origin)
                .await
            {
                Ok(()) => {
                    lock(&self.leases.active).retain(|l| l.id != lease.id);
                    restored.push(json!({ "origin": lease.origin, "permission": lease.permission, "restored_to": lease.prior, "prior_verified": lease.prior_verified }));
                }
                Err(error) => {
                    let guidance = format!(
                        "restore {} for {} to '{}' by hand in the browser's site settings: {error}",
                        lease.permission, lease.origin, lease.prior
                    );
                    for l in lock(&self.leases.active)
                        .iter_mut()
                        .filter(|l| l.id == lease.id)
                    {
                        l.manual_recovery = Some(guidance.clone());
                    }
                    manual.push(json!({ "origin": lease.origin, "permission": lease.permission, "prior": lease.prior, "manual_recovery": guidance }));
                }
            }
        }
        self.save_leases();
        Ok(
            json!({ "status": if manual.is_empty() { "restored" } else { "manual_recovery" }, "restored": restored, "manual_recovery": manual }),
        )
    }

    /// After a restart, leases left on record are restored at once: their timers died
    /// with the process that set them.
    pub(crate) fn restore_leftover_leases(self: &Arc<Self>) {
        self.load_leases();
        if lock(&self.leases.active).is_empty() {
            return;
        }
        let engine = self.clone();
        tokio::spawn(async move {
            let _ = engine.restore_leases(|l| l.manual_recovery.is_none()).await;
        });
    }
}
