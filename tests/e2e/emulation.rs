//! `emulate`: each setting as the page observes it, each call the whole state, and an
//! emulation undone when the session that set it ends.

use serde_json::{Value, json};

use crate::support::{Site, Tabwire, poll_until, scratch};

async fn js(tw: &Tabwire, script: &str) -> Value {
    tw.ok("execute_js", json!({ "script": script, "timeout": 30 }))
        .await["js_return"]
        .clone()
}

/// What the page sees of its device, in one read.
const SEEN: &str = "({ width: innerWidth, screen: screen.width, ratio: devicePixelRatio, agent: navigator.userAgent, \
    touch: navigator.maxTouchPoints, dark: matchMedia('(prefers-color-scheme: dark)').matches, \
    light: matchMedia('(prefers-color-scheme: light)').matches })";

#[tokio::test]
async fn each_setting_is_what_the_page_sees_and_each_call_states_them_all() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("emulate").await;
    tw.ok("open_url", json!({ "url": site.url("device.html") }))
        .await;
    let plain = js(&tw, SEEN).await;
    assert_ne!(plain["width"], 390, "{plain}");

    let set = tw
        .ok(
            "emulate",
            json!({
                "viewport": "390x844x3,mobile,touch",
                "userAgent": "TabwireTest/1.0 (phone)",
                "colorScheme": "dark",
                "geolocation": "48.8584,2.2945",
                "extraHttpHeaders": { "X-Test": "emulated" },
            }),
        )
        .await;
    assert_eq!(set["emulation"]["viewport"]["width"], 390, "{set}");
    let seen = js(&tw, SEEN).await;
    assert_eq!(seen["width"], 390, "{seen}");
    assert_eq!(seen["screen"], 390, "{seen}");
    assert_eq!(seen["ratio"], 3, "{seen}");
    assert_eq!(seen["agent"], "TabwireTest/1.0 (phone)", "{seen}");
    assert_eq!(seen["touch"], 5, "{seen}");
    assert_eq!(seen["dark"], true, "{seen}");
    // The headers go with the page's own requests.
    let echoed = js(
        &tw,
        &format!(
            "fetch('{}').then(r => r.json()).then(j => j.x_test)",
            site.url("echo-request")
        ),
    )
    .await;
    assert_eq!(echoed, "emulated");
    // The position the page is told, once it may ask.
    tw.ok(
        "set_site_permission",
        json!({ "permission": "geolocation", "setting": "allow" }),
    )
    .await;
    let position = js(
        &tw,
        "new Promise(r => navigator.geolocation.getCurrentPosition(\
            p => r([p.coords.latitude, p.coords.longitude]), e => r(e.message)))",
    )
    .await;
    assert_eq!(position, json!([48.8584, 2.2945]));
    // It survives a navigation of the tab.
    tw.ok("open_url", json!({ "url": site.url("device.html?again") }))
        .await;
    assert_eq!(js(&tw, SEEN).await["width"], 390);

    let status = tw.ok("get_setup_status", json!({})).await;
    let listed = status["emulations"].as_array().expect("emulations");
    assert_eq!(listed.len(), 1, "{status}");
    assert!(
        listed[0]["summary"]
            .as_str()
            .unwrap()
            .contains("390x844x3,mobile,touch"),
        "{status}"
    );

    // The next call is the whole state: only the light scheme is left.
    tw.ok("emulate", json!({ "colorScheme": "light" })).await;
    let after = js(&tw, SEEN).await;
    assert_eq!(after["width"], plain["width"], "{after}");
    assert_eq!(after["agent"], plain["agent"], "{after}");
    assert_eq!(after["light"], true, "{after}");
    assert_eq!(after["touch"], plain["touch"], "{after}");
    tw.ok("emulate", json!({})).await;
    let cleared = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(cleared["emulations"], json!([]), "{cleared}");
    assert_eq!(js(&tw, SEEN).await, plain);
}

#[tokio::test]
async fn a_bad_setting_is_named_and_nothing_changes() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("emulate-bad").await;
    tw.ok("open_url", json!({ "url": site.url("device.html") }))
        .await;
    let before = js(&tw, SEEN).await;
    for (args, param) in [
        (json!({ "viewport": "wide" }), "viewport"),
        (json!({ "viewport": "390x844x3,tablet" }), "viewport"),
        (json!({ "geolocation": "91,0" }), "geolocation"),
        (json!({ "networkConditions": "5G" }), "networkConditions"),
        (json!({ "cpuThrottlingRate": 50 }), "cpuThrottlingRate"),
        (
            json!({ "extraHttpHeaders": { "X-Test": 1 } }),
            "extraHttpHeaders",
        ),
    ] {
        let reply = tw.call("emulate", args.clone()).await;
        assert_eq!(reply.error_code(), "invalid_request", "{args}");
        assert!(
            reply.envelope.to_string().contains(param),
            "{args}: {}",
            reply.envelope
        );
    }
    assert_eq!(js(&tw, SEEN).await, before);
}

/// Milliseconds the page takes to fetch a small resource, by its own clock.
async fn fetch_ms(tw: &Tabwire, url: &str) -> Value {
    js(
        tw,
        &format!(
            "(async () => {{ const t = performance.now(); \
                try {{ await (await fetch('{url}', {{ cache: 'no-store' }})).text(); }} \
                catch (e) {{ return 'failed: ' + e.message; }} \
                return performance.now() - t; }})()"
        ),
    )
    .await
}

#[tokio::test]
async fn network_presets_and_cpu_throttling_slow_the_page() {
    let site = Site::start().await;
    let tw = Tabwire::stdio("emulate-throttle").await;
    tw.ok("open_url", json!({ "url": site.url("device.html") }))
        .await;
    let url = site.url("json");
    let plain = fetch_ms(&tw, &url).await.as_f64().expect("a plain fetch");

    tw.ok("emulate", json!({ "networkConditions": "Slow 3G" }))
        .await;
    let slow = fetch_ms(&tw, &url).await.as_f64().expect("a slow fetch");
    // Slow 3G adds 2 s of latency to a request: a floor, however loaded the machine.
    assert!(
        slow >= 1900.0,
        "Slow 3G fetch took {slow} ms (plain {plain} ms)"
    );
    eprintln!(
        "fetch: plain {plain:.0} ms, Slow 3G {slow:.0} ms ({:.1}x)",
        slow / plain
    );

    tw.ok("emulate", json!({ "networkConditions": "Offline" }))
        .await;
    let offline = fetch_ms(&tw, &url).await;
    assert!(
        offline.as_str().is_some_and(|s| s.starts_with("failed")),
        "{offline}"
    );

    tw.ok("emulate", json!({})).await;
    assert!(fetch_ms(&tw, &url).await.is_number());

    // The CPU: one loop timed plain and twenty times slower, in turns, the fastest of
    // each kept. Other work on the machine slows a run too, so turns and minimums keep a
    // busy moment from looking like (or hiding) the throttling, and the ratio held is
    // far below the rate. The loop runs tens of milliseconds: the browser throttles in
    // slices of time, and a loop shorter than one can slip through unthrottled.
    let spin = "(() => { const t = performance.now(); let x = 0; \
        for (let i = 0; i < 2e7; i++) x += Math.sqrt(i); return performance.now() - t; })()";
    let (mut fast, mut throttled) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..2 {
        tw.ok("emulate", json!({})).await;
        fast = fast.min(js(&tw, spin).await.as_f64().unwrap());
        tw.ok("emulate", json!({ "cpuThrottlingRate": 20 })).await;
        throttled = throttled.min(js(&tw, spin).await.as_f64().unwrap());
    }
    eprintln!(
        "loop: plain {fast:.1} ms, CPU x20 {throttled:.1} ms ({:.1}x)",
        throttled / fast
    );
    assert!(
        throttled >= 2.0 * fast,
        "plain {fast} ms, throttled {throttled} ms"
    );
}

#[tokio::test]
async fn an_ended_sessions_emulation_is_undone_for_the_next_agent() {
    let site = Site::start().await;
    let work = scratch("emulate-ends");
    let args = [
        "--user-data-dir".to_owned(),
        work.join("profile").display().to_string(),
        "--output-dir".to_owned(),
        work.join("out").display().to_string(),
        "--broker-grace".to_owned(),
        "5".to_owned(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let a = Tabwire::stdio_in(work.clone(), &args).await;
    let b = Tabwire::stdio_in(work.clone(), &args).await;
    a.ok("open_url", json!({ "url": site.url("device.html") }))
        .await;
    let plain = js(&a, "innerWidth").await;
    let set = a
        .call("emulate", json!({ "viewport": "400x700x2,mobile" }))
        .await;
    let tab = set.envelope["target"]["session_id"].clone();
    set.ok();
    let script = json!({ "script": "innerWidth", "session_id": tab });
    let width = b.ok("execute_js", script.clone()).await["js_return"].clone();
    assert_eq!(width, 400, "another agent sees the emulated tab as it is");
    let listed = b.ok("get_setup_status", json!({})).await["emulations"].clone();
    assert_eq!(listed[0]["set_by_this_session"], false, "{listed}");

    drop(a);
    poll_until("the ended session's emulation to be undone", || async {
        b.ok("get_setup_status", json!({})).await["emulations"] == json!([])
    })
    .await;
    assert_eq!(b.ok("execute_js", script).await["js_return"], plain);
}
