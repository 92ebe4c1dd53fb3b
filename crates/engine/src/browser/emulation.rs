//! What a tab is set to emulate: its viewport and device, user agent, network
//! conditions, CPU speed, geolocation, colour scheme and extra request headers. The
//! settings are tab state (the session that set them clears them when it ends); applying
//! them is a page operation (`page::emulation`).
//!
//! The text forms are Chrome DevTools MCP's, so an agent written against it works
//! unchanged: a viewport is `<width>x<height>x<dpr>[,mobile][,touch][,landscape]`, a
//! network preset is one of DevTools' names, a geolocation `<lat>,<lon>`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{EngineError, Input, Result};

/// Every override a tab can have. A request is the whole state wanted: a setting it
/// leaves out is cleared, so what an agent asked for last is exactly what is on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Emulation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewport: Option<DeviceViewport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkPreset>,
    /// How many times slower the CPU runs (1: not throttled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_throttling_rate: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<Geolocation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_http_headers: Option<BTreeMap<String, String>>,
}

impl Emulation {
    /// Nothing is overridden.
    pub fn is_empty(&self) -> bool {
        *self == Emulation::default()
    }
}

/// A device's screen as a page sees it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DeviceViewport {
    pub width: u32,
    pub height: u32,
    pub device_pixel_ratio: f64,
    pub mobile: bool,
    pub touch: bool,
    pub landscape: bool,
}

impl DeviceViewport {
    /// `<width>x<height>x<dpr>[,mobile][,touch][,landscape]` (the ratio may be left out:
    /// `390x844,mobile` is a ratio of 1).
    pub fn parse(text: &str) -> Result<DeviceViewport> {
        let bad = |why: &str| {
            EngineError::invalid(
                Input::Viewport,
                format!(
                    "'{text}' {why}; write <width>x<height>x<devicePixelRatio>[,mobile][,touch][,landscape], e.g. 390x844x3,mobile,touch"
                ),
            )
        };
        let mut parts = text.split(',').map(str::trim);
        let size = parts.next().unwrap_or_default();
        let numbers: Vec<&str> = size.split(['x', 'X']).map(str::trim).collect();
        let (width, height, ratio) = match numbers.as_slice() {
            [w, h] => (*w, *h, "1"),
            [w, h, r] => (*w, *h, *r),
            _ => return Err(bad("is not a size")),
        };
        let dimension = |n: &str| n.parse::<u32>().ok().filter(|n| (1..=10_000).contains(n));
        let (Some(width), Some(height)) = (dimension(width), dimension(height)) else {
            return Err(bad("needs a width and a height from 1 to 10000"));
        };
        let Some(device_pixel_ratio) = ratio
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && (0.1..=10.0).contains(r))
        else {
            return Err(bad("needs a device pixel ratio from 0.1 to 10"));
        };
        let mut viewport = DeviceViewport {
            width,
            height,
            device_pixel_ratio,
            mobile: false,
            touch: false,
            landscape: false,
        };
        for flag in parts {
            match flag.to_ascii_lowercase().as_str() {
                "mobile" => viewport.mobile = true,
                "touch" => viewport.touch = true,
                "landscape" => viewport.landscape = true,
                "" => {}
                other => {
                    return Err(bad(&format!(
                        "has '{other}', not mobile, touch or landscape"
                    )));
                }
            }
        }
        Ok(viewport)
    }
}

/// DevTools' network presets (the figures are theirs, as Puppeteer publishes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NetworkPreset {
    Offline,
    #[serde(rename = "Slow 3G")]
    Slow3g,
    #[serde(rename = "Fast 3G")]
    Fast3g,
    #[serde(rename = "Slow 4G")]
    Slow4g,
    #[serde(rename = "Fast 4G")]
    Fast4g,
}

/// The network presets' names, as an agent gives them; `No emulation` clears.
pub const NETWORK_PRESETS: &[&str] = &[
    "No emulation",
    "Offline",
    "Slow 3G",
    "Fast 3G",
    "Slow 4G",
    "Fast 4G",
];

impl NetworkPreset {
    /// A preset by its DevTools name (any case); `No emulation` or nothing is None.
    pub fn parse(name: &str) -> Result<Option<NetworkPreset>> {
        Ok(Some(match name.trim().to_ascii_lowercase().as_str() {
            "" | "no emulation" | "none" => return Ok(None),
            "offline" => NetworkPreset::Offline,
            "slow 3g" => NetworkPreset::Slow3g,
            "fast 3g" => NetworkPreset::Fast3g,
            "slow 4g" => NetworkPreset::Slow4g,
            "fast 4g" => NetworkPreset::Fast4g,
            _ => {
                return Err(EngineError::invalid(
                    Input::Network,
                    format!("'{name}' is not one of {}", NETWORK_PRESETS.join(", ")),
                ));
            }
        }))
    }

    /// `Network.emulateNetworkConditions`' parameters: latency in ms, throughput in
    /// bytes a second.
    pub(crate) fn conditions(self) -> Value {
        let (offline, latency, down, up) = match self {
            NetworkPreset::Offline => (true, 0.0, -1.0, -1.0),
            NetworkPreset::Slow3g => (false, 2000.0, 50_000.0, 50_000.0),
            NetworkPreset::Fast3g | NetworkPreset::Slow4g => (false, 562.5, 180_000.0, 84_375.0),
            NetworkPreset::Fast4g => (false, 165.0, 1_012_500.0, 168_750.0),
        };
        json!({
            "offline": offline, "latency": latency,
            "downloadThroughput": down, "uploadThroughput": up,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Geolocation {
    pub latitude: f64,
    pub longitude: f64,
}

impl Geolocation {
    /// `<latitude>,<longitude>` (or `<latitude>x<longitude>`, as some versions of Chrome
    /// DevTools MCP write it).
    pub fn parse(text: &str) -> Result<Geolocation> {
        let bad = || {
            EngineError::invalid(
                Input::Geolocation,
                format!(
                    "'{text}' is not <latitude>,<longitude> with latitude -90..90 and longitude -180..180, e.g. 48.8584,2.2945"
                ),
            )
        };
        let (lat, lon) = text
            .split_once(',')
            .or_else(|| text.split_once(['x', 'X']))
            .ok_or_else(bad)?;
        let number = |n: &str| n.trim().parse::<f64>().ok().filter(|n| n.is_finite());
        let (Some(latitude), Some(longitude)) = (number(lat), number(lon)) else {
            return Err(bad());
        };
        if !(-90.0..=90.0).contains(&latitude) || !(-180.0..=180.0).contains(&longitude) {
            return Err(bad());
        }
        Ok(Geolocation {
            latitude,
            longitude,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    Dark,
    Light,
}

impl ColorScheme {
    /// `dark`, `light`, or `auto` (None: the browser's own).
    pub fn parse(name: &str) -> Result<Option<ColorScheme>> {
        match name.trim().to_ascii_lowercase().as_str() {
            "dark" => Ok(Some(ColorScheme::Dark)),
            "light" => Ok(Some(ColorScheme::Light)),
            "" | "auto" => Ok(None),
            other => Err(EngineError::invalid(
                Input::ColorScheme,
                format!("'{other}' is not dark, light or auto"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ColorScheme::Dark => "dark",
            ColorScheme::Light => "light",
        }
    }
}

/// A tab's emulation and the agent session that set it (cleared when that one ends).
#[derive(Debug, Clone)]
pub struct Emulated {
    pub session: u64,
    pub settings: Emulation,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viewports_are_read_as_chrome_devtools_mcp_writes_them() {
        let phone = DeviceViewport::parse("390x844x3,mobile,touch").unwrap();
        assert_eq!((phone.width, phone.height), (390, 844));
        assert_eq!(phone.device_pixel_ratio, 3.0);
        assert!(phone.mobile && phone.touch && !phone.landscape);
        let plain = DeviceViewport::parse("1280x720").unwrap();
        assert_eq!(plain.device_pixel_ratio, 1.0);
        assert!(!plain.mobile && !plain.touch);
        assert!(
            DeviceViewport::parse("844x390x2.5, landscape")
                .unwrap()
                .landscape
        );
        for bad in [
            "",
            "wide",
            "0x100x1",
            "100x100x0",
            "100x100x1,tablet",
            "1x2x3x4",
        ] {
            let error = DeviceViewport::parse(bad).unwrap_err();
            assert_eq!(error.input(), Some(Input::Viewport), "{bad}");
        }
    }

    #[test]
    fn presets_geolocations_and_schemes_parse_or_are_named_wrong() {
        assert_eq!(
            NetworkPreset::parse("Slow 3G").unwrap(),
            Some(NetworkPreset::Slow3g)
        );
        assert_eq!(
            NetworkPreset::parse("fast 4g").unwrap(),
            Some(NetworkPreset::Fast4g)
        );
        assert_eq!(NetworkPreset::parse("No emulation").unwrap(), None);
        assert!(NetworkPreset::parse("5G").is_err());
        assert_eq!(NetworkPreset::Offline.conditions()["offline"], true);
        let paris = Geolocation::parse("48.8584, 2.2945").unwrap();
        assert_eq!((paris.latitude, paris.longitude), (48.8584, 2.2945));
        assert_eq!(Geolocation::parse("-33.9x151.2").unwrap().longitude, 151.2);
        for bad in ["", "91,0", "0,181", "north", "1,2,3"] {
            assert_eq!(
                Geolocation::parse(bad).unwrap_err().input(),
                Some(Input::Geolocation),
                "{bad}"
            );
        }
        assert_eq!(ColorScheme::parse("DARK").unwrap(), Some(ColorScheme::Dark));
        assert_eq!(ColorScheme::parse("auto").unwrap(), None);
        assert!(ColorScheme::parse("sepia").is_err());
    }
}
