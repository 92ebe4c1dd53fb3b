//! Input: clicks, fills, keys, the all-in-one `chrome_computer`, and file uploads. Every
//! element is named by a ref from `chrome_read_page` (which acts on the very element the
//! read listed, frames included) or by a CSS selector or XPath; every input is trusted
//! CDP input, hit-tested where it aims at an element.

use std::time::Duration;

use serde_json::{Value, json};

use engine::{
    Acted, ClickTarget, Condition, ElementInfo, FilledKind, KeyStep, Locator, Page, SentStep,
};

use super::{element, tab_arg};
use crate::face::base64;
use crate::face::{Call, Reply, ToolError};
use crate::tool_params;

const COORDINATE: crate::params::Kind = crate::params::Kind::Point;

/// What a click that opened a dialog says.
const DIALOG_OPENED: &str =
    "The click opened a dialog, which is open now: answer it with chrome_handle_dialog";

tool_params! {
    /// `frameId` is the original's: refs reach into frames by themselves.
    #[allow(dead_code)]
    pub struct ClickElement {
        selector: Option<String> = Str, optional, "CSS or a ref (ref_12), or XPath with selectorType xpath";
        selectorType: String = Choice(&["css", "xpath"]), default("css"), "";
        r#ref: Option<String> = Str, optional, "ref from chrome_read_page";
        coordinates: Option<Value> = COORDINATE, optional, "viewport point {x, y} to click instead";
        double: bool = Bool, default(false), "";
        button: String = Choice(&["left", "right", "middle"]), default("left"), "";
        modifiers: Option<Value> = Object, optional, "{altKey, ctrlKey, metaKey, shiftKey}";
        waitForNavigation: bool = Bool, default(false), "wait for the navigation it starts";
        timeout: f64 = Millis { max: 600_000.0 }, default(5000.0), "ms for the element and any navigation";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        frameId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    /// `frameId` is the original's: refs reach into frames by themselves.
    #[allow(dead_code)]
    pub struct FillOrSelect {
        selector: Option<String> = Str, optional, "CSS or a ref (ref_12), or XPath with selectorType xpath";
        selectorType: String = Choice(&["css", "xpath"]), default("css"), "";
        r#ref: Option<String> = Str, optional, "ref from chrome_read_page";
        value: Value = Any, required, "text, an option's value or text, or true/false for a checkbox";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        frameId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    /// `frameId` is the original's: refs reach into frames by themselves.
    #[allow(dead_code)]
    pub struct Keyboard {
        keys: String = Str, required, "";
        selector: Option<String> = Str, optional, "focus this element first: CSS or a ref (ref_12)";
        selectorType: String = Choice(&["css", "xpath"]), default("css"), "";
        r#ref: Option<String> = Str, unlisted, "";
        delay: f64 = Num { min: 0.0, max: 10_000.0 }, default(0.0), "ms between key sequences";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        frameId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

tool_params! {
    /// `background` is the original's: tabwire's input never brings a window forward.
    #[allow(dead_code)]
    pub struct Computer {
        action: String = Choice(&["left_click", "right_click", "double_click", "triple_click", "left_click_drag",
            "scroll", "scroll_to", "type", "key", "fill", "fill_form", "hover", "wait", "resize_page", "zoom",
            "screenshot"]), required, "";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        background: bool = Bool, default(false), "";
        r#ref: Option<String> = Str, optional, "ref from chrome_read_page (target; drag end)";
        coordinates: Option<Value> = COORDINATE, optional, "viewport point {x, y}";
        startRef: Option<String> = Str, optional, "";
        startCoordinates: Option<Value> = COORDINATE, optional, "drag start point";
        scrollDirection: Option<String> = Choice(&["up", "down", "left", "right"]), optional, "";
        scrollAmount: i64 = Int { min: 1, max: 10 }, default(3), "scroll ticks";
        text: Option<String> = Str, optional, "text to type; keys for key (\"cmd+a Backspace\")";
        repeat: i64 = Int { min: 1, max: 100 }, default(1), "action key: times to repeat";
        modifiers: Option<Value> = Object, optional, "{altKey, ctrlKey, metaKey, shiftKey}";
        region: Option<Value> = Object, optional, "action zoom: {x0, y0, x1, y1} in viewport px";
        selector: Option<String> = Str, optional, "action fill: CSS selector (instead of ref)";
        value: Option<Value> = Any, optional, "action fill: the value";
        elements: Option<Value> = List, optional, "action fill_form: [{ref, value}]";
        width: Option<f64> = Num { min: 100.0, max: 10000.0 }, optional, "action resize_page";
        height: Option<f64> = Num { min: 100.0, max: 10000.0 }, optional, "action resize_page";
        appear: bool = Bool, default(true), "wait: for text to appear (false: to go)";
        timeout: f64 = Millis { max: 120_000.0 }, default(10_000.0), "ms for action wait with text";
        duration: Option<f64> = Num { min: 0.0, max: 30.0 }, optional, "seconds for action wait";
    }
}

tool_params! {
    pub struct UploadFile {
        selector: String = Str, required, "CSS selector or ref of the <input type=file>";
        filePath: Option<String> = Str, optional, "a file under an allowed upload root";
        fileUrl: Option<String> = Str, optional, "not taken: use filePath";
        base64Data: Option<String> = Str, optional, "not taken: use filePath";
        fileName: String = Str, default("uploaded-file"), "";
        multiple: bool = Bool, default(false), "";
        tabId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
        windowId: Option<i64> = Int { min: 0, max: i64::MAX }, optional, "";
    }
}

/// `{altKey, ctrlKey, metaKey, shiftKey}` → CDP's modifier bits.
fn modifier_bits(modifiers: &Option<Value>) -> u32 {
    let Some(m) = modifiers else { return 0 };
    [
        ("altKey", 1),
        ("ctrlKey", 2),
        ("metaKey", 4),
        ("shiftKey", 8),
    ]
    .iter()
    .filter(|(key, _)| m[*key] == true)
    .map(|(_, bit)| bit)
    .sum()
}

fn point(value: &Value, name: &str) -> Result<(f64, f64), ToolError> {
    match (value["x"].as_f64(), value["y"].as_f64()) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(ToolError::param(name, "needs numbers x and y")),
    }
}

/// What a call aims at: a ref or selector (hit-tested) or a point.
pub(super) fn aim(
    reference: Option<&str>,
    selector: Option<&str>,
    selector_type: &str,
    coordinates: &Option<Value>,
    coordinates_name: &str,
) -> Result<Option<ClickTarget>, ToolError> {
    if let Some(locator) = element(reference, selector, selector_type)? {
        return Ok(Some(ClickTarget::Element {
            locator,
            offset: (None, None),
        }));
    }
    match coordinates {
        Some(c) => {
            let (x, y) = point(c, coordinates_name)?;
            Ok(Some(ClickTarget::Point {
                x,
                y,
                frame: Vec::new(),
            }))
        }
        None => Ok(None),
    }
}

pub async fn click_element(call: Call, p: ClickElement) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    let method = if p.r#ref.is_some() {
        "ref"
    } else if p.selector.is_some() {
        "selector"
    } else {
        "coordinates"
    };
    let Some(target) = aim(
        p.r#ref.as_deref(),
        p.selector.as_deref(),
        &p.selectorType,
        &p.coordinates,
        "coordinates",
    )?
    else {
        return Err(ToolError::param(
            "selector",
            "give a ref, a selector or coordinates",
        ));
    };
    let deadline = call.deadline;
    let before = page.document_seq();
    let watch = page.watch_effects();
    let clicks = if p.double { 2 } else { 1 };
    let clicked = page
        .leaving_dialogs_open(page.click_with(
            target,
            &p.button,
            clicks,
            modifier_bits(&p.modifiers),
            deadline,
        ))
        .await?;
    let report = match clicked {
        Acted::Done(report) => report,
        Acted::DialogOpened(dialog) => {
            let lean = format!(
                "clicked; a dialog is open now: {} (answer it with chrome_handle_dialog)",
                crate::lean::encode(&json!(dialog), &super::FACE.quiet)
                    .trim()
                    .replace('\n', ", ")
            );
            return Ok(Reply::action(json!({
                "success": true, "message": DIALOG_OPENED, "dialog": dialog,
                "navigationOccurred": false, "clickMethod": method,
            }))
            .on(page.info())
            .lean(lean));
        }
    };
    // What the click set off, a navigation it started followed until it commits; the
    // original's waitForNavigation also waits for the new page to load.
    let effects = page.effects(watch, call.deadline).await;
    let navigated = effects.navigation.is_some()
        || page
            .navigation_since(before, p.waitForNavigation, deadline)
            .await;
    let mut info = report.element.as_ref().map_or(json!({}), |e| json!(e));
    let point = Some((report.x, report.y));
    let mut lean = crate::lean::clicked(report.element.as_ref(), point, report.hit_verified, &[]);
    if let Some(checked) = report.checked {
        lean.push_str(if checked {
            " (now checked)"
        } else {
            " (now unchecked)"
        });
        info["checked"] = json!(checked);
    }
    let landed = page.info();
    // Where it landed is the page's own word now (the tab's record is from before).
    if let Some(landing) = &effects.navigation {
        if landing.committed {
            lean.push_str(&format!(
                "; navigated to {} \"{}\"",
                landing.url, landing.title
            ));
        } else {
            lean.push_str(&format!("; navigating to {} (not loaded yet)", landing.url));
        }
    } else if navigated && let Ok((url, title)) = page.url_and_title().await {
        lean.push_str(&format!("; navigated to {url} \"{title}\""));
    }
    for tab in &effects.new_tabs {
        lean.push_str(&format!("; opened a new tab: {}", tab.url));
    }
    for error in &report.page_errors {
        lean.push_str(&format!("; the page threw: {error}"));
    }
    if report.requests_pending > 0 {
        lean.push_str(&format!(
            "; {} request(s) it sent still unanswered when the call's time ran out",
            report.requests_pending
        ));
    }
    info["clickMethod"] = json!(method);
    info["clickPosition"] = json!({ "x": report.x, "y": report.y });
    let mut data = json!({
        "success": true, "message": "Element clicked successfully", "elementInfo": info,
        "navigationOccurred": navigated, "clickMethod": method,
    });
    // tabwire's own: where the click landed, and the tabs it opened.
    if let Some(landing) = &effects.navigation {
        data["navigation"] = json!(landing);
    }
    if !effects.new_tabs.is_empty() {
        data["newTabs"] = json!(effects.new_tabs);
    }
    if !report.page_errors.is_empty() {
        data["pageErrors"] = json!(report.page_errors);
    }
    if report.requests_pending > 0 {
        data["requestsPending"] = json!(report.requests_pending);
    }
    Ok(Reply::action(data)
        .on(landed)
        .at(report.x, report.y)
        .lean(lean))
}

pub async fn fill_or_select(call: Call, p: FillOrSelect) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    let Some(locator) = element(p.r#ref.as_deref(), p.selector.as_deref(), &p.selectorType)? else {
        return Err(ToolError::param("selector", "give a ref or a selector"));
    };
    let filled = page.fill(&locator, &p.value, call.deadline).await?;
    let verb = if filled.kind == FilledKind::Select {
        "selected"
    } else {
        "filled"
    };
    // A select's choice as the agent named it: the option's label, not its value.
    let shown = if filled.element.is_password() {
        "•••"
    } else {
        filled.label.as_deref().unwrap_or(&filled.value)
    };
    let lean = format!(
        "{verb} {} = \"{shown}\"",
        crate::lean::element(&filled.element)
    );
    Ok(Reply::action(json!({
        "success": true,
        "message": if filled.kind == FilledKind::Select { "Option selected successfully" } else { "Element filled successfully" },
        "elementInfo": element_info(&filled.element, &filled.value, filled.label.as_deref()),
    }))
    .on(page.info())
    .lean(lean))
}

/// The filled element as the Chrome MCP Server describes it; a select's chosen option
/// by its label beside its value (`selectedOption`).
fn element_info(element: &ElementInfo, value: &str, option: Option<&str>) -> Value {
    let mut info = json!({
        "tagName": element.tag, "id": element.id, "type": element.input_type, "name": element.name,
        "label": element.label, "isVisible": true, "value": value,
    });
    if let Some(option) = option {
        info["selectedOption"] = json!(option);
    }
    info
}

pub async fn keyboard(call: Call, p: Keyboard) -> Result<Reply, ToolError> {
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    let deadline = call.deadline;
    let mut target = Value::Null;
    let named = element(p.r#ref.as_deref(), p.selector.as_deref(), &p.selectorType)?;
    if let Some(locator) = named {
        let focused = page
            .type_text(Some(&locator), "", false, None, deadline)
            .await?;
        target = focused.active_element.map_or(Value::Null, |e| json!(e));
    }
    let pause = Duration::from_secs_f64(p.delay.max(0.0) / 1000.0);
    let sent = send_keys(&page, p.keys.split(','), pause, deadline, "keys").await?;
    let results: Vec<Value> = sent
        .iter()
        .map(|step| {
            let mut result = json!({ "keyCombination": step.step, "success": true });
            if step.typed {
                result["typed"] = json!(true);
            }
            result
        })
        .collect();
    let lean = format!("pressed {}", p.keys);
    Ok(Reply::action(json!({
        "success": true, "message": format!("Keyboard events simulated successfully: {}", p.keys),
        "targetElement": target, "results": results,
    }))
    .on(page.info())
    .lean(lean))
}

/// Sends key steps as the original writes them (`Enter`, `Ctrl+Shift+K`, `hello`): every
/// step checked before the first is sent, stopping at the first failure, which says what
/// was delivered. A step that names no key is typed as text (unless it is a chord).
async fn send_keys<'a>(
    page: &Page,
    sequences: impl Iterator<Item = &'a str>,
    pause: Duration,
    deadline: engine::Deadline,
    param: &str,
) -> Result<Vec<SentStep>, ToolError> {
    let steps: Vec<KeyStep> = sequences
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|sequence| KeyStep {
            chord: chord_of(sequence),
            text: sequence.to_owned(),
            may_type: !sequence.contains('+') || sequence.len() == 1,
        })
        .collect();
    page.press_sequence(&steps, pause, deadline)
        .await
        .map_err(|error| match error.input() {
            Some(engine::Input::Keys) => ToolError::param(param, error.bare_message()),
            _ => ToolError::from(error),
        })
}

/// `Ctrl+Shift+K` → the engine's `ctrl,shift,k`; `+` alone, or a final `+`, is the key.
fn chord_of(sequence: &str) -> String {
    if sequence == "+" {
        return "+".into();
    }
    let (body, plus) = match sequence.strip_suffix("++") {
        Some(body) => (body, true),
        None => (sequence, false),
    };
    let mut parts: Vec<String> = body.split('+').map(|p| p.trim().to_owned()).collect();
    if plus {
        parts.push("+".into());
    }
    // Ctrl+A is the a key with Control held (as a keyboard sends it), not a capital A.
    let shifted = parts[..parts.len() - 1]
        .iter()
        .any(|m| m.eq_ignore_ascii_case("shift"));
    if parts.len() > 1
        && !shifted
        && let Some(last) = parts.last_mut()
        && last.len() == 1
        && last.chars().all(|c| c.is_ascii_alphabetic())
    {
        *last = last.to_ascii_lowercase();
    }
    parts.join(",")
}

pub async fn computer(call: Call, p: Computer) -> Result<Reply, ToolError> {
    let page = call.session.page(tab_arg(&p.tabId).as_deref()).await?;
    let act = Act {
        page: &page,
        p: &p,
        deadline: call.deadline,
    };
    let data = match p.action.as_str() {
        "left_click" | "right_click" | "double_click" | "triple_click" => act.click().await,
        "left_click_drag" => act.drag().await,
        "scroll" => act.scroll().await,
        "scroll_to" => act.scroll_to().await,
        "hover" => act.hover().await,
        "type" => act.type_text().await,
        "key" => act.key().await,
        "fill" => act.fill().await,
        "fill_form" => act.fill_form().await,
        "wait" => act.wait().await,
        "resize_page" => act.resize_page().await,
        "zoom" | "screenshot" => return act.screenshot().await,
        other => Err(ToolError::param(
            "action",
            format!("'{other}' is not an action"),
        )),
    }?;
    let mut reply = Reply::action(data).on(page.info());
    // Where a click landed, or the path a drag took, for a recording to mark.
    let point = |key: &str| {
        reply.data[key]["x"]
            .as_f64()
            .zip(reply.data[key]["y"].as_f64())
    };
    match (point("startCoordinates"), point("coordinates")) {
        (Some(from), Some(to)) => reply = reply.dragged(from, to),
        (None, Some((x, y))) => reply = reply.at(x, y),
        _ => {}
    }
    Ok(reply)
}

/// One `chrome_computer` call: the page, its arguments and its time, for the action it
/// names (one method each).
struct Act<'a> {
    page: &'a Page,
    p: &'a Computer,
    deadline: engine::Deadline,
}

impl Act<'_> {
    /// What the action aims at: a ref, a selector or coordinates (None: none given).
    fn target(&self) -> Result<Option<ClickTarget>, ToolError> {
        aim(
            self.p.r#ref.as_deref(),
            self.p.selector.as_deref(),
            "css",
            &self.p.coordinates,
            "coordinates",
        )
    }

    fn resolved_by(&self) -> &'static str {
        if self.p.r#ref.is_some() {
            "ref"
        } else {
            "coordinates"
        }
    }

    /// The reply of a finished action: `success`, the action, and what it says of itself.
    fn done(&self, extra: Value) -> Value {
        let mut data = json!({ "success": true, "action": self.p.action });
        if let Value::Object(extra) = extra
            && let Some(object) = data.as_object_mut()
        {
            object.extend(extra);
        }
        data
    }

    async fn click(&self) -> Result<Value, ToolError> {
        let Some(target) = self.target()? else {
            return Err(ToolError::param(
                "coordinates",
                "give a ref or coordinates to click",
            ));
        };
        let (button, clicks) = match self.p.action.as_str() {
            "right_click" => ("right", 1),
            "double_click" => ("left", 2),
            "triple_click" => ("left", 3),
            _ => ("left", 1),
        };
        let page = self.page;
        let clicked = page
            .leaving_dialogs_open(page.click_with(
                target,
                button,
                clicks,
                modifier_bits(&self.p.modifiers),
                self.deadline,
            ))
            .await?;
        Ok(match clicked {
            Acted::Done(report) => self.done(
                json!({ "coordinates": { "x": report.x, "y": report.y }, "resolvedBy": self.resolved_by() }),
            ),
            Acted::DialogOpened(dialog) => {
                self.done(json!({ "message": DIALOG_OPENED, "dialog": dialog }))
            }
        })
    }

    async fn drag(&self) -> Result<Value, ToolError> {
        let start = aim(
            self.p.startRef.as_deref(),
            None,
            "css",
            &self.p.startCoordinates,
            "startCoordinates",
        )?
        .ok_or_else(|| ToolError::param("startCoordinates", "give startRef or startCoordinates"))?;
        let end = self.target()?.ok_or_else(|| {
            ToolError::param("coordinates", "give ref or coordinates for the drop")
        })?;
        let from = self.page.point_of(&start, self.deadline).await?;
        let to = self.page.point_of(&end, self.deadline).await?;
        self.page
            .drag(from, to, Duration::from_millis(300), "left", self.deadline)
            .await?;
        Ok(self.done(
            json!({ "startCoordinates": { "x": from.0, "y": from.1 }, "coordinates": { "x": to.0, "y": to.1 } }),
        ))
    }

    async fn scroll(&self) -> Result<Value, ToolError> {
        let at = match self.target()? {
            Some(target) => self.page.point_of(&target, self.deadline).await?,
            // No aim: the middle of the viewport.
            None => {
                let request = engine::TreeRequest {
                    interactive_only: true,
                    viewport_only: true,
                    ..Default::default()
                };
                let snapshot = self.page.read_tree(&request, self.deadline).await?;
                (
                    snapshot.viewport.width / 2.0,
                    snapshot.viewport.height / 2.0,
                )
            }
        };
        let ticks = self.p.scrollAmount as f64 * 100.0;
        let (dx, dy) = match self.p.scrollDirection.as_deref().unwrap_or("down") {
            "up" => (0.0, -ticks),
            "left" => (-ticks, 0.0),
            "right" => (ticks, 0.0),
            _ => (0.0, ticks),
        };
        self.page.wheel(at.0, at.1, dx, dy, self.deadline).await?;
        Ok(self.done(
            json!({ "coordinates": { "x": at.0, "y": at.1 }, "scrollDirection": self.p.scrollDirection, "scrollAmount": self.p.scrollAmount }),
        ))
    }

    async fn scroll_to(&self) -> Result<Value, ToolError> {
        let target = self
            .target()?
            .ok_or_else(|| ToolError::param("ref", "give the ref to scroll into view"))?;
        let at = self.page.point_of(&target, self.deadline).await?;
        Ok(self.done(json!({ "coordinates": { "x": at.0, "y": at.1 } })))
    }

    async fn hover(&self) -> Result<Value, ToolError> {
        let target = self
            .target()?
            .ok_or_else(|| ToolError::param("ref", "give a ref or coordinates to hover"))?;
        let at = self.page.hover(&target, self.deadline).await?;
        Ok(self.done(
            json!({ "coordinates": { "x": at.0, "y": at.1 }, "resolvedBy": self.resolved_by(), "transport": "cdp" }),
        ))
    }

    async fn type_text(&self) -> Result<Value, ToolError> {
        let text = self
            .p
            .text
            .clone()
            .ok_or_else(|| ToolError::param("text", "is required for action type"))?;
        let field = element(self.p.r#ref.as_deref(), self.p.selector.as_deref(), "css")?;
        self.page
            .type_text(field.as_ref(), &text, false, None, self.deadline)
            .await?;
        Ok(self.done(json!({ "text": text })))
    }

    async fn key(&self) -> Result<Value, ToolError> {
        let keys = self.p.text.clone().ok_or_else(|| {
            ToolError::param(
                "text",
                "is required for action key: keys like \"Enter\" or \"cmd+a\"",
            )
        })?;
        // Keys sent "to" an element go to it: it gets focus first.
        let aimed = element(self.p.r#ref.as_deref(), self.p.selector.as_deref(), "css")?;
        let mut focused = None;
        if let Some(locator) = aimed {
            focused = Some(self.page.focus(&locator, self.deadline).await?);
        }
        let repeated = (0..self.p.repeat).flat_map(|_| keys.split_whitespace());
        send_keys(self.page, repeated, Duration::ZERO, self.deadline, "text").await?;
        let mut done = json!({ "text": keys, "repeat": self.p.repeat });
        if let Some(focused) = focused {
            done["focused"] = json!(focused);
        }
        Ok(self.done(done))
    }

    async fn fill(&self) -> Result<Value, ToolError> {
        let locator = element(self.p.r#ref.as_deref(), self.p.selector.as_deref(), "css")?
            .ok_or_else(|| {
                ToolError::param("ref", "give the ref (or selector) of the field to fill")
            })?;
        let value = self
            .p
            .value
            .clone()
            .ok_or_else(|| ToolError::param("value", "is required for action fill"))?;
        let filled = self.page.fill(&locator, &value, self.deadline).await?;
        let info = element_info(&filled.element, &filled.value, filled.label.as_deref());
        let mut done = json!({ "value": filled.value, "elementInfo": info });
        if let Some(option) = filled.label {
            done["option"] = json!(option);
        }
        Ok(self.done(done))
    }

    async fn fill_form(&self) -> Result<Value, ToolError> {
        let items = self
            .p
            .elements
            .clone()
            .and_then(|e| e.as_array().cloned())
            .ok_or_else(|| {
                ToolError::param(
                    "elements",
                    "is required for action fill_form: [{ref, value}]",
                )
            })?;
        let mut form = Vec::with_capacity(items.len());
        let mut refs = Vec::with_capacity(items.len());
        for item in &items {
            let reference = item["ref"]
                .as_str()
                .ok_or_else(|| ToolError::param("elements", "each needs a ref"))?;
            form.push(engine::FormField {
                locator: Locator::reference(reference.trim()),
                value: item["value"].clone(),
            });
            refs.push(reference);
        }
        let done = self.page.fill_form(form, self.deadline).await;
        if let Some((_, error)) = done.stopped {
            return Err(error.into());
        }
        let filled: Vec<Value> = done
            .filled
            .iter()
            .zip(refs)
            .map(|(one, reference)| {
                let mut said = json!({ "ref": reference, "value": one.value });
                if let Some(option) = &one.label {
                    said["option"] = json!(option);
                }
                said
            })
            .collect();
        Ok(self.done(json!({ "filled": filled })))
    }

    async fn wait(&self) -> Result<Value, ToolError> {
        if let Some(text) = &self.p.text {
            let condition = Condition::Text(text.clone());
            self.page
                .wait_for(&condition, !self.p.appear, self.deadline)
                .await?;
            return Ok(self.done(json!({ "text": text, "appear": self.p.appear })));
        }
        let seconds = self.p.duration.ok_or_else(|| {
            ToolError::param(
                "duration",
                "give seconds to wait (at most 30), or text to wait for",
            )
        })?;
        // The agent asked for a pause of this length; nothing to wait on.
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        Ok(self.done(json!({ "duration": seconds })))
    }

    async fn resize_page(&self) -> Result<Value, ToolError> {
        let (Some(width), Some(height)) = (self.p.width, self.p.height) else {
            return Err(ToolError::param("width", "give width and height"));
        };
        self.page
            .browser
            .set_window_size(&self.page.tab, width as u32, height as u32)
            .await?;
        Ok(self.done(json!({ "width": width, "height": height })))
    }

    /// A screenshot of the viewport, or (zoom) of a region of it at twice the scale; the
    /// image is the reply's image content.
    async fn screenshot(&self) -> Result<Reply, ToolError> {
        let clip = match (self.p.action.as_str(), &self.p.region) {
            ("zoom", Some(region)) => Some(self.zoom_clip(region).await?),
            ("zoom", None) => {
                return Err(ToolError::param("region", "is required for action zoom"));
            }
            _ => None,
        };
        let request = engine::ScreenshotRequest {
            format: engine::ImageFormat::Png,
            quality: None,
            full_page: false,
            clip,
            save_path: None,
        };
        let shot = self.page.screenshot(&request, self.deadline).await?;
        let mut data = self.done(json!({
            "mimeType": shot.format.mime(),
            "dimensions": { "width": shot.dimensions.map(|d| d.0), "height": shot.dimensions.map(|d| d.1) },
            "image_attached": true,
        }));
        if let Some(region) = &self.p.region {
            data["region"] = region.clone();
        }
        let mut reply = Reply::action(data).on(self.page.info());
        reply.images.push((base64(&shot.bytes), shot.format.mime()));
        Ok(reply)
    }

    /// A zoom region `{x0, y0, x1, y1}` in viewport pixels, as a page clip at scale 2.
    async fn zoom_clip(&self, region: &Value) -> Result<(f64, f64, f64, f64, f64), ToolError> {
        let n = |k: &str| region[k].as_f64();
        let (Some(x0), Some(y0), Some(x1), Some(y1)) = (n("x0"), n("y0"), n("x1"), n("y1")) else {
            return Err(ToolError::param("region", "needs x0, y0, x1, y1"));
        };
        if x1 <= x0 || y1 <= y0 {
            return Err(ToolError::param(
                "region",
                "x1 and y1 must be past x0 and y0",
            ));
        }
        let (sx, sy) = self.page.scroll_offset(self.deadline).await?;
        Ok((x0 + sx, y0 + sy, x1 - x0, y1 - y0, 2.0))
    }
}

pub async fn upload_file(call: Call, p: UploadFile) -> Result<Reply, ToolError> {
    if p.fileUrl.is_some() || p.base64Data.is_some() {
        return Err(ToolError::param(
            if p.fileUrl.is_some() {
                "fileUrl"
            } else {
                "base64Data"
            },
            "tabwire uploads only files that already lie under an upload root (--upload-root); save the file there and pass filePath",
        ));
    }
    let Some(path) = p.filePath else {
        return Err(ToolError::param(
            "filePath",
            "is required: a file under an upload root",
        ));
    };
    let _ = (p.fileName, p.multiple);
    let tab = super::target_tab(&call, &p.tabId, p.windowId).await?;
    let page = call.session.page(tab.as_deref()).await?;
    let uploaded = page
        .upload(
            &Locator::css_or_ref(&p.selector)?,
            std::slice::from_ref(&path),
            call.deadline,
        )
        .await?;
    Ok(Reply::data(json!({
        "success": true, "message": "File(s) uploaded successfully",
        "fileCount": uploaded.files.len(), "files": uploaded.files, "selector": p.selector,
    }))
    .on(page.info()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_originals_key_notation_becomes_the_engines() {
        assert_eq!(chord_of("Enter"), "Enter");
        assert_eq!(chord_of("Ctrl+Shift+K"), "Ctrl,Shift,K");
        // Ctrl+A is the a key with Control held, not a capital A; with Shift it is.
        assert_eq!(chord_of("Ctrl+A"), "Ctrl,a");
        assert_eq!(chord_of("Shift+A"), "Shift,A");
        // The plus key, alone or last in a chord.
        assert_eq!(chord_of("+"), "+");
        assert_eq!(chord_of("Ctrl++"), "Ctrl,+");
        // Every chord the face makes is one the engine reads.
        for sequence in [
            "Enter",
            "Ctrl+Shift+K",
            "Ctrl+A",
            "Shift+Tab",
            "cmd+a",
            "Ctrl++",
        ] {
            assert!(
                engine::page::keys::parse_chord(&chord_of(sequence)).is_ok(),
                "{sequence}"
            );
        }
    }

    #[test]
    fn modifiers_are_cdps_bits() {
        assert_eq!(modifier_bits(&None), 0);
        assert_eq!(modifier_bits(&Some(json!({}))), 0);
        assert_eq!(modifier_bits(&Some(json!({"altKey": true}))), 1);
        assert_eq!(
            modifier_bits(&Some(json!({"ctrlKey": true, "shiftKey": true}))),
            2 | 8
        );
        assert_eq!(
            modifier_bits(&Some(json!({"metaKey": true, "altKey": false}))),
            4
        );
        // Only a true says a key is held.
        assert_eq!(modifier_bits(&Some(json!({"ctrlKey": "yes"}))), 0);
    }

    #[test]
    fn a_ref_wins_over_a_selector_and_a_selector_reads_by_its_type() {
        use engine::Find;
        let find = |r: Option<&str>, s: Option<&str>, t: &str| {
            super::super::element(r, s, t).unwrap().map(|l| l.find)
        };
        assert_eq!(
            find(Some("ref_3"), Some("#x"), "css"),
            Some(Find::Ref("ref_3".into()))
        );
        assert_eq!(
            find(Some("  "), Some("#x"), "css"),
            Some(Find::Css("#x".into()))
        );
        assert_eq!(
            find(None, Some("//a[1]"), "xpath"),
            Some(Find::XPath("//a[1]".into()))
        );
        // A ref given where a selector goes means that element.
        assert_eq!(
            find(None, Some("ref_7"), "css"),
            Some(Find::Ref("ref_7".into()))
        );
        assert_eq!(find(None, None, "css"), None);
    }

    #[test]
    fn coordinates_aim_at_a_point_and_must_be_numbers() {
        let at = aim(
            None,
            None,
            "css",
            &Some(json!({"x": 10, "y": 20.5})),
            "coordinates",
        );
        match at.unwrap() {
            Some(ClickTarget::Point { x, y, frame }) => {
                assert_eq!((x, y), (10.0, 20.5));
                assert!(frame.is_empty());
            }
            _ => panic!("expected a point"),
        }
        let bad = aim(None, None, "css", &Some(json!({"x": "10"})), "coordinates");
        assert!(matches!(bad, Err(ToolError::Param { .. })));
        assert!(
            aim(None, None, "css", &None, "coordinates")
                .unwrap()
                .is_none()
        );
    }
}
