//! Temporary, origin-scoped permission leases. Each lease records the setting it
//! replaced and restores it on expiry, on reset, and when a browser next connects after a
//! restart (leases are kept in a state file written atomically). A lease whose
//! restoration fails stays on record as `manual_recovery` with the prior setting.

use crate::ids::Deadline;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::browser::{Browser, Browsers, HOUSEKEEPING};
use crate::error::{EngineError, Input, Result};
use crate::files;
use crate::page::Page;

/// Shortest and longest lease, in seconds.
pub const LEASE_RANGE: (u64, u64) = (60, 600);

/// A permission a lease can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Notifications,
    Geolocation,
    Camera,
    Microphone,
}

impl Permission {
    pub fn parse(name: &str) -> Result<Permission> {
        Ok(match name {
            "notifications" => Permission::Notifications,
            "geolocation" | "location" => Permission::Geolocation,
            // Older state files used CDP's PermissionType names.
            "camera" | "videoCapture" => Permission::Camera,
            "microphone" | "audioCapture" => Permission::Microphone,
            "clipboard" => {
                return Err(EngineError::Unsupported(
                    "clipboard is unsupported because its exact prior state cannot be restored"
                        .into(),
                ));
            }
            other => {
                return Err(EngineError::invalid(
                    Input::Permission,
                    format!("'{other}' is not notifications, geolocation, camera or microphone"),
                ));
            }
        })
    }

    /// The Permissions API name, which is also CDP's PermissionDescriptor name.
    pub fn name(self) -> &'static str {
        match self {
            Permission::Notifications => "notifications",
            Permission::Geolocation => "geolocation",
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
        }
    }

    /// The chrome.contentSettings type (the extension link).
    fn content_type(self) -> &'static str {
        match self {
            Permission::Notifications => "notifications",
            Permission::Geolocation => "location",
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
        }
    }
}

/// The setting a lease applies or restores, in CDP's words.
fn cdp_setting(setting: &str) -> Result<&'static str> {
    match setting {
        "allow" | "granted" => Ok("granted"),
        "block" | "denied" => Ok("denied"),
        "ask" | "prompt" => Ok("prompt"),
        other => Err(EngineError::invalid(
            Input::Setting,
            format!("'{other}' is not allow, block or ask"),
        )),
    }
}

/// What a reset put back, and what it could not.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Reset {
    pub restored: Vec<Restored>,
    /// Leases the browser would not take back: they stay on record for a person.
    pub manual_recovery: Vec<ManualRecovery>,
    /// This browser's leases still on record.
    pub remaining: usize,
}

/// A lease put back: the origin's permission as it was before.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub origin: String,
    pub permission: String,
    pub restored_to: String,
    pub prior_verified: bool,
}

/// A lease that could not be put back, and how a person puts it back.
#[derive(Debug, Clone, Serialize)]
pub struct ManualRecovery {
    pub id: String,
    pub origin: String,
    pub permission: String,
    pub prior: String,
    pub guidance: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Lease {
    pub id: String,
    /// The browser (profile) it was set in, by client id: only that browser restores it.
    #[serde(default)]
    pub client_id: String,
    /// The browser context it was set in, when not the browser's default (an isolated
    /// session's): it goes with the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    pub origin: String,
    pub permission: String,
    /// What the origin had before: granted, denied or prompt.
    pub prior: String,
    /// Whether `prior` was read from the browser or the page (false: assumed prompt).
    pub prior_verified: bool,
    pub setting: String,
    pub expires_at: u64,
    #[serde(default)]
    pub manual_recovery: Option<String>,
}

/// What a lease request asks for.
pub struct LeaseRequest<'a> {
    pub permission: &'a str,
    pub setting: &'a str,
    pub origin: Option<&'a str>,
    pub duration: Duration,
}

/// Every lease this engine holds, and where they are kept across restarts.
pub struct Leases {
    active: Mutex<Vec<Lease>>,
    /// One lock per browser, origin and permission, held from reading the prior setting
    /// to recording the lease (and while restoring it): two leases on the same setting
    /// never take each other's value for the prior one.
    setting_locks: Mutex<HashMap<SettingKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Ids of the leases an earlier run left, until a browser connects to restore them.
    leftovers: Mutex<Vec<String>>,
    state_file: Option<PathBuf>,
    min_seconds: u64,
    browsers: Weak<Browsers>,
}

/// A browser's client id, an origin and a permission name.
type SettingKey = (String, String, String);

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl Leases {
    /// `browsers` is where expired leases are restored (whichever browser is connected
    /// then). Leases a previous run left on record are read now.
    pub fn new(browsers: &Arc<Browsers>) -> Arc<Leases> {
        let config = browsers.config();
        let left = load(config.state_file.as_deref());
        Arc::new(Leases {
            leftovers: Mutex::new(left.iter().map(|l| l.id.clone()).collect()),
            active: Mutex::new(left),
            setting_locks: Mutex::default(),
            state_file: config.state_file.clone(),
            min_seconds: config.min_lease_seconds.min(LEASE_RANGE.0),
            browsers: Arc::downgrade(browsers),
        })
    }

    /// Sets a permission for an origin (the page's, unless given) as a lease. The page is
    /// only read (its URL, the prior state) and released before the browser is changed.
    pub async fn set(self: &Arc<Self>, page: Page, request: LeaseRequest<'_>) -> Result<Lease> {
        let permission = Permission::parse(request.permission)?;
        let max = LEASE_RANGE.1;
        if !(self.min_seconds..=max).contains(&request.duration.as_secs()) {
            return Err(EngineError::invalid(
                Input::Duration,
                format!("must be from {} to {max} seconds", LEASE_RANGE.0),
            ));
        }
        let setting = cdp_setting(request.setting)?;
        let (url, _) = page.current_url().await?;
        let page_origin = crate::urls::web_origin(&url);
        let origin = match request.origin {
            Some(given) => crate::urls::origin_named(given).ok_or_else(|| {
                EngineError::invalid(
                    Input::Origin,
                    format!("'{given}' is not an http(s) origin like https://example.com"),
                )
            })?,
            None => page_origin.clone().ok_or_else(|| {
                EngineError::invalid(
                    Input::Origin,
                    format!("the tab's URL {url} has no http(s) origin; name the origin"),
                )
            })?,
        };
        // The prior setting is read in tabwire's own world of a page of that origin, where
        // the page cannot answer for navigator.permissions.
        let prior_from_page = if page_origin.as_deref() == Some(origin.as_str()) {
            page.run(
                &page.top(),
                "permission_state",
                json!({ "name": permission.name() }),
                Deadline::after(HOUSEKEEPING),
            )
            .await
            .ok()
            .and_then(|r| r["state"].as_str().map(str::to_owned))
        } else {
            None
        };
        let browser = page.browser.clone();
        let context = page.tab.context.clone().filter(|_| !browser.is_linked());
        drop(page);
        let _setting = self
            .lock_setting(&browser.client_id, &origin, permission.name())
            .await;
        // A second lease on the same setting keeps the first one's prior.
        let existing = self
            .active
            .lock()
            .iter()
            .find(|l| {
                l.client_id == browser.client_id
                    && l.context == context
                    && l.origin == origin
                    && l.permission == permission.name()
            })
            .cloned();
        let prior = match current_setting(&browser, permission, &origin).await {
            Some(read) => Some(read),
            None => prior_from_page,
        };
        apply(&browser, context.as_deref(), permission, setting, &origin).await?;
        let lease = Lease {
            id: existing
                .as_ref()
                .map(|l| l.id.clone())
                .unwrap_or_else(|| crate::ids::unique("lease")),
            client_id: browser.client_id.clone(),
            context,
            origin,
            permission: permission.name().to_owned(),
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
            expires_at: now() + request.duration.as_secs(),
            manual_recovery: None,
        };
        {
            let mut active = self.active.lock();
            active.retain(|l| l.id != lease.id);
            active.push(lease.clone());
        }
        self.save().await;
        self.expire_later(lease.id.clone(), request.duration);
        Ok(lease)
    }

    /// The lock of one setting (see `setting_locks`).
    async fn lock_setting(
        &self,
        client_id: &str,
        origin: &str,
        permission: &str,
    ) -> tokio::sync::OwnedMutexGuard<()> {
        let key = (
            client_id.to_owned(),
            origin.to_owned(),
            permission.to_owned(),
        );
        let setting = self.setting_locks.lock().entry(key).or_default().clone();
        setting.lock_owned().await
    }

    /// At expiry, the lease is restored in the browser it was set in, if that browser is
    /// connected; else it stays on record and is restored when that browser connects.
    fn expire_later(self: &Arc<Self>, id: String, after: Duration) {
        let leases = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let Some(leases) = leases.upgrade() else {
                return;
            };
            let Some(browsers) = leases.browsers.upgrade() else {
                return;
            };
            let Some(client) = leases
                .active
                .lock()
                .iter()
                .find(|l| l.id == id)
                .map(|l| l.client_id.clone())
            else {
                return;
            };
            match browsers
                .connected_now()
                .into_iter()
                .find(|b| b.client_id == client)
            {
                Some(browser) => {
                    let _ = leases
                        .restore(&browser, |l| l.id == id && l.expires_at <= now())
                        .await;
                }
                None => leases.leftovers.lock().push(id),
            }
        });
    }

    /// Restores the leases matching an origin and a permission (all when both are None).
    pub async fn reset(
        &self,
        browser: &Browser,
        origin: Option<&str>,
        permission: Option<&str>,
    ) -> Result<Reset> {
        let permission = permission.map(Permission::parse).transpose()?;
        let origin = origin.map(|o| o.trim_end_matches('/').to_owned());
        self.restore(browser, |l| {
            origin.as_deref().is_none_or(|o| l.origin == o)
                && permission.is_none_or(|p| l.permission == p.name())
        })
        .await
    }

    /// Restores, on a browser that has just connected, the leases an earlier run left on
    /// record: their timers died with the process that set them.
    pub async fn restore_leftovers(&self, browser: &Browser) {
        // This browser's leftovers (a lease from before the client id was kept is taken
        // by whichever browser connects first, as it was before).
        let mine: Vec<String> = {
            let active = self.active.lock();
            let mut leftovers = self.leftovers.lock();
            let (mine, others): (Vec<String>, Vec<String>) = leftovers.drain(..).partition(|id| {
                active.iter().any(|l| {
                    &l.id == id && (l.client_id.is_empty() || l.client_id == browser.client_id)
                })
            });
            *leftovers = others;
            mine
        };
        if mine.is_empty() {
            return;
        }
        let _ = self
            .restore(browser, |l| {
                mine.contains(&l.id) && l.manual_recovery.is_none()
            })
            .await;
    }

    /// Restores the leases `matching` selects; those that cannot be restored stay on
    /// record as manual_recovery.
    async fn restore(&self, browser: &Browser, matching: impl Fn(&Lease) -> bool) -> Result<Reset> {
        let of_this_browser =
            |l: &Lease| l.client_id.is_empty() || l.client_id == browser.client_id;
        let selected: Vec<Lease> = self
            .active
            .lock()
            .iter()
            .filter(|l| of_this_browser(l) && matching(l))
            .cloned()
            .collect();
        let remaining = || {
            self.active
                .lock()
                .iter()
                .filter(|l| of_this_browser(l))
                .count()
        };
        if selected.is_empty() {
            return Ok(Reset {
                remaining: remaining(),
                ..Reset::default()
            });
        }
        let mut restored = Vec::new();
        let mut manual = Vec::new();
        for lease in selected {
            let _setting = self
                .lock_setting(&browser.client_id, &lease.origin, &lease.permission)
                .await;
            // As it is now that the setting is ours: renewed meanwhile (no longer
            // expired), or already restored, it is left alone.
            let Some(lease) = self
                .active
                .lock()
                .iter()
                .find(|l| l.id == lease.id && matching(l))
                .cloned()
            else {
                continue;
            };
            let applied = match Permission::parse(&lease.permission) {
                Ok(permission) => {
                    apply(
                        browser,
                        lease.context.as_deref(),
                        permission,
                        &lease.prior,
                        &lease.origin,
                    )
                    .await
                }
                Err(error) => Err(error),
            };
            match applied {
                // A context's settings went with it (its session ended): nothing to put
                // back.
                Err(EngineError::Cdp(cdp::CdpError::Protocol { .. }))
                    if lease.context.is_some() =>
                {
                    self.active.lock().retain(|l| l.id != lease.id);
                }
                Ok(()) => {
                    self.active.lock().retain(|l| l.id != lease.id);
                    restored.push(Restored {
                        origin: lease.origin,
                        permission: lease.permission,
                        restored_to: lease.prior,
                        prior_verified: lease.prior_verified,
                    });
                }
                Err(error) => {
                    let guidance = format!(
                        "restore {} for {} to '{}' by hand in the browser's site settings: {error}",
                        lease.permission, lease.origin, lease.prior
                    );
                    for l in self.active.lock().iter_mut().filter(|l| l.id == lease.id) {
                        l.manual_recovery = Some(guidance.clone());
                    }
                    manual.push(ManualRecovery {
                        id: lease.id,
                        origin: lease.origin,
                        permission: lease.permission,
                        prior: lease.prior,
                        guidance,
                    });
                }
            }
        }
        self.save().await;
        Ok(Reset {
            restored,
            manual_recovery: manual,
            remaining: remaining(),
        })
    }

    async fn save(&self) {
        let Some(path) = self.state_file.clone() else {
            return;
        };
        let leases = self.active.lock().clone();
        let bytes = serde_json::to_vec_pretty(&leases).unwrap_or_default();
        let saved =
            tokio::task::spawn_blocking(move || files::write_file_blocking(&path, &bytes)).await;
        match saved {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "cannot save permission leases"),
            Err(error) => tracing::warn!(%error, "cannot save permission leases"),
        }
    }
}

/// The leases a previous run left on record.
fn load(state_file: Option<&std::path::Path>) -> Vec<Lease> {
    let Some(path) = state_file else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    serde_json::from_str::<Vec<Lease>>(&text).unwrap_or_else(|error| {
        tracing::warn!(%error, path = %path.display(), "unreadable lease file ignored");
        Vec::new()
    })
}

/// Sets a permission: through CDP on a browser we launched or attached to, through
/// chrome.contentSettings on a linked one (its debugger cannot reach Browser.*).
async fn apply(
    browser: &Browser,
    context: Option<&str>,
    permission: Permission,
    setting: &str,
    origin: &str,
) -> Result<()> {
    if browser.is_linked() {
        let setting = match setting {
            "granted" => "allow",
            "denied" => "block",
            _ => "ask",
        };
        let args = json!({ "type": permission.content_type(), "pattern": format!("{origin}/*"), "setting": setting });
        browser.extension_call("contentSettings.set", args).await?;
        return Ok(());
    }
    let mut params = json!({ "permission": { "name": permission.name() }, "setting": setting, "origin": origin });
    if let Some(context) = context {
        params["browserContextId"] = json!(context);
    }
    browser
        .connection()
        .call(None, "Browser.setPermission", params, HOUSEKEEPING)
        .await?;
    Ok(())
}

/// The setting an origin has now, where the browser can say (the extension link).
async fn current_setting(
    browser: &Browser,
    permission: Permission,
    origin: &str,
) -> Option<String> {
    if !browser.is_linked() {
        return None;
    }
    let args = json!({ "type": permission.content_type(), "url": format!("{origin}/") });
    let reply = browser
        .extension_call("contentSettings.get", args)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn permissions_are_named_as_cdp_and_the_permissions_api_name_them() {
        assert_eq!(Permission::parse("camera").unwrap().name(), "camera");
        assert_eq!(Permission::parse("videoCapture").unwrap().name(), "camera");
        assert_eq!(Permission::parse("location").unwrap().name(), "geolocation");
        assert_eq!(
            Permission::parse("clipboard").unwrap_err().code(),
            ErrorCode::Unsupported
        );
        assert_eq!(
            Permission::parse("usb").unwrap_err().input(),
            Some(Input::Permission)
        );
    }
}
