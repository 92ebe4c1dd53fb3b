//! Performance traces: recorded, saved as trace-event JSON, and read into insights that
//! match what the page's own `PerformanceObserver` reported, naming the causes the test
//! page planted (a slow document, a blocking script, a late hero image, a late banner,
//! a long task, a third party's script).

use serde_json::{Value, json};

use crate::support::{Site, Tabwire, poll_until};

/// `a` within `percent` of `b`.
fn close(a: f64, b: f64, percent: f64) -> bool {
    (a - b).abs() <= b.abs() * percent / 100.0
}

/// The planted page, its document answered 300 ms late.
fn slow_page(site: &Site) -> String {
    site.url("slow/300/page.html")
}

#[tokio::test]
async fn a_trace_is_saved_and_its_insights_match_the_pages_own_figures() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("trace").await;
    tw.ok("open_url", json!({ "url": slow_page(&site) })).await;
    // A tab in the background paints nothing, so nothing in it shifts: bring it forward.
    tw.ok("activate_tab", json!({})).await;
    tw.ok("performance_trace_start", json!({ "reload": true }))
        .await;
    // The load is over once the page has seen its hero painted and the banner's shift
    // (what is painted after the load event may come a frame later).
    tw.ok(
        "wait_for",
        json!({ "js": "observed.lcpElement === 'hero' && observed.cls > 0", "timeout": 30 }),
    )
    .await;
    // A slow interaction while tracing.
    tw.ok("page_click", json!({ "selector": "#slow" })).await;
    tw.ok("wait_for", json!({ "text": "Clicked true" })).await;
    // An interaction is reported once its frame is painted: wait for the page to see it.
    tw.ok(
        "wait_for",
        json!({ "js": "observed.inp > 0", "timeout": 30 }),
    )
    .await;
    let stopped = tw.ok("performance_trace_stop", json!({})).await;

    // The saved trace is trace-event JSON with the events DevTools reads.
    let path = stopped["saved_path"].as_str().expect("saved_path");
    assert!(path.ends_with(".json") && path.contains("traces"), "{path}");
    let trace: Value =
        serde_json::from_slice(&std::fs::read(path).expect("trace file")).expect("JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    assert_eq!(
        events.len() as u64,
        stopped["event_count"].as_u64().unwrap()
    );
    for name in [
        "navigationStart",
        "largestContentfulPaint::Candidate",
        "LayoutShift",
        "RunTask",
    ] {
        assert!(events.iter().any(|e| e["name"] == name), "no {name} event");
    }
    assert!(
        events
            .iter()
            .all(|e| e["ph"].is_string() && e["pid"].is_number())
    );

    // The page's own figures for the same load.
    let observed = tw.ok("execute_js", json!({ "script": "observed" })).await["js_return"].clone();
    let sets = stopped["insight_sets"].as_array().expect("insight_sets");
    assert_eq!(sets.len(), 1, "one navigation: {stopped}");
    let set = &sets[0];
    let lcp = set["lcp"]["time_ms"].as_f64().expect("an LCP");
    let page_lcp = observed["lcp"].as_f64().unwrap();
    eprintln!("LCP: trace {lcp} ms, PerformanceObserver {page_lcp} ms");
    assert!(
        close(lcp, page_lcp, 5.0),
        "LCP {lcp} vs the page's {page_lcp}"
    );
    assert!(lcp >= 900.0, "the hero arrives 900 ms late: {lcp}");
    assert_eq!(observed["lcpElement"], "hero");
    assert_eq!(set["lcp"]["element"], "img#hero", "{set}");
    let parts = &set["lcp"]["parts"];
    let sum: f64 = [
        "time_to_first_byte_ms",
        "load_delay_ms",
        "load_duration_ms",
        "render_delay_ms",
    ]
    .iter()
    .map(|k| parts[*k].as_f64().unwrap())
    .sum();
    assert!(
        close(sum, lcp, 1.0),
        "the parts {parts} add up to {sum}, not {lcp}"
    );
    assert!(
        parts["load_duration_ms"].as_f64().unwrap() >= 800.0,
        "{parts}"
    );

    let cls = set["cls"]["score"].as_f64().unwrap();
    let page_cls = observed["cls"].as_f64().unwrap();
    eprintln!("CLS: trace {cls}, PerformanceObserver {page_cls}");
    assert!(
        page_cls > 0.0 && close(cls, page_cls, 5.0),
        "CLS {cls} vs the page's {page_cls}"
    );
    // The planted cause: the banner a script put above the content once the image came.
    let shifts = set["cls"]["shifts"].to_string();
    assert!(shifts.contains("div#banner (inserted by"), "{shifts}");

    let inp = set["inp"]["duration_ms"].as_f64().expect("an INP");
    let page_inp = observed["inp"].as_f64().unwrap();
    eprintln!("INP: trace {inp} ms, PerformanceObserver {page_inp} ms");
    // The page is told durations rounded to 8 ms.
    assert!(
        inp >= 150.0 && (inp - page_inp).abs() <= 8.0,
        "INP {inp} vs the page's {page_inp}"
    );

    let document = &set["document"];
    assert!(
        document["server_response_ms"].as_f64().unwrap() >= 290.0,
        "{document}"
    );
    assert!(
        set["render_blocking"].to_string().contains("blocking.js"),
        "{}",
        set["render_blocking"]
    );
    let tasks = set["long_tasks"].as_array().unwrap();
    assert!(
        tasks
            .iter()
            .any(|t| t["duration_ms"].as_f64().unwrap() >= 240.0),
        "{tasks:?}"
    );
    assert!(
        set["total_blocking_time_ms"].as_f64().unwrap() >= 190.0,
        "{set}"
    );
    let third = set["third_parties"].as_array().unwrap();
    assert!(
        third
            .iter()
            .any(|p| p["domain"] == "localhost" && p["main_thread_ms"].as_f64().unwrap() >= 100.0),
        "{third:?}"
    );
    assert!(
        stopped["dom"]["elements"].as_u64().unwrap() >= 8,
        "{stopped}"
    );

    // Each insight as a report, by DevTools' names, for this insight set.
    let id = set["id"].as_str().unwrap();
    for (name, says) in [
        ("LCPBreakdown", "img#hero"),
        ("CLSCulprits", "caused by div#banner"),
        ("RenderBlocking", "blocking.js"),
        ("DocumentLatency", "the server took"),
        ("LongTasks", "Total blocking time"),
        ("ThirdParties", "localhost"),
        ("DOMSize", "elements"),
        ("INPBreakdown", "click"),
    ] {
        let insight = tw
            .ok(
                "performance_trace_insight",
                json!({ "insightName": name, "insightSetId": id }),
            )
            .await;
        let report = insight["report"].as_str().unwrap();
        eprintln!("{name}:\n{report}");
        assert!(report.contains(says), "{name}: {report}");
    }
    let unknown = tw
        .call(
            "performance_trace_insight",
            json!({ "insightName": "Vibes" }),
        )
        .await;
    assert_eq!(unknown.error_code(), "invalid_request");
    let wrong_set = tw
        .call(
            "performance_trace_insight",
            json!({ "insightName": "LCPBreakdown", "insightSetId": "nope" }),
        )
        .await;
    assert_eq!(wrong_set.error_code(), "invalid_request");
}

#[tokio::test]
async fn the_chrome_face_names_them_as_the_original_and_saves_the_trace() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("trace-chrome", &["--face", "chrome"]).await;
    let opened = tw
        .chrome_ok("chrome_navigate", json!({ "url": slow_page(&site) }))
        .await;
    // A tab in the background paints nothing: bring it forward.
    let tab = opened["tabId"]
        .as_u64()
        .or(opened["tabs"][0]["tabId"].as_u64());
    tw.chrome_ok("chrome_switch_tab", json!({ "tabId": tab }))
        .await;
    let never = tw.chrome("performance_stop_trace", json!({})).await;
    assert!(never.is_error, "a stop without a start: {}", never.text);
    let started = tw
        .chrome_ok("performance_start_trace", json!({ "reload": true }))
        .await;
    assert_eq!(started["success"], true);
    let again = tw.chrome("performance_start_trace", json!({})).await;
    assert!(again.is_error, "one trace a tab: {}", again.text);
    poll_until("the hero to be painted", || async {
        tw.chrome_ok(
            "chrome_javascript",
            json!({ "code": "return String(observed.lcpElement === 'hero' && observed.cls > 0)" }),
        )
        .await["result"]
            == "true"
    })
    .await;
    let stopped = tw
        .chrome_ok(
            "performance_stop_trace",
            json!({ "filenamePrefix": "checkout" }),
        )
        .await;
    let full_path = stopped["saved"]["fullPath"].as_str().expect("fullPath");
    assert_eq!(stopped["fullPath"], full_path);
    assert!(full_path.contains("checkout_"), "{full_path}");
    assert!(std::path::Path::new(full_path).is_file());
    assert!(
        stopped["metrics"]["lcpMs"].as_f64().unwrap() >= 900.0,
        "{stopped}"
    );
    let id = stopped["insightSets"][0]["insightSetId"]
        .as_str()
        .unwrap()
        .to_owned();
    let analyzed = tw
        .chrome_ok(
            "performance_analyze_insight",
            json!({ "insightName": "LCPBreakdown", "insightSetId": id }),
        )
        .await;
    assert!(
        analyzed["insight"].as_str().unwrap().contains("img#hero"),
        "{analyzed}"
    );
    let summary = tw.chrome_ok("performance_analyze_insight", json!({})).await;
    assert!(
        summary["summary"].as_str().unwrap().contains("LCP"),
        "{summary}"
    );
}

/// A trace of an interaction on a page already loaded (no reload): one insight set with
/// no navigation, its INP the page's own; and `autoStop` records for `durationMs` and
/// saves in the same call.
#[tokio::test]
async fn an_interaction_is_traced_without_a_reload_and_auto_stop_saves_by_itself() {
    let site = Site::start().await;
    let tw = Tabwire::on_link("trace-interaction", &["--face", "chrome"]).await;
    tw.chrome_ok("chrome_navigate", json!({ "url": slow_page(&site) }))
        .await;
    poll_until("the page to have loaded and settled", || async {
        tw.chrome_ok(
            "chrome_javascript",
            json!({ "code": "return String(window.longTaskRan === true)" }),
        )
        .await["result"]
            == "true"
    })
    .await;
    tw.chrome_ok("performance_start_trace", json!({})).await;
    tw.chrome_ok("chrome_click_element", json!({ "selector": "#slow" }))
        .await;
    poll_until("the page to see its interaction", || async {
        tw.chrome_ok(
            "chrome_javascript",
            json!({ "code": "return String(observed.inp > 0)" }),
        )
        .await["result"]
            == "true"
    })
    .await;
    let stopped = tw.chrome_ok("performance_stop_trace", json!({})).await;
    let sets = stopped["insightSets"].as_array().expect("insightSets");
    assert_eq!(sets.len(), 1, "{stopped}");
    assert_eq!(sets[0]["insightSetId"], "NO_NAVIGATION", "{stopped}");
    let inp = stopped["metrics"]["inpMs"].as_f64().expect("an INP");
    let page_inp = tw
        .chrome_ok(
            "chrome_javascript",
            json!({ "code": "return String(observed.inp)" }),
        )
        .await["result"]
        .as_str()
        .and_then(|v| v.parse::<f64>().ok())
        .expect("the page's INP");
    eprintln!("INP without a reload: trace {inp} ms, PerformanceObserver {page_inp} ms");
    assert!(
        inp >= 150.0 && (inp - page_inp).abs() <= 8.0,
        "INP {inp} vs the page's {page_inp}"
    );
    // No navigation, so no LCP to report.
    assert!(stopped["metrics"]["lcpMs"].is_null(), "{stopped}");

    let auto = tw
        .chrome_ok(
            "performance_start_trace",
            json!({ "autoStop": true, "durationMs": 500 }),
        )
        .await;
    assert_eq!(auto["autoStop"], true, "{auto}");
    let path = auto["fullPath"].as_str().expect("fullPath");
    let trace: Value =
        serde_json::from_slice(&std::fs::read(path).expect("the trace")).expect("JSON");
    assert!(!trace["traceEvents"].as_array().unwrap().is_empty());
    // It is over: a stop now has nothing to stop.
    let after = tw.chrome("performance_stop_trace", json!({})).await;
    assert!(after.is_error, "{}", after.text);
}
