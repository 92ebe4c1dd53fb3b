//! Input: clicks, typing, keys, drags and file inputs.

use serde_json::{Value, json};

use engine::{Acted, ClickTarget, Clicked, ElementInfo, EngineError, ErrorCode, Locator, Typed};

use super::args::named;
use super::args::{LOCATOR_DOC, frame_path, frame_steps, with_ref};
use super::envelope;
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
        r#ref: Option<String> = Str, unlisted, "";
        x: Option<f64> = COORDINATE, nullable, "viewport CSS px (with y, instead of selector)";
        y: Option<f64> = COORDINATE, nullable, "";
        offset_x: Option<f64> = COORDINATE, nullable, "from the element's left edge";
        offset_y: Option<f64> = COORDINATE, nullable, "from the element's top edge";
        button: String = Choice(&["left", "right", "middle"]), default("left"), "";
        clicks: i64 = Int { min: 1, max: 100 }, default(1), "";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct PageType {
        text: String = Str, required, "";
        selector: Value = Locator, default(""), "the field, as page_click's selector (a ref too); default: the focused element";
        r#ref: Option<String> = Str, unlisted, "";
        clear: bool = Bool, default(false), "replace the current value";
        submit_key: String = Str, default(""), "key pressed afterwards, e.g. enter";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

/// How page_select's selector is described: a ref from a read goes inside it.
const SELECT_TARGET_DOC: &str =
    "the <select>, listbox or combobox, as page_click's selector (a ref from a read too)";

tool_params! {
    pub struct PageSelect {
        selector: Value = Locator, required, SELECT_TARGET_DOC;
        options: Vec<String> = Strs, required, "each an option's label (its visible text) or value; several only for a multiple select";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct PageFill {
        fields: Value = List, required, "[{selector, value}]: each field as page_click's selector (a ref from a read too), its value text for a text field, slider, date or colour, an option's label for a select, true or false for a checkbox or radio";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds, for the whole form";
    }
}

tool_params! {
    pub struct PagePress {
        keys_csv: String = Str, required, "key or chord, e.g. enter or ctrl,shift,k";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
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
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
        timeout: f64 = Seconds { max: 86_400.0 }, default(15.0), "seconds";
    }
}

tool_params! {
    pub struct UploadFiles {
        selector: String = Str, required, "CSS selector or ref of the <input type=file>";
        paths: Vec<String> = Strs, required, "absolute paths under an allowed upload root";
        session_id: Option<TabRef> = TabHandle, nullable, "";
        #[allow(dead_code)] // the call's deadline (`params::time_limit`)
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

/// What BrowserTap says of every page input, whatever became of it: the tab, and that
/// input went through CDP to that tab without bringing it forward.
fn sent(page: &engine::Page) -> Value {
    json!({
        "session_id": page.info().handle,
        "input_mode": "cdp",
        "foreground_changed": false,
    })
}

/// A successful input: `sent`, `status: success`, one `{}` per CDP input event (what
/// BrowserTap's `result` lists), and the tool's own facts.
fn succeeded(page: &engine::Page, events: usize, facts: Value) -> Value {
    let mut data = sent(page);
    data["status"] = json!("success");
    data["result"] = json!(vec![json!({}); events]);
    data["input_dispatched"] = json!(true);
    data["input_commands_dispatched"] = json!(events);
    merge(&mut data, facts);
    data
}

/// What an input that failed before reaching the page says besides the page's reason.
fn undispatched(page: &engine::Page, facts: Value) -> Value {
    let mut data = sent(page);
    data["input_dispatched"] = json!(false);
    data["input_commands_dispatched"] = json!(0);
    merge(&mut data, facts);
    data
}

fn merge(data: &mut Value, facts: Value) {
    if let (Some(data), Value::Object(facts)) = (data.as_object_mut(), facts) {
        data.extend(facts);
    }
}

/// The selector as BrowserTap echoes it back: a frame path's CSS steps as `{css}`
/// objects, the rest as given.
fn echoed(selector: &Value) -> Value {
    let mut echo = selector.clone();
    if let Some(Value::Array(path)) = echo.get_mut("frame") {
        *path = frame_steps(std::mem::take(path));
    }
    echo
}

/// CDP events of a click: one move, then a press and a release per click.
fn click_events(clicks: u32) -> usize {
    1 + 2 * clicks as usize
}

/// A click's facts in BrowserTap's shape: the selector as given and where the press
/// landed in `target`, the bot-check verdict, and tabwire's description of the element.
fn click_facts(clicked: Clicked, selector: &Value, offset: (Option<f64>, Option<f64>)) -> Value {
    if selector.is_null() {
        return json!({ "target": { "x": clicked.x, "y": clicked.y, "hit_verified": false } });
    }
    let mut facts = json!({
        "target": {
            "selector": selector,
            "x": clicked.x,
            "y": clicked.y,
            "offset_x": offset.0,
            "offset_y": offset.1,
            "hit_verified": clicked.hit_verified,
            "scrolled_into_view": clicked.scrolled_into_view.unwrap_or(false),
        },
        // The page is checked for a bot check after each click; tabwire does not count
        // repeated clicks at one, so `attempts` stays 0.
        "challenge_check": { "enforced": true },
        "challenge_detected": clicked.challenge.is_some(),
        "attempts": 0,
    });
    if let Some(kind) = clicked.challenge {
        facts["challenge"] = json!(kind);
    }
    if let Some(checked) = clicked.checked {
        facts["checked"] = json!(checked);
    }
    if !clicked.page_errors.is_empty() {
        facts["page_errors"] = json!(clicked.page_errors);
    }
    if clicked.requests_pending > 0 {
        facts["requests_pending"] = json!(clicked.requests_pending);
    }
    if let Some(attempts) = clicked.attempts {
        facts["aim_attempts"] = json!(attempts);
    }
    if let Some(element) = clicked.element {
        facts["element"] = json!(element);
    }
    facts
}

/// The focused element as BrowserTap describes it (`tagName`, attributes as written),
/// with tabwire's reading of it (`tag`, computed `label`, `editable`) beside.
fn focus_element(element: &ElementInfo) -> Value {
    let mut described = json!({
        "ariaLabel": element.attribute("aria-label"),
        "className": element.attribute("class"),
        "contentEditable": element.content_editable == Some(true),
        "id": element.id.as_deref().unwrap_or(""),
        "name": element.attribute("name"),
        "placeholder": element.attribute("placeholder"),
        "role": element.attribute("role"),
        "tagName": element.tag.to_uppercase(),
        "type": element.attribute("type"),
        "tag": element.tag,
    });
    if let Some(label) = &element.label {
        described["label"] = json!(label);
    }
    if let Some(editable) = element.editable {
        described["editable"] = json!(editable);
    }
    if let Some(role) = &element.role {
        described["computed_role"] = json!(role);
    }
    described
}

/// A typing reply's facts: what took the text and what had focus before.
fn type_facts(typed: Typed, target: Value) -> Value {
    let mut facts = json!({
        "target": target,
        "target_kind": "element",
        "focus_confirmed": typed.focus_confirmed,
        "active_element": typed.active_element.as_ref().map(focus_element),
        "previous_active_element": typed.previous_active_element.as_ref().map(focus_element),
        "typed_chars": typed.typed_chars,
    });
    if let Some(key) = typed.submitted {
        facts["submitted"] = json!(key);
    }
    if typed.requests_pending > 0 {
        facts["requests_pending"] = json!(typed.requests_pending);
    }
    if let Some(value) = typed.value {
        facts["value"] = value;
    }
    if typed.clamped {
        facts["clamped"] = json!(true);
    }
    facts
}

/// What a typing call aimed at, as BrowserTap echoes it.
fn type_target(selector: &Value) -> Value {
    if selector.is_null() {
        json!({ "focused_element": true })
    } else {
        json!({ "selector": selector })
    }
}

pub async fn page_click(call: Call, p: PageClick) -> Result<Reply, ToolError> {
    let selector = with_ref(given(p.selector.clone()), p.r#ref.as_deref())?;
    let offset = (p.offset_x, p.offset_y);
    // A frame-relative point is {"frame": [...], "x": .., "y": ..} in the selector.
    let framed_point = selector
        .get("x")
        .and_then(Value::as_f64)
        .zip(selector.get("y").and_then(Value::as_f64));
    // A locator the page could not read fails the click as the page would have.
    let target = match (selector.is_null(), (p.x, p.y), framed_point) {
        (_, _, Some((x, y))) => Ok(ClickTarget::Point {
            x,
            y,
            frame: frame_path(selector.get("frame"))?,
        }),
        (true, (Some(x), Some(y)), _) => Ok(ClickTarget::Point {
            x,
            y,
            frame: Vec::new(),
        }),
        (false, (None, None), _) => {
            Locator::parse(&selector).map(|locator| ClickTarget::Element { locator, offset })
        }
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
    let aimed_at = match &target {
        Ok(ClickTarget::Point { .. }) if selector.get("x").is_none() => Value::Null,
        _ => echoed(&selector),
    };
    let watch = page.watch_effects();
    let clicked = match click(&page, target, &p, call.deadline).await {
        Ok(Acted::Done(clicked)) => clicked,
        Ok(Acted::DialogOpened(dialog)) => {
            return Ok(opened_dialog(&page, &aimed_at, offset, dialog));
        }
        Err(error) => {
            let base = undispatched(
                &page,
                json!({
                    "target": {
                        "selector": aimed_at, "offset_x": offset.0, "offset_y": offset.1,
                        "hit_verified": false, "scrolled_into_view": false,
                    },
                    "challenge_detected": false,
                    "attempts": 0,
                }),
            );
            return envelope::reported_with(error, base).map(|mut reply| {
                if reply.data.get("option_of_select").is_some() {
                    reply.data["next_action"] = json!(USE_PAGE_SELECT);
                }
                reply.on(page.info())
            });
        }
    };
    let point = (clicked.x, clicked.y);
    let lean_element = clicked.element.clone();
    let checked = clicked.checked;
    let thrown = clicked.page_errors.clone();
    let hit_verified = clicked.hit_verified;
    let mut data = succeeded(
        &page,
        click_events(p.clicks as u32),
        click_facts(clicked, &aimed_at, offset),
    );
    let dialogs = page.take_answered_dialogs();
    if !dialogs.is_empty() {
        data["dialogs"] = json!(dialogs);
    }
    let effects = page.effects(watch, call.deadline).await;
    let mut lean = crate::lean::clicked(
        lean_element.as_ref(),
        Some(point),
        hit_verified || aimed_at.is_null(),
        &dialogs,
    );
    if let Some(checked) = checked {
        lean.push_str(if checked {
            " (now checked)"
        } else {
            " (now unchecked)"
        });
    }
    for error in &thrown {
        lean.push_str(&format!("; the page threw: {error}"));
    }
    lean.push_str(&with_effects(&mut data, &effects));
    Ok(Reply::action(data)
        .on(page.info())
        .lean(lean)
        .at(point.0, point.1))
}

/// What an input set off, as tabwire's own keys beside BrowserTap's (`navigated`: where
/// the tab landed; `new_tabs`: tabs the page opened); the same facts for a lean line.
fn with_effects(data: &mut Value, effects: &engine::Aftermath) -> String {
    let mut lean = String::new();
    if let Some(pending) = data["requests_pending"].as_u64() {
        lean.push_str(&format!(
            "; {pending} request(s) it sent still unanswered when the call's time ran out"
        ));
    }
    if let Some(landing) = &effects.navigation {
        data["navigated"] = json!(landing);
        if landing.committed {
            lean.push_str(&format!(
                "; landed on {} \"{}\"",
                landing.url, landing.title
            ));
        } else {
            lean.push_str(&format!(
                "; navigating to {} (not loaded yet: wait_for_url)",
                landing.url
            ));
        }
    }
    if !effects.new_tabs.is_empty() {
        let tabs: Vec<Value> = effects
            .new_tabs
            .iter()
            .map(|tab| json!({ "session_id": tab.handle, "url": tab.url }))
            .collect();
        for tab in &effects.new_tabs {
            lean.push_str(&format!(
                "; opened a tab {} {}",
                tab.handle.as_deref().unwrap_or("(new)"),
                tab.url
            ));
        }
        data["new_tabs"] = json!(tabs);
    }
    lean
}

/// A click whose page opened a dialog: the click reached the page, which waits on the
/// dialog now; it stays open for `handle_dialog` to answer.
fn opened_dialog(
    page: &engine::Page,
    aimed_at: &Value,
    offset: (Option<f64>, Option<f64>),
    dialog: engine::Dialog,
) -> Reply {
    let lean = format!(
        "clicked; a {} dialog is open now: {} (answer it with handle_dialog)",
        dialog.kind,
        json!(dialog.message)
    );
    let dialog = super::script::btap_dialog(&dialog);
    let mut facts = match page.last_aim() {
        Some(aim) => click_facts(aim, aimed_at, offset),
        None => json!({ "target": { "selector": aimed_at } }),
    };
    facts["dialog"] = dialog;
    facts["dialog_open"] = json!(true);
    facts["hint"] = json!(
        "the page opened a dialog and waits on it: answer it with handle_dialog (accept or dismiss)"
    );
    Reply::action(succeeded(page, click_events(1), facts))
        .on(page.info())
        .lean(lean)
}

/// Clicks the target, leaving a dialog the click opens open for the agent.
async fn click(
    page: &engine::Page,
    target: Result<ClickTarget, EngineError>,
    p: &PageClick,
    deadline: engine::Deadline,
) -> Result<Acted<Clicked>, ToolError> {
    let target = target?;
    Ok(page
        .leaving_dialogs_open(page.click(target, &p.button, p.clicks as u32, deadline))
        .await?)
}

pub async fn page_type(call: Call, p: PageType) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let selector = with_ref(given(p.selector.clone()), p.r#ref.as_deref())?;
    let target = type_target(&echoed(&selector));
    let watch = page.watch_effects();
    let typed = match type_into(&page, &selector, &p, call.deadline).await {
        Ok(typed) => typed,
        Err(error) => {
            let kind = match error.engine_error().map(EngineError::code) {
                Some(ErrorCode::ReadOnly | ErrorCode::NotEditable) => "unusable",
                _ => "missing",
            };
            let base = undispatched(
                &page,
                json!({
                    "target": target, "target_kind": kind, "typed_chars": 0, "retryable": false,
                }),
            );
            return envelope::reported_with(error, base).map(|mut reply| {
                // The error's details describe what has focus as the page script does.
                let focused = serde_json::from_value(reply.data["active_element"].take());
                reply.data["active_element"] = focused.map_or(Value::Null, |e| focus_element(&e));
                if reply.data["element"]["tag"] == "select" {
                    reply.data["next_action"] = json!(USE_PAGE_SELECT);
                }
                reply.on(page.info())
            });
        }
    };
    let mut lean = format!(
        "typed {} chars into {}",
        typed.typed_chars,
        typed
            .active_element
            .as_ref()
            .map_or("element".to_owned(), crate::lean::element)
    );
    // A slider, date or colour set whole: the value it holds now (a slider stops at its
    // range's end).
    if let Some(value) = &typed.value {
        let value = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        lean.push_str(&format!("; its value is now \"{value}\""));
        if typed.clamped {
            lean.push_str(" (brought within its range)");
        }
    }
    let submitted = typed.submitted.is_some();
    if submitted {
        lean.push_str(", then submitted");
    }
    // Each character is one insertText; a clear is a select-all and a delete first.
    let events = typed.typed_chars.min(1) + usize::from(p.clear) * 2;
    let mut data = succeeded(&page, events.max(1), type_facts(typed, target));
    // BrowserTap's first step re-checks the field has focus before typing; so does ours.
    if let Some(result) = data["result"].as_array_mut().and_then(|r| r.first_mut()) {
        *result = json!({ "result": { "type": "boolean", "value": true } });
    }
    // A key pressed afterwards may submit: the call answers once what it started has
    // committed, so the next call cannot cancel it.
    if submitted {
        let effects = page.effects(watch, call.deadline).await;
        lean.push_str(&with_effects(&mut data, &effects));
    }
    Ok(Reply::action(data).on(page.info()).lean(lean))
}

async fn type_into(
    page: &engine::Page,
    selector: &Value,
    p: &PageType,
    deadline: engine::Deadline,
) -> Result<Typed, ToolError> {
    let locator = match selector {
        Value::Null => None,
        given => Some(Locator::parse(given)?),
    };
    let submit = Some(p.submit_key.as_str()).filter(|k| !k.trim().is_empty());
    Ok(page
        .type_text(locator.as_ref(), &p.text, p.clear, submit, deadline)
        .await?)
}

/// What a refusal to type into, or click in, a `<select>` tells the agent to do instead.
const USE_PAGE_SELECT: &str =
    "choose the option with page_select {selector: the select, options: [its label or value]}";

/// Chooses options in a `<select>`, listbox or combobox (tabwire's own tool): the reply
/// has BrowserTap's input envelope and what is selected now, by label and by value.
pub async fn page_select(call: Call, p: PageSelect) -> Result<Reply, ToolError> {
    if p.options.is_empty() {
        return Err(ToolError::param("options", "give at least one option"));
    }
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let selector = echoed(&p.selector);
    let target = json!({ "selector": selector });
    let chosen = match Locator::parse(&p.selector) {
        Ok(locator) => {
            page.select_options(&locator, &p.options, call.deadline)
                .await
        }
        Err(error) => Err(error),
    };
    let chosen = match chosen {
        Ok(chosen) => chosen,
        Err(error) => {
            let base = undispatched(&page, json!({ "target": target }));
            return envelope::reported_with(error.into(), base).map(|r| r.on(page.info()));
        }
    };
    let lean = format!(
        "selected {} in {}",
        quoted_list(&chosen.selected),
        crate::lean::element(&chosen.element)
    );
    let facts = json!({
        "target": target,
        "selected": chosen.selected,
        "values": chosen.values,
        "multiple": chosen.multiple,
        "control": chosen.kind,
        "element": chosen.element,
    });
    // A native select is set in one step; an ARIA control takes one click an option (and
    // one to open a combobox).
    let events = chosen.clicks.max(1);
    Ok(Reply::action(succeeded(&page, events, facts))
        .on(page.info())
        .lean(lean))
}

/// Fills several fields in one call, in order, each the way a user gives its value (see
/// `Page::fill`): a form in one step. Stops at the first field that cannot take its
/// value; the reply says which, and what was filled before it.
pub async fn page_fill(call: Call, p: PageFill) -> Result<Reply, ToolError> {
    let fields = p.fields.as_array().cloned().unwrap_or_default();
    if fields.is_empty() {
        return Err(ToolError::param(
            "fields",
            "give at least one {selector, value}",
        ));
    }
    for (index, field) in fields.iter().enumerate() {
        if field.get("selector").is_none_or(Value::is_null) || field.get("value").is_none() {
            return Err(ToolError::param(
                "fields",
                format!(
                    "field {index} needs a selector and a value: {{\"selector\": \"e12\", \"value\": \"ann\"}}"
                ),
            ));
        }
    }
    // Fields are filled up to the first whose locator the page could not read, which
    // stops the filling as the page would have.
    let mut form = Vec::with_capacity(fields.len());
    let mut unreadable = None;
    for (index, field) in fields.iter().enumerate() {
        match Locator::parse(&field["selector"]) {
            Ok(locator) => form.push(engine::FormField {
                locator,
                value: field["value"].clone(),
            }),
            Err(error) => {
                unreadable = Some((index, error));
                break;
            }
        }
    }
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let mut done = page.fill_form(form, call.deadline).await;
    if done.stopped.is_none() {
        done.stopped = unreadable;
    }
    let filled: Vec<Value> = done
        .filled
        .iter()
        .zip(&fields)
        .map(|(one, field)| {
            let mut said = json!({
                "selector": echoed(&field["selector"]), "kind": one.kind, "value": one.value,
                "element": one.element,
            });
            if let Some(label) = &one.label {
                said["option"] = json!(label);
            }
            said
        })
        .collect();
    if let Some((index, error)) = done.stopped {
        // Fields before this one were filled: the call had effects, said here.
        let base = undispatched(
            &page,
            json!({
                "filled": filled, "failed_field": index,
                "target": { "selector": echoed(&fields[index]["selector"]) },
            }),
        );
        return envelope::reported_with(error.into(), base).map(|r| r.on(page.info()));
    }
    let lean: Vec<String> = done.filled.iter().map(filled_line).collect();
    let events = filled.len();
    Ok(
        Reply::action(succeeded(&page, events, json!({ "filled": filled })))
            .on(page.info())
            .lean(format!("filled {}", lean.join("; "))),
    )
}

/// One filled field, leanly: `textbox "User" = "ann"`, `checkbox "Agree" checked`.
fn filled_line(done: &engine::Filled) -> String {
    let element = crate::lean::element(&done.element);
    match done.kind {
        engine::FilledKind::Checkbox | engine::FilledKind::Radio => {
            let state = if done.value == "true" {
                "checked"
            } else {
                "unchecked"
            };
            format!("{element} {state}")
        }
        engine::FilledKind::Select => {
            format!(
                "{element} = {:?}",
                done.label.as_deref().unwrap_or(&done.value)
            )
        }
        _ if done.element.is_password() => format!("{element} = \"•••\""),
        _ => format!("{element} = {:?}", done.value),
    }
}

/// `"Red", "Blue"`; `nothing` for none.
fn quoted_list(labels: &[String]) -> String {
    if labels.is_empty() {
        return "nothing".to_owned();
    }
    labels
        .iter()
        .map(|l| format!("{l:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub async fn page_press(call: Call, p: PagePress) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let watch = page.watch_effects();
    let pressed = page.press(&p.keys_csv, call.deadline).await?;
    let mut lean = format!("pressed {}", pressed.keys);
    // A chord is a key down and up for each of its keys.
    let events = 2 * pressed.keys.split('+').count();
    let mut facts = json!({ "target": { "keys_csv": p.keys_csv }, "keys": pressed.keys });
    if pressed.requests_pending > 0 {
        facts["requests_pending"] = json!(pressed.requests_pending);
    }
    let mut data = succeeded(&page, events, facts);
    let effects = page.effects(watch, call.deadline).await;
    lean.push_str(&with_effects(&mut data, &effects));
    Ok(Reply::action(data).on(page.info()).lean(lean))
}

pub async fn page_drag(call: Call, p: PageDrag) -> Result<Reply, ToolError> {
    let page = call
        .session
        .page(named(&p.session_id, &None).as_deref())
        .await?;
    let steps = page
        .drag(
            (p.x1, p.y1),
            (p.x2, p.y2),
            params::seconds(p.duration),
            &p.button,
            call.deadline,
        )
        .await?;
    let steps = steps as usize;
    let facts = json!({
        "target": { "from": [p.x1, p.y1], "to": [p.x2, p.y2] },
        "steps": steps,
    });
    // A press, the moves between, and a release.
    let lean = format!(
        "dragged from ({}, {}) to ({}, {}) in {steps} steps",
        p.x1, p.y1, p.x2, p.y2
    );
    Ok(Reply::action(succeeded(&page, steps + 2, facts))
        .dragged((p.x1, p.y1), (p.x2, p.y2))
        .on(page.info())
        .lean(lean))
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
        .upload(&Locator::css_or_ref(&p.selector)?, &p.paths, call.deadline)
        .await?;
    let data = json!({
        "status": "ok", "selector": p.selector, "files": uploaded.files,
        "node_id": uploaded.node_id,
    });
    Ok(Reply::data(data).on(page.info()))
}
