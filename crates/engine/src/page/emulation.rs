//! Applying an emulation to a tab (`browser::emulation` holds the settings). Every
//! setting is sent, set or cleared, so the tab ends with exactly what was asked; the
//! overrides live in tabwire's session of the tab and survive its navigations.

use crate::ids::Deadline;

use serde_json::json;

use super::Page;
use crate::browser::emulation::{Emulated, Emulation};
use crate::error::Result;

/// Touch points a touch screen reports.
const TOUCH_POINTS: u32 = 5;
/// Metres; what a phone's fix typically claims.
const GEOLOCATION_ACCURACY: f64 = 100.0;

impl Page {
    /// Sets the tab's emulation to `wanted` (an empty one clears every override) and
    /// records it as set by agent session `session`.
    pub async fn emulate(
        &self,
        wanted: &Emulation,
        session: u64,
        deadline: Deadline,
    ) -> Result<()> {
        self.apply_emulation(wanted, deadline).await?;
        let emulated = (!wanted.is_empty()).then(|| Emulated {
            session,
            settings: wanted.clone(),
        });
        self.browser
            .update_tab(&self.tab.target_id, |tab| tab.emulation = emulated);
        Ok(())
    }

    async fn apply_emulation(&self, wanted: &Emulation, deadline: Deadline) -> Result<()> {
        match &wanted.viewport {
            Some(v) => {
                let orientation = if v.landscape {
                    json!({ "type": "landscapePrimary", "angle": 90 })
                } else {
                    json!({ "type": "portraitPrimary", "angle": 0 })
                };
                let metrics = json!({
                    "width": v.width, "height": v.height,
                    "deviceScaleFactor": v.device_pixel_ratio, "mobile": v.mobile,
                    "screenWidth": v.width, "screenHeight": v.height,
                    "screenOrientation": orientation,
                });
                self.cdp("Emulation.setDeviceMetricsOverride", metrics, deadline)
                    .await?;
            }
            None => {
                self.cdp("Emulation.clearDeviceMetricsOverride", json!({}), deadline)
                    .await?;
            }
        }
        let touch = wanted.viewport.is_some_and(|v| v.touch);
        let touch = if touch {
            json!({ "enabled": true, "maxTouchPoints": TOUCH_POINTS })
        } else {
            json!({ "enabled": false })
        };
        self.cdp("Emulation.setTouchEmulationEnabled", touch, deadline)
            .await?;
        // An empty user agent is no override: the browser's own is back.
        let user_agent = wanted.user_agent.clone().unwrap_or_default();
        self.cdp(
            "Emulation.setUserAgentOverride",
            json!({ "userAgent": user_agent }),
            deadline,
        )
        .await?;
        // Network conditions and extra headers apply to a session whose Network domain
        // is on; it stays on (a network capture may share it).
        if wanted.network.is_some() || wanted.extra_http_headers.is_some() {
            self.cdp("Network.enable", json!({}), deadline).await?;
        }
        let network = match wanted.network {
            Some(preset) => preset.conditions(),
            None => json!({
                "offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1,
            }),
        };
        self.cdp("Network.emulateNetworkConditions", network, deadline)
            .await?;
        let rate = wanted.cpu_throttling_rate.unwrap_or(1.0);
        self.cdp(
            "Emulation.setCPUThrottlingRate",
            json!({ "rate": rate }),
            deadline,
        )
        .await?;
        match wanted.geolocation {
            Some(place) => {
                let position = json!({
                    "latitude": place.latitude, "longitude": place.longitude,
                    "accuracy": GEOLOCATION_ACCURACY,
                });
                self.cdp("Emulation.setGeolocationOverride", position, deadline)
                    .await?;
            }
            None => {
                self.cdp("Emulation.clearGeolocationOverride", json!({}), deadline)
                    .await?;
            }
        }
        let scheme = wanted.color_scheme.map_or("", |s| s.name());
        let media = json!({ "features": [{ "name": "prefers-color-scheme", "value": scheme }] });
        self.cdp("Emulation.setEmulatedMedia", media, deadline)
            .await?;
        let headers = wanted.extra_http_headers.clone().unwrap_or_default();
        self.cdp(
            "Network.setExtraHTTPHeaders",
            json!({ "headers": headers }),
            deadline,
        )
        .await?;
        Ok(())
    }
}
