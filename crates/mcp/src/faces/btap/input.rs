//! Input: clicks, typing, keys, drags and file inputs.

use serde_json::{Value, json};

use engine::{ClickTarget, Clicked, Typed};

use super::args::named;
use super::args::{LOCATOR_DOC, split_locator};
use crate::face::{Call, Reply, ToolError};
use crate::params::{self, TabRef};
use crate::tool_params;

const COORDINATE: params::Kind = params::Kind::Num {
    min: -1e7,
    max: 1e7,
};

tool_params! {
    pub struct PageClick {
        selector: Value = Locator, default(""), LOCATOR_DOC;
        x: Option<f64> = COORDINATE, nullable, "viewport CSS px (with y, instead of selector)";
        y: Option<f64> = COORDINATE, nullable, "";
        offset_x: Option<f64> = COORDINATE, nullable, "from the element's left edge";
        offset_y: Option<f64> = COORDINATE, nullable, "from the element's top edge";
        button: String = Choice(&["left", "right", "middle"]), default("left"), "";
        clicks: i64 = Int { min: 1, max: 100 }, default(1), "";
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct PageType {
        text: String = Str, required, "";
        selector: Value = Locator, default(""), "the field; default: the focused element";
        clear: bool = Bool, default(false), "replace the current value";
        submit_key: String = Str, default(""), "key pressed afterwards, e.g. enter";
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct PagePress {
        keys_csv: String = Str, required, "key or chord, e.g. enter or ctrl,shift,k";
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct PageDrag {
        x1: f64 = COORDINATE, required, "";
        y1: f64 = COORDINATE, required, "";
        x2: f64 = COORDINATE, required, "";
        y2: f64 = COORDINATE, required, "";
        duration: f64 = Num { min: 0.0, max: 10.0 }, default(0.3), "seconds";
        button: String = Choice(&["left", "right", "middle"]), default("left"), "";
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct UploadFiles {
        selector: String = Str, required, "CSS selector of the <input type=file>";
        paths: Vec<String> = Strs, required, "absolute paths under an allowed upload root";
        session_id: Option<TabRef> = Session, nullable, "";
        timeout: f64 = Seconds { max: 86_400.0 }, default(30.0), "seconds";
    }
}

/// An empty selector string is BrowserTap's "no selector".
fn given(selector: Value) -> Value {
    match selector {
        Value::String(s) if s.trim().is_empty() => Value::Null,
        other => other,
    }
}

/// What every input reply says of how the input was sent.
fn input_reply(mut data: Value, status: &str) -> Value {
    data["status"] = json!(status);
    data["input_mode"] = json!("cdp");
    data["foreground_changed"] = json!(false);
    data
}

/// A click's reply in BrowserTap's shape: where it landed goes in `target` (`x`, `y`,
/// `hit_verified`, `scrolled_into_view`), kept out of the envelope's top level; the
/// clicked element is described without the selector tabwire made for it; the button
/// and count the caller chose are not echoed.
fn click_reply(clicked: Clicked) -> Value {
    let mut target =
        json!({ "x": clicked.x, "y": clicked.y, "hit_verified": clicked.hit_verified });
    if let Some(scrolled) = clicked.scrolled_into_view {
        target["scrolled_into_view"] = json!(scrolled);
    }
    let mut data = json!({ "target": target });
    if let Some(mut element) = clicked.element {
        if let Some(fields) = element.as_object_mut() {
            fields.remove("selector");
        }
        data["element"] = element;
    }
    if let Some(attempts) = clicked.attempts {
        data["attempts"] = json!(attempts);
    }
    if clicked.disabled {
        data["disabled"] = json!(true);
    }
    data
}

/// A typing reply without what only restates the request: `submitted` when no key was
/// pressed, tabwire's own `editable` and `selected_existing`.
fn type_reply(typed: Typed) -> Value {
    let mut data = json!({
        "focus_confirmed": typed.focus_confirmed,
        "active_element": typed.active_element,
        "typed_chars": typed.typed_chars,
    });
    if let Some(key) = typed.submitted {
        data["submitted"] = json!(key);
    }
    if let Some(value) = typed.value {
        data["value"] = value;
    }
    if typed.clamped {
        data["clamped"] = json!(true);
    }
    data
}

pub async fn page_click(call: Call, p: PageClick) -> Result<Reply, ToolError> {
    let (locator, frame) = split_locator(Some(&given(p.selector)))?;
    // A frame-relative point is {"frame": [...], "x": .., "y": ..} in the selector.
    let framed_point = locator
        .get("x")
        .and_then(Value::as_f64)
        .zip(locator.get("y").and_then(Value::as_f64));
    let target = match (locator.is_null(), (p.x, p.y), framed_point) {
        (_, _, Some((x, y))) => ClickTarget::Point { x, y, frame },
        (true, (Some(x), Some(y)), _) => ClickTarget::Point {
            x,
            y,
            frame: Vec::new(),
        },
        (false, (None, None), _) => ClickTarget::Element {
            locator,
            frame,
            offset: (p.offset_x, p.offset_y),
        },
        (true, (None, None), _) => {
            return Err(ToolError::param(
                "selector",
                "give a selector, or both x and y",
            ));
        }
        (true, _, _) => return Err(ToolError::param("y", "x and y must be given together")),
        (false, _, _) => {
            return Err(ToolError::param(
                "x",
                "give either a selector or x and y, not both",
            ));
        }
    };
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    // A ref from an outline names its frame too.
    let target = match target {
        ClickTarget::Element {
            locator,
            frame,
            offset,
        } => {
            let (locator, frame) = page.placed(locator, frame)?;
            ClickTarget::Element {
                locator,
                frame,
                offset,
            }
        }
        other => other,
    };
    let clicked = page
        .click(
            target,
            &p.button,
            p.clicks as u32,
            params::seconds(p.timeout),
        )
        .await?;
    let mut data = input_reply(click_reply(clicked), "clicked");
    let dialogs = page.take_answered_dialogs();
    if !dialogs.is_empty() {
        data["dialogs"] = json!(dialogs);
    }
    let hit = &data["target"];
    let point = hit["x"].as_f64().zip(hit["y"].as_f64());
    let lean = crate::lean::clicked(
        &data["element"],
        point,
        hit["hit_verified"] != false,
        &data["dialogs"],
    );
    let mut reply = Reply::action(data).on(page.info()).lean(lean);
    if let Some((x, y)) = point {
        reply = reply.at(x, y);
    }
    Ok(reply)
}

pub async fn page_type(call: Call, p: PageType) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let (locator, frame) = split_locator(Some(&given(p.selector)))?;
    let (locator, frame) = page.placed(locator, frame)?;
    let locator = (!locator.is_null()).then_some(locator);
    let submit = Some(p.submit_key).filter(|k| !k.trim().is_empty());
    let data = page
        .type_text(
            locator,
            &frame,
            &p.text,
            p.clear,
            submit.as_deref(),
            params::seconds(p.timeout),
        )
        .await?;
    let data = input_reply(type_reply(data), "typed");
    let mut lean = format!(
        "typed {} chars into {}",
        data["typed_chars"],
        crate::lean::element(&data["active_element"])
    );
    if data["submitted"].as_bool() == Some(true) || data["submitted"].is_string() {
        lean.push_str(", then submitted");
    }
    Ok(Reply::action(data).on(page.info()).lean(lean))
}

pub async fn page_press(call: Call, p: PagePress) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let pressed = page.press(&p.keys_csv, params::seconds(p.timeout)).await?;
    let lean = format!("pressed {}", pressed.keys);
    Ok(
        Reply::action(input_reply(json!({ "keys": pressed.keys }), "pressed"))
            .on(page.info())
            .lean(lean),
    )
}

pub async fn page_drag(call: Call, p: PageDrag) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let data = page
        .drag(
            (p.x1, p.y1),
            (p.x2, p.y2),
            params::seconds(p.duration),
            &p.button,
            params::seconds(p.timeout),
        )
        .await?;
    Ok(Reply::action(input_reply(data, "dragged"))
        .dragged((p.x1, p.y1), (p.x2, p.y2))
        .on(page.info()))
}

pub async fn upload_files(call: Call, p: UploadFiles) -> Result<Reply, ToolError> {
    if p.paths.is_empty() {
        return Err(ToolError::param("paths", "give at least one file path"));
    }
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let uploaded = page
        .upload(&json!(p.selector), &p.paths, params::seconds(p.timeout))
        .await?;
    Ok(Reply::data(json!({ "status": "set", "files": uploaded.files })).on(page.info()))
}
