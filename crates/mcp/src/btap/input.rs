use serde_json::json;

use engine::ClickTarget;

use super::read::split_locator;
use crate::envelope::Reply;
use crate::face::{Call, ToolError};

pub async fn page_click(call: Call) -> Result<Reply, ToolError> {
    let args = &call.args;
    let point = (args.f64("x"), args.f64("y"));
    let (locator, frame) = split_locator(args.value("selector"))?;
    // A frame-relative point is {"frame": [...], "x": .., "y": ..} in the selector.
    let framed_point = locator
        .get("x")
        .and_then(|x| x.as_f64())
        .zip(locator.get("y").and_then(|y| y.as_f64()));
    let target = match (locator.is_null(), point, framed_point) {
        (_, _, Some((x, y))) => ClickTarget::Point { x, y, frame },
        (true, (Some(x), Some(y)), _) => ClickTarget::Point {
            x,
            y,
            frame: Vec::new(),
        },
        (false, (None, None), _) => ClickTarget::Element {
            locator,
            frame,
            offset: (args.f64("offset_x"), args.f64("offset_y")),
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
    let page = call.session.page(call.tab().as_deref()).await?;
    let mut data = page
        .click(
            target,
            args.str("button").unwrap_or("left"),
            args.i64_or("clicks", 1) as u32,
            args.timeout(15.0),
        )
        .await?;
    data["status"] = json!("clicked");
    data["input_mode"] = json!("cdp");
    data["foreground_changed"] = json!(false);
    let dialogs = page.take_answered_dialogs();
    if !dialogs.is_empty() {
        data["dialogs"] = json!(dialogs);
    }
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn page_type(call: Call) -> Result<Reply, ToolError> {
    let (locator, frame) = split_locator(call.args.value("selector"))?;
    let locator = (!locator.is_null()).then_some(locator);
    let page = call.session.page(call.tab().as_deref()).await?;
    let mut data = page
        .type_text(
            locator,
            &frame,
            &call.args.string("text"),
            call.args.bool_or("clear", false),
            call.args.str("submit_key"),
            call.args.timeout(15.0),
        )
        .await?;
    data["status"] = json!("typed");
    data["input_mode"] = json!("cdp");
    data["foreground_changed"] = json!(false);
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn page_press(call: Call) -> Result<Reply, ToolError> {
    let page = call.session.page(call.tab().as_deref()).await?;
    let mut data = page
        .press(&call.args.string("keys_csv"), call.args.timeout(15.0))
        .await?;
    data["status"] = json!("pressed");
    data["input_mode"] = json!("cdp");
    data["foreground_changed"] = json!(false);
    Ok(Reply::data(data).on(page.handle()))
}

pub async fn page_drag(call: Call) -> Result<Reply, ToolError> {
    let args = &call.args;
    let page = call.session.page(call.tab().as_deref()).await?;
    let mut data = page
        .drag(
            (args.f64_or("x1", 0.0), args.f64_or("y1", 0.0)),
            (args.f64_or("x2", 0.0), args.f64_or("y2", 0.0)),
            engine::seconds(args.f64_or("duration", 0.3)),
            args.str("button").unwrap_or("left"),
            args.timeout(15.0),
        )
        .await?;
    data["status"] = json!("dragged");
    data["input_mode"] = json!("cdp");
    data["foreground_changed"] = json!(false);
    Ok(Reply::data(data).on(page.handle()))
}
