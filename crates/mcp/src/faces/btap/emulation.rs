//! tabwire's own `emulate`: Chrome DevTools MCP's parameters and their text forms, in
//! BrowserTap's envelope. Each call states the whole emulation: a setting left out or
//! empty is cleared.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use engine::{ColorScheme, DeviceViewport, Emulation, Geolocation, NETWORK_PRESETS, NetworkPreset};

use super::args::named;
use crate::face::{Call, Reply, ToolError};
use crate::params::TabRef;
use crate::tool_params;

tool_params! {
    pub struct Emulate {
        viewport: String = Str, default(""), "<width>x<height>x<devicePixelRatio>[,mobile][,touch][,landscape], e.g. 390x844x3,mobile,touch";
        userAgent: String = Str, default(""), "the user agent pages see";
        networkConditions: String = Choice(NETWORK_PRESETS), default("No emulation"), "throttle the network";
        cpuThrottlingRate: f64 = Num { min: 1.0, max: 20.0 }, default(1.0), "CPU slowdown factor (1: none)";
        geolocation: String = Str, default(""), "<latitude>,<longitude>, e.g. 48.8584,2.2945";
        colorScheme: String = Choice(&["auto", "dark", "light"]), default("auto"), "prefers-color-scheme";
        extraHttpHeaders: Option<Value> = Object, nullable, "headers added to every request, {name: value}";
        session_id: Option<TabRef> = TabHandle, nullable, "";
    }
}

pub async fn emulate(call: Call, p: Emulate) -> Result<Reply, ToolError> {
    let given = |text: &str| Some(text.trim().to_owned()).filter(|t| !t.is_empty());
    let wanted = Emulation {
        viewport: given(&p.viewport)
            .map(|v| DeviceViewport::parse(&v))
            .transpose()?,
        user_agent: given(&p.userAgent),
        network: NetworkPreset::parse(&p.networkConditions)?,
        cpu_throttling_rate: Some(p.cpuThrottlingRate).filter(|rate| *rate > 1.0),
        geolocation: given(&p.geolocation)
            .map(|g| Geolocation::parse(&g))
            .transpose()?,
        color_scheme: ColorScheme::parse(&p.colorScheme)?,
        extra_http_headers: headers(p.extraHttpHeaders.as_ref())?,
    };
    let tab = call
        .session
        .emulate(
            named(&p.session_id, &None).as_deref(),
            &wanted,
            call.deadline,
        )
        .await?;
    let lean = describe(&wanted);
    let data = json!({ "status": "ok", "emulation": wanted, "summary": lean });
    Ok(Reply::data(data).on(tab).lean(lean))
}

/// `{name: value}`, every value a string; an empty object is no headers.
fn headers(given: Option<&Value>) -> Result<Option<BTreeMap<String, String>>, ToolError> {
    let Some(Value::Object(map)) = given else {
        return Ok(None);
    };
    let mut headers = BTreeMap::new();
    for (name, value) in map {
        let Some(value) = value.as_str() else {
            return Err(ToolError::param(
                "extraHttpHeaders",
                format!("the value of '{name}' is not a string"),
            ));
        };
        headers.insert(name.clone(), value.to_owned());
    }
    Ok(Some(headers).filter(|h| !h.is_empty()))
}

/// The emulation in a line: what a page in the tab now sees.
pub fn describe(emulation: &Emulation) -> String {
    let mut parts = Vec::new();
    if let Some(v) = &emulation.viewport {
        let mut text = format!("viewport {}x{}x{}", v.width, v.height, v.device_pixel_ratio);
        for (on, flag) in [
            (v.mobile, "mobile"),
            (v.touch, "touch"),
            (v.landscape, "landscape"),
        ] {
            if on {
                text.push(',');
                text.push_str(flag);
            }
        }
        parts.push(text);
    }
    if let Some(agent) = &emulation.user_agent {
        parts.push(format!("user agent \"{agent}\""));
    }
    if let Some(network) = emulation.network {
        parts.push(format!(
            "network {}",
            json!(network).as_str().unwrap_or_default()
        ));
    }
    if let Some(rate) = emulation.cpu_throttling_rate {
        parts.push(format!("CPU {rate}x slower"));
    }
    if let Some(place) = emulation.geolocation {
        parts.push(format!(
            "geolocation {},{}",
            place.latitude, place.longitude
        ));
    }
    if let Some(scheme) = emulation.color_scheme {
        parts.push(format!("{} colour scheme", scheme.name()));
    }
    if let Some(headers) = &emulation.extra_http_headers {
        let names: Vec<&str> = headers.keys().map(String::as_str).collect();
        parts.push(format!("extra headers {}", names.join(", ")));
    }
    if parts.is_empty() {
        "no emulation".to_owned()
    } else {
        format!("emulating {}", parts.join("; "))
    }
}
