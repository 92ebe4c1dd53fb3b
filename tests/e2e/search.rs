//! Tab search (`search_tabs_content` in the chrome face, `search_tabs` in the btap face)
//! over real tabs: pages of known content are opened, and what an agent asks must find
//! the right tab first, whether it paraphrases, names an identifier or asks in another
//! language; a tab that navigates or closes stops matching what it no longer shows.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire};

async fn chrome(name: &str, extra: &[&str]) -> Tabwire {
    let mut args = vec!["--face", "chrome"];
    args.extend_from_slice(extra);
    Tabwire::on_link(name, &args).await
}

/// Opens each page of `tests/pages/search` in a tab of its own; their tab ids by page.
async fn open_pages(tw: &Tabwire, site: &Site, pages: &[&str]) -> Vec<(String, u64)> {
    let mut ids = Vec::new();
    for page in pages {
        let opened = tw
            .chrome_ok(
                "chrome_navigate",
                json!({ "url": site.url(&format!("search/{page}.html")) }),
            )
            .await;
        let id = opened["tabId"]
            .as_u64()
            .unwrap_or_else(|| panic!("no tabId in {opened}"));
        ids.push(((*page).to_owned(), id));
    }
    ids
}

async fn search(tw: &Tabwire, query: &str) -> Value {
    tw.chrome_ok("search_tabs_content", json!({ "query": query }))
        .await
}

fn first_url(found: &Value) -> &str {
    found["matchedTabs"][0]["url"].as_str().unwrap_or("")
}

#[tokio::test]
async fn paraphrases_identifiers_and_other_languages_find_their_tab_first() {
    let site = Site::start().await;
    let tw = chrome("search-basic", &[]).await;
    let ids = open_pages(
        &tw,
        &site,
        &["refunds", "volcano", "brot", "beijing", "garden"],
    )
    .await;

    let found = search(&tw, "how do I get my money back for something I bought").await;
    assert_eq!(found["success"], true);
    assert_eq!(found["vectorSearchEnabled"], true, "{found}");
    // The first search waited for every tab's outline to be read in context.
    assert_eq!(found["indexStats"]["passagesNotYetEmbedded"], 0, "{found}");
    assert!(found["totalTabsSearched"].as_u64().unwrap() >= 5, "{found}");
    assert!(found["indexStats"]["totalDocuments"].as_u64().unwrap() >= 10);
    let top = &found["matchedTabs"][0];
    assert!(first_url(&found).ends_with("refunds.html"), "{found}");
    assert_eq!(top["tabId"], ids[0].1);
    assert_eq!(top["title"], "Returns and refunds");
    for field in ["semanticScore", "timestamp"] {
        assert!(top[field].is_number(), "{field} in {top}");
    }
    let snippet = top["matchedSnippets"][0].as_str().unwrap();
    assert!(
        !snippet.is_empty() && snippet.chars().count() <= 201,
        "{snippet}"
    );

    // An exact identifier, with the passage that holds it.
    let found = search(&tw, "ORD-48213").await;
    assert!(first_url(&found).ends_with("refunds.html"), "{found}");
    let snippet = found["matchedTabs"][0]["matchedSnippets"][0]
        .as_str()
        .unwrap();
    assert!(snippet.contains("ORD-48213"), "{snippet}");

    // Meaning in words the page does not use, in its own language and in others (the
    // refunds page is English; the bread page German).
    for (query, page) in [
        ("molten rock erupting from a mountain", "volcano.html"),
        ("Wie backe ich Brot mit Sauerteig?", "brot.html"),
        ("vegetables in pots outside the flat", "garden.html"),
        ("中国首都的名胜古迹", "beijing.html"),
        (
            "wie bekomme ich mein Geld zurück, wenn mir der Kauf nicht gefällt",
            "refunds.html",
        ),
        ("买的东西不满意怎么退钱", "refunds.html"),
        (
            "cómo recupero mi dinero si devuelvo lo que compré",
            "refunds.html",
        ),
        ("baking a loaf from fermented dough", "brot.html"),
    ] {
        let found = search(&tw, query).await;
        assert!(first_url(&found).ends_with(page), "{query}: {found}");
    }

    // The filters: only the tabs named are searched.
    let only = tw
        .chrome_ok(
            "search_tabs_content",
            json!({ "query": "ORD-48213", "tabIds": [ids[1].1, ids[2].1] }),
        )
        .await;
    assert_eq!(only["totalTabsSearched"], 2, "{only}");
    assert!(
        only["matchedTabs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["tabId"] != ids[0].1),
        "{only}"
    );
    let one = tw
        .chrome_ok(
            "search_tabs_content",
            json!({ "query": "bread", "maxResults": 1 }),
        )
        .await;
    assert!(one["matchedTabs"].as_array().unwrap().len() <= 1);
}

#[tokio::test]
async fn a_tab_that_navigates_or_closes_stops_matching_what_it_no_longer_shows() {
    let site = Site::start().await;
    let tw = chrome("search-changes", &[]).await;
    let ids = open_pages(&tw, &site, &["refunds", "garden"]).await;
    let found = search(&tw, "ORD-48213").await;
    assert!(first_url(&found).ends_with("refunds.html"), "{found}");

    // The refunds tab goes elsewhere: its old text is no longer found, its new text is.
    tw.chrome_ok(
        "chrome_navigate",
        json!({ "url": site.url("search/volcano.html"), "tabId": ids[0].1 }),
    )
    .await;
    let found = search(&tw, "ORD-48213").await;
    assert!(
        found["matchedTabs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| !t["url"].as_str().unwrap().ends_with("refunds.html")),
        "{found}"
    );
    let found = search(&tw, "magma chamber").await;
    assert_eq!(found["matchedTabs"][0]["tabId"], ids[0].1, "{found}");

    // A closed tab is gone from the results.
    tw.chrome_ok("chrome_close_tabs", json!({ "tabIds": [ids[1].1] }))
        .await;
    let found = search(&tw, "tomatoes on a balcony").await;
    assert!(
        found["matchedTabs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["tabId"] != ids[1].1),
        "{found}"
    );
}

#[tokio::test]
async fn text_inside_a_frame_finds_the_tab_that_shows_it() {
    let site = Site::start().await;
    let tw = chrome("search-frames", &[]).await;
    let ids = open_pages(&tw, &site, &["framed", "garden"]).await;
    let found = search(&tw, "INV-20931").await;
    assert_eq!(found["matchedTabs"][0]["tabId"], ids[0].1, "{found}");
    let snippet = found["matchedTabs"][0]["matchedSnippets"][0]
        .as_str()
        .unwrap();
    assert!(snippet.contains("INV-20931"), "{snippet}");
}

#[tokio::test]
async fn a_tab_held_by_its_dialog_is_left_until_answered_and_the_others_are_searched() {
    let site = Site::start().await;
    let tw = chrome("search-dialog", &[]).await;
    let ids = open_pages(&tw, &site, &["garden", "refunds"]).await;
    // The chrome face leaves a dialog open for the agent; the page is blocked meanwhile.
    tw.chrome(
        "chrome_javascript",
        json!({ "code": "alert('hold on'); 1", "tabId": ids[1].1 }),
    )
    .await;
    let found = search(&tw, "tomatoes on a balcony").await;
    assert_eq!(found["matchedTabs"][0]["tabId"], ids[0].1, "{found}");
    // Answered, the page is read again and found.
    tw.chrome_ok(
        "chrome_handle_dialog",
        json!({ "action": "accept", "tabId": ids[1].1 }),
    )
    .await;
    let found = search(&tw, "ORD-48213").await;
    assert_eq!(found["matchedTabs"][0]["tabId"], ids[1].1, "{found}");
}

#[tokio::test]
async fn without_the_model_search_answers_by_words_and_says_why() {
    let site = Site::start().await;
    let tw = chrome("search-lexical", &["--embed-model", "off"]).await;
    open_pages(&tw, &site, &["refunds", "volcano"]).await;
    let found = search(&tw, "ORD-48213").await;
    assert_eq!(found["vectorSearchEnabled"], false, "{found}");
    assert_eq!(found["indexStats"]["semanticEngineReady"], false);
    assert!(
        found["indexStats"]["semanticEngineError"]
            .as_str()
            .unwrap()
            .contains("off"),
        "{found}"
    );
    assert!(first_url(&found).ends_with("refunds.html"), "{found}");
    let found = search(&tw, "lava and ash").await;
    assert!(first_url(&found).ends_with("volcano.html"), "{found}");
}

#[tokio::test]
async fn a_model_that_does_not_load_leaves_search_lexical_and_status_says_why() {
    let site = Site::start().await;
    let broken = crate::support::scratch("search-broken-model").join("model");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("weights.bin"), b"not a model").unwrap();
    std::fs::write(broken.join("vocab.tsv"), "a\t0\n").unwrap();
    std::fs::write(broken.join("normalize.tsv"), "").unwrap();
    let model = broken.display().to_string();
    let tw = Tabwire::on_link("search-broken", &["--embed-model", &model]).await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("search/refunds.html") }),
    )
    .await;
    let found = tw.ok("search_tabs", json!({ "query": "ORD-48213" })).await;
    assert_eq!(found["vector_search"], false, "{found}");
    assert!(
        found["vector_search_off"]
            .as_str()
            .unwrap()
            .contains("malformed"),
        "{found}"
    );
    assert_eq!(
        found["results"][0]["title"], "Returns and refunds",
        "{found}"
    );
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["tab_search"]["vector_search"], false, "{status}");
    assert!(status["tab_search"]["vector_search_off"].is_string());
}

#[tokio::test]
async fn the_btap_face_searches_the_same_index_in_its_envelope() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("search-btap").await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("search/refunds.html") }),
    )
    .await;
    let found = tw
        .ok(
            "search_tabs",
            json!({ "query": "send back an item and be reimbursed" }),
        )
        .await;
    assert_eq!(found["vector_search"], true, "{found}");
    let top = &found["results"][0];
    assert!(
        top["url"].as_str().unwrap().ends_with("refunds.html"),
        "{found}"
    );
    // Its handle works with the other tools.
    let handle = top["session_id"].as_str().unwrap();
    let title = tw
        .ok(
            "execute_js",
            json!({ "script": "document.title", "session_id": handle }),
        )
        .await;
    assert_eq!(title["js_return"], "Returns and refunds");
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["tab_search"]["vector_search"], true, "{status}");
    assert!(status["tab_search"]["indexed_tabs"].as_u64().unwrap() >= 1);
}

#[tokio::test]
async fn bad_queries_are_named_and_the_server_keeps_serving() {
    let tw = chrome("search-bad", &[]).await;
    for query in [json!(""), json!("   "), json!("x".repeat(5000))] {
        let reply = tw
            .chrome("search_tabs_content", json!({ "query": query }))
            .await;
        assert!(reply.is_error, "{query}: {}", reply.text);
        assert!(reply.text.contains("query"), "{}", reply.text);
    }
    let reply = tw.chrome("search_tabs_content", json!({})).await;
    assert!(
        reply.is_error && reply.text.contains("query"),
        "{}",
        reply.text
    );
    let reply = tw
        .chrome(
            "search_tabs_content",
            json!({ "query": "x", "maxResults": 0 }),
        )
        .await;
    assert!(
        reply.is_error && reply.text.contains("maxResults"),
        "{}",
        reply.text
    );
    // Still serving.
    let found = search(&tw, "anything at all").await;
    assert_eq!(found["success"], true);
}

#[tokio::test]
async fn with_tab_search_off_no_tab_is_read_and_the_tools_say_so() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("search-off", &["--no-tab-search"]).await;
    tw.ok(
        "open_url",
        json!({ "url": site.url("search/refunds.html") }),
    )
    .await;
    let refused = tw
        .call("search_tabs", json!({ "query": "ORD-48213" }))
        .await
        .err();
    assert!(refused.to_string().contains("--no-tab-search"), "{refused}");
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["tab_search"]["enabled"], false, "{status}");
    assert_eq!(status["tab_search"]["tabs_read"], 0, "{status}");
}

#[test]
fn doctor_says_whether_tab_search_reads_meaning_and_why_not() {
    let out = crate::support::scratch("search-doctor");
    let doctor = |flags: &[&str]| {
        let output = std::process::Command::new(crate::support::BINARY)
            .args(["--output-dir", out.to_str().unwrap()])
            .args(flags)
            .arg("doctor")
            .output()
            .expect("run tabwire doctor");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let shipped = doctor(&[]);
    assert!(
        shipped.contains("ok   tab search: by words and by meaning"),
        "{shipped}"
    );
    let off = doctor(&["--embed-model", "off"]);
    assert!(
        off.contains("tab search: by words only") && off.contains("--embed-model off"),
        "{off}"
    );
    let none = doctor(&["--no-tab-search"]);
    assert!(none.contains("tab search: off (--no-tab-search)"), "{none}");
}
