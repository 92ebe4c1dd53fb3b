//! page_select: choosing options in a native <select> (single, multiple), an ARIA listbox
//! and an ARIA combobox, as the page's own record shows a user's choice; and every refusal
//! of a select naming page_select. On selects.html, whose log lists what the app heard.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire};

async fn opened(name: &str) -> (Site, Tabwire) {
    let site = Site::start().await;
    let tw = Tabwire::stdio(name).await;
    tw.ok("open_url", json!({ "url": site.url("selects.html") }))
        .await;
    (site, tw)
}

/// The page's log, one line an event it heard.
async fn heard(tw: &Tabwire) -> Vec<String> {
    let lines = tw
        .ok(
            "execute_js",
            json!({ "script": "[...document.querySelectorAll('#log li')].map(li => li.textContent)" }),
        )
        .await["js_return"]
        .clone();
    serde_json::from_value(lines).unwrap_or_default()
}

async fn select(tw: &Tabwire, selector: Value, options: Value) -> Value {
    tw.ok(
        "page_select",
        json!({ "selector": selector, "options": options }),
    )
    .await
}

#[tokio::test]
async fn a_native_select_is_chosen_by_label_value_or_ref_and_the_page_hears_it() {
    let (_site, tw) = opened("select-native").await;
    let chosen = select(&tw, json!("#color"), json!("Green")).await;
    assert_eq!(chosen["selected"], json!(["Green"]), "{chosen}");
    assert_eq!(chosen["values"], json!(["2"]), "{chosen}");
    assert_eq!(chosen["multiple"], false);
    assert_eq!(chosen["status"], "success");
    assert_eq!(chosen["target"]["selector"], "#color");
    assert_eq!(chosen["input_dispatched"], true);
    assert!(chosen["session_id"].is_string(), "{chosen}");
    assert_eq!(heard(&tw).await, ["input color=2", "change color=2"]);

    // A peer's spelling of the arguments is refused naming what was given instead.
    let peers = tw
        .call(
            "page_select",
            json!({ "locator": "#color", "values": ["Green"] }),
        )
        .await
        .err();
    let said = peers["error"]["message"].as_str().unwrap_or_default();
    assert!(said.contains("gave locator, values instead"), "{peers}");
    assert_eq!(
        peers["diagnostics"]["ignored_arguments"],
        json!(["locator", "values"])
    );

    // A value names its option too; the reply answers by label.
    let by_value = select(&tw, json!({ "css": "#color" }), json!(["3"])).await;
    assert_eq!(by_value["selected"], json!(["Blue"]), "{by_value}");

    // The scan keeps BrowserTap's words for a select and names tabwire's tool beside them;
    // the target's ref chooses in that select.
    let scan = tw.ok("scan_page", json!({})).await;
    let targets = scan["observation"]["targets"].as_array().unwrap().clone();
    let colour = targets
        .iter()
        .find(|t| t["name"] == "Colour")
        .expect("the select is a target");
    assert!(colour["recommended_tool"].is_null(), "{colour}");
    assert_eq!(colour["reason"], "select_existing_option");
    assert_eq!(colour["tabwire_tool"], "page_select", "{colour}");
    let reference = colour["ref"].as_str().unwrap();
    let by_ref = select(&tw, json!({ "ref": reference }), json!("red")).await;
    assert_eq!(by_ref["selected"], json!(["Red"]), "{by_ref}");
    assert_eq!(
        tw.ok(
            "execute_js",
            json!({ "script": "document.getElementById('color').value" })
        )
        .await["js_return"],
        "1"
    );
}

#[tokio::test]
async fn lean_replies_name_the_tool_and_the_chosen_labels_in_both_faces() {
    let site = Site::start().await;
    let tw = Tabwire::on_link(
        "select-lean",
        &["--face", "btap,chrome", "--replies", "lean"],
    )
    .await;
    tw.text("open_url", json!({ "url": site.url("selects.html") }))
        .await;
    // The lean read names the tool that chooses in its selects.
    let read = tw.text("scan_page", json!({})).await;
    assert!(read.text.contains("page_select"), "{}", read.text);
    let chosen = tw
        .text(
            "page_select",
            json!({ "selector": "#color", "options": "3" }),
        )
        .await;
    assert!(!chosen.is_error, "{}", chosen.text);
    assert!(
        chosen.text.starts_with("selected \"Blue\" in "),
        "{}",
        chosen.text
    );
    // The chrome face echoes the label asked for, not the option's value.
    let filled = tw
        .text(
            "chrome_fill_or_select",
            json!({ "selector": "#color", "value": "Green" }),
        )
        .await;
    assert!(!filled.is_error, "{}", filled.text);
    assert!(filled.text.ends_with("= \"Green\""), "{}", filled.text);
}

#[tokio::test]
async fn chrome_fill_or_select_answers_with_the_options_label() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("select-chrome", &["--face", "chrome"]).await;
    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("selects.html") }),
    )
    .await;
    let chosen = tw
        .chrome_ok(
            "chrome_fill_or_select",
            json!({ "selector": "#color", "value": "Blue" }),
        )
        .await;
    assert_eq!(chosen["elementInfo"]["selectedOption"], "Blue", "{chosen}");
    assert_eq!(chosen["elementInfo"]["value"], "3", "{chosen}");
    let state = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return [...document.querySelectorAll('#log li')].map(li => li.textContent).join('|')" }),
        )
        .await;
    assert!(
        state.to_string().contains("input color=3|change color=3"),
        "{state}"
    );
}

#[tokio::test]
async fn a_multiple_select_gets_exactly_the_options_given() {
    let (_site, tw) = opened("select-multiple").await;
    let chosen = select(&tw, json!("#toppings"), json!(["Mushrooms", "pe"])).await;
    assert_eq!(chosen["multiple"], true);
    assert_eq!(
        chosen["selected"],
        json!(["Mushrooms", "Peppers"]),
        "{chosen}"
    );
    assert_eq!(chosen["values"], json!(["mu", "pe"]));
    assert_eq!(
        heard(&tw).await,
        ["input toppings=mu,pe", "change toppings=mu,pe"]
    );

    // Several options for a single select: bad input, naming `options`; nothing changes.
    let several = tw
        .call(
            "page_select",
            json!({ "selector": "#color", "options": ["Red", "Blue"] }),
        )
        .await;
    assert_eq!(
        several.error_code(),
        "invalid_request",
        "{}",
        several.envelope
    );
    assert_eq!(several.envelope["diagnostics"]["param"], "options");
}

#[tokio::test]
async fn a_missing_or_disabled_option_is_refused_naming_what_there_is() {
    let (_site, tw) = opened("select-missing").await;
    let missing = tw
        .call(
            "page_select",
            json!({ "selector": "#color", "options": "Purple" }),
        )
        .await;
    assert_eq!(missing.error_code(), "not_found", "{}", missing.envelope);
    assert_eq!(missing.envelope["retryable"], false);
    let legacy = missing.reported();
    assert_eq!(
        legacy["options"],
        json!(["Pick one", "Red", "Green", "Blue", "Gold"]),
        "{legacy}"
    );
    assert!(
        legacy["message"].as_str().unwrap().contains("\"Blue\""),
        "{legacy}"
    );
    assert_eq!(legacy["target"]["selector"], "#color");

    let gold = tw
        .call(
            "page_select",
            json!({ "selector": "#color", "options": "Gold" }),
        )
        .await;
    assert_eq!(gold.error_code(), "not_interactable", "{}", gold.envelope);
    let locked = tw
        .call(
            "page_select",
            json!({ "selector": "#locked", "options": "Only" }),
        )
        .await;
    assert_eq!(
        locked.error_code(),
        "not_interactable",
        "{}",
        locked.envelope
    );
    // Nothing was chosen, so the page heard nothing.
    assert!(heard(&tw).await.is_empty());
}

#[tokio::test]
async fn an_aria_listbox_and_combobox_are_chosen_with_clicks_the_app_hears() {
    let (_site, tw) = opened("select-aria").await;
    let fruit = select(
        &tw,
        json!({ "role": "listbox", "name": "Fruit" }),
        json!("Banana"),
    )
    .await;
    assert_eq!(fruit["selected"], json!(["Banana"]), "{fruit}");
    assert_eq!(fruit["values"], json!(["banana"]));
    assert_eq!(heard(&tw).await, ["fruit clicked Banana trusted=true"]);
    let durian = tw
        .call(
            "page_select",
            json!({ "selector": "#fruit", "options": "Durian" }),
        )
        .await;
    assert_eq!(
        durian.error_code(),
        "not_interactable",
        "{}",
        durian.envelope
    );

    // The combobox, by the ref a scan gave it: opened, then its option clicked.
    let scan = tw.ok("scan_page", json!({})).await;
    let targets = scan["observation"]["targets"].as_array().unwrap().clone();
    let city = targets
        .iter()
        .find(|t| t["name"] == "City")
        .expect("the combobox is a target");
    assert_eq!(city["tabwire_tool"], "page_select", "{city}");
    let reference = city["ref"].as_str().unwrap().replace("ref_", "e");
    let chosen = select(&tw, json!({ "ref": reference }), json!("osl")).await;
    assert_eq!(chosen["selected"], json!(["Oslo"]), "{chosen}");
    assert_eq!(chosen["values"], json!(["osl"]), "{chosen}");
    assert_eq!(
        heard(&tw).await[1..],
        ["city opened trusted=true", "city chose Oslo trusted=true"]
    );

    // A combobox whose options arrive after it opens: the option is waited for.
    let airport = select(&tw, json!("#airport"), json!("Oslo Gardermoen")).await;
    assert_eq!(airport["selected"], json!(["Oslo Gardermoen"]), "{airport}");
    assert!(
        heard(&tw)
            .await
            .contains(&"airport chose Oslo Gardermoen trusted=true".to_owned())
    );

    // An option the combobox does not have: refused, naming those it has.
    let missing = tw
        .call(
            "page_select",
            json!({ "selector": "#city", "options": "Rome" }),
        )
        .await;
    assert_eq!(missing.error_code(), "not_found", "{}", missing.envelope);
    assert_eq!(
        missing.reported()["options"],
        json!(["Paris", "Oslo", "Lima"])
    );
}

#[tokio::test]
async fn typing_into_or_clicking_in_a_select_names_page_select() {
    let (_site, tw) = opened("select-refusals").await;
    let typed = tw
        .call("page_type", json!({ "selector": "#color", "text": "Red" }))
        .await;
    assert_eq!(typed.error_code(), "not_interactable", "{}", typed.envelope);
    let legacy = typed.reported();
    assert_eq!(legacy["target_kind"], "unusable", "{legacy}");
    assert!(
        legacy["next_action"]
            .as_str()
            .unwrap()
            .contains("page_select"),
        "{legacy}"
    );

    let clicked = tw
        .call(
            "page_click",
            json!({ "selector": "#color option[value='2']" }),
        )
        .await;
    assert_eq!(
        clicked.error_code(),
        "not_interactable",
        "{}",
        clicked.envelope
    );
    let legacy = clicked.reported();
    assert!(
        legacy["next_action"]
            .as_str()
            .unwrap()
            .contains("page_select"),
        "{legacy}"
    );
    assert!(heard(&tw).await.is_empty());
}

#[tokio::test]
async fn options_are_chosen_inside_same_origin_and_out_of_process_frames() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("select-frames").await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("selects-framed.html") }),
    )
    .await;
    tw.ok(
        "wait_for",
        json!({ "selector": { "frame": ["#cross"], "css": "#city" } }),
    )
    .await;
    for frame in ["#same", "#cross"] {
        let native = select(
            &tw,
            json!({ "frame": [frame], "css": "#color" }),
            json!("Blue"),
        )
        .await;
        assert_eq!(native["selected"], json!(["Blue"]), "{frame}: {native}");
        let combo = select(
            &tw,
            json!({ "frame": [frame], "label": "City" }),
            json!("Lima"),
        )
        .await;
        assert_eq!(combo["selected"], json!(["Lima"]), "{frame}: {combo}");
        // The frame's own log heard the change and the trusted clicks.
        let inner = tw
            .ok("scan_page", json!({ "frame": [frame], "text_only": true }))
            .await;
        let text = inner["content"].as_str().unwrap_or_default();
        for line in [
            "change color=3",
            "city opened trusted=true",
            "city chose Lima trusted=true",
        ] {
            assert!(text.contains(line), "{frame}: no {line:?} in {text}");
        }
    }
}
