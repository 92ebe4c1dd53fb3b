//! Fuzzing through the real server, bounded for CI: random tool calls built from each
//! tool's own input schema, and malformed JSON-RPC over stdio and HTTP. Whatever comes
//! in, every call is answered with the face's envelope, bad frames get a JSON-RPC error
//! or are dropped, and the server keeps serving.
//!
//! A CI run makes `TABWIRE_FUZZ_CALLS` (default 250) random calls and sends
//! `TABWIRE_FUZZ_FRAMES` (default 400) malformed frames over each transport, from
//! `TABWIRE_FUZZ_SEED`. A long campaign: `TABWIRE_FUZZ_CALLS=20000
//! TABWIRE_FUZZ_FRAMES=20000 TABWIRE_FUZZ_SEED=$RANDOM cargo nextest run -p tabwire
//! --test e2e fuzz::`; a failure names the seed and the call that broke it.

use std::process::Stdio;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{BINARY, HttpServer, PATIENCE, Site, Tabwire, call_on, chrome_call, scratch};

/// Whether the chrome face declares this tool (the rest are btap's).
fn is_chrome_tool(name: &str) -> bool {
    mcp::faces::chrome::FACE
        .tools
        .iter()
        .any(|t| t.name == name)
}

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// xorshift64*: the same sequence for the same seed everywhere.
struct Rng(u64);

impl Rng {
    fn seeded() -> (Rng, u64) {
        let seed = setting("TABWIRE_FUZZ_SEED", 0x5eed_cafe);
        (Rng(seed | 1), seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const STRINGS: &[&str] = &[
    "",
    "#email",
    "button",
    "[[[",
    "Create account",
    "managed:1",
    "about:blank",
    "file:///etc/passwd",
    "chrome://version",
    "javascript:alert(1)",
    "data:text/html,<b>hi</b>",
    "../../etc/passwd",
    "1 + 1",
    "throw new Error('x')",
    "💥\u{202e}\u{0}",
    "op-0-1",
];

fn any_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth == 0 { 4 } else { 6 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(*rng.pick(&[0i64, -1, 1, 3, 99_999, i64::MAX])),
        3 => json!(*rng.pick(STRINGS)),
        4 => Value::Array(
            (0..rng.below(4))
                .map(|_| any_value(rng, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..rng.below(4))
                .map(|_| (rng.pick(STRINGS).to_string(), any_value(rng, depth - 1)))
                .collect(),
        ),
    }
}

/// A parameter that bounds how long a call may wait.
fn is_deadline(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "timeout",
        "seconds",
        "_ms",
        "duration",
        "maxcapturetime",
        "delay",
    ]
    .iter()
    .any(|part| name.contains(part))
}

/// A value for one property of a tool's input schema: mostly of its declared type (and
/// from its enum), sometimes anything. Deadlines stay short so the run stays bounded.
fn value_for(rng: &mut Rng, name: &str, schema: &Value) -> Value {
    if is_deadline(name) {
        // Seconds for some tools, milliseconds for others: small either way.
        return json!(*rng.pick(&[0.0, 0.1, 0.3, -1.0, 50.0]));
    }
    if rng.below(4) == 0 {
        return any_value(rng, 2);
    }
    if let Some(options) = schema["enum"].as_array() {
        return rng.pick(options).clone();
    }
    let kind = match &schema["type"] {
        Value::String(kind) => kind.clone(),
        Value::Array(kinds) => rng.pick(kinds).as_str().unwrap_or("string").to_owned(),
        _ => "any".to_owned(),
    };
    match kind.as_str() {
        "string" => json!(*rng.pick(STRINGS)),
        "boolean" => json!(rng.below(2) == 0),
        "integer" => json!(*rng.pick(&[0, 1, 2, -1, 40])),
        "number" => json!(*rng.pick(&[0.0, 0.5, 10.0, -3.0])),
        "array" => json!([any_value(rng, 1)]),
        "object" => any_value(rng, 2),
        _ => any_value(rng, 2),
    }
}

#[tokio::test]
async fn random_tool_calls_are_all_answered_and_the_server_keeps_serving() {
    let site = Site::start().await;
    // Both faces at once: every tool of each gets random calls.
    let tw = Tabwire::stdio_with("fuzz-calls", &["--face", "btap,chrome"]).await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let tools = tw.client.list_all_tools().await.expect("tools/list");
    let (mut rng, seed) = Rng::seeded();
    let calls = setting("TABWIRE_FUZZ_CALLS", 250);
    let mut succeeded = 0;
    for case in 0..calls {
        let tool = rng.pick(&tools);
        let mut args = Map::new();
        if let Some(properties) = tool
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
        {
            for (name, schema) in properties {
                // Deadlines are always given (short), so no call waits out a default.
                if rng.below(3) != 0 || is_deadline(name) {
                    args.insert(name.clone(), value_for(&mut rng, name, schema));
                }
            }
        }
        // The site's pages, now and then, so the calls act on something real.
        if args.contains_key("url") && rng.below(2) == 0 {
            args.insert("url".into(), json!(site.url("form.html")));
        }
        eprintln!(
            "seed {seed} case {case}: {} {}",
            tool.name,
            Value::Object(args.clone())
        );
        // Each face's reader checks the reply is that face's (the btap envelope named
        // after the tool; the chrome face's JSON text or plain error, never base64 text).
        let ok = if is_chrome_tool(&tool.name) {
            !chrome_call(&tw.client, &tool.name, Value::Object(args))
                .await
                .is_error
        } else {
            call_on(&tw.client, &tool.name, Value::Object(args))
                .await
                .envelope["ok"]
                == true
        };
        if ok {
            succeeded += 1;
        }
    }
    // The calls reached the browser, not only the parameter checks.
    eprintln!("{succeeded} of {calls} random calls succeeded");
    assert!(
        succeeded * 10 >= calls,
        "only {succeeded} of {calls} succeeded"
    );
    // Still serving, and still driving the browser, through both faces.
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    let read = tw.chrome_ok("chrome_read_page", json!({})).await;
    assert!(
        read["pageContent"].as_str().unwrap().contains("Email"),
        "{read}"
    );
    let scan = tw.ok("scan_page", json!({})).await;
    assert!(scan.to_string().contains("Email"), "{scan}");
}

/// Malformed and odd JSON-RPC frames.
fn bad_frame(rng: &mut Rng) -> String {
    let id = any_value(rng, 1);
    match rng.below(10) {
        0 => "{".repeat(rng.below(5000)),
        1 => "not json at all".to_owned(),
        2 => json!({ "jsonrpc": "1.0", "id": id, "method": "tools/list" }).to_string(),
        3 => json!({ "jsonrpc": "2.0", "id": id, "method": any_value(rng, 1) }).to_string(),
        4 => json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": any_value(rng, 2) }).to_string(),
        5 => json!({ "jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": { "name": rng.pick(STRINGS), "arguments": any_value(rng, 2) } }).to_string(),
        6 => json!({ "jsonrpc": "2.0", "id": 9, "result": any_value(rng, 1) }).to_string(),
        7 => json!([{ "jsonrpc": "2.0", "method": "notifications/initialized" }, any_value(rng, 1)]).to_string(),
        8 => json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": id } }).to_string(),
        _ => any_value(rng, 3).to_string(),
    }
}

/// Reads lines until the reply with `id`; what comes before it is passed over.
async fn reply_with_id(
    lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    id: &str,
) -> Value {
    let read = async {
        while let Some(line) = lines.next_line().await.expect("read stdout") {
            if let Ok(message) = serde_json::from_str::<Value>(&line)
                && message["id"] == id
            {
                return message;
            }
        }
        panic!("tabwire closed stdout before answering {id}");
    };
    tokio::time::timeout(PATIENCE, read)
        .await
        .unwrap_or_else(|_| panic!("no reply to {id} within {PATIENCE:?}"))
}

#[tokio::test]
async fn malformed_frames_over_stdio_never_stop_the_server() {
    let work = scratch("fuzz-stdio");
    let mut child = tokio::process::Command::new(BINARY)
        .args(["--isolated", "--output-dir"])
        .arg(work.join("out"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn tabwire");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let initialize = json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "fuzz", "version": "1" } } });
    stdin
        .write_all(format!("{initialize}\n").as_bytes())
        .await
        .unwrap();
    reply_with_id(&mut lines, "init").await;
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    let (mut rng, seed) = Rng::seeded();
    let frames = setting("TABWIRE_FUZZ_FRAMES", 400);
    for n in 0..frames {
        let frame = bad_frame(&mut rng);
        stdin.write_all(frame.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        // Every so often, a good request: it must be answered.
        if n % 50 == 49 {
            let probe = format!("probe-{n}");
            let ping = json!({ "jsonrpc": "2.0", "id": probe, "method": "ping" });
            stdin
                .write_all(format!("{ping}\n").as_bytes())
                .await
                .unwrap();
            let reply = reply_with_id(&mut lines, &probe).await;
            assert!(
                reply.get("result").is_some(),
                "seed {seed}, after frame {n}: {reply}"
            );
        }
    }
    let list = json!({ "jsonrpc": "2.0", "id": "last", "method": "tools/list" });
    stdin
        .write_all(format!("{list}\n").as_bytes())
        .await
        .unwrap();
    let reply = reply_with_id(&mut lines, "last").await;
    assert!(
        reply["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "seed {seed}: {reply}"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "seed {seed}: tabwire exited"
    );
}

#[tokio::test]
async fn malformed_bodies_over_http_get_client_errors_and_the_server_keeps_serving() {
    let server = HttpServer::start("fuzz-http", &[]).await;
    let http = reqwest::Client::new();
    let (mut rng, seed) = Rng::seeded();
    let frames = setting("TABWIRE_FUZZ_FRAMES", 400);
    for n in 0..frames {
        let body = bad_frame(&mut rng);
        let mut request = http
            .post(&server.url)
            .header(
                "content-type",
                *rng.pick(&[
                    "application/json",
                    "text/plain",
                    "application/json; charset=utf-8",
                ]),
            )
            .header("accept", "application/json, text/event-stream");
        if rng.below(3) == 0 {
            let session = *rng.pick(&["", "nope", "managed:1", "0123456789abcdef", "../x"]);
            request = request.header("mcp-session-id", session);
        }
        let response = tokio::time::timeout(PATIENCE, request.body(body.clone()).send())
            .await
            .unwrap_or_else(|_| panic!("seed {seed} frame {n}: no answer"))
            .expect("the server answers");
        assert!(
            !response.status().is_server_error(),
            "seed {seed} frame {n}: {} for {body:.200}",
            response.status()
        );
    }
    // A real client is served as if nothing happened.
    let client = server.client().await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(!tools.is_empty());
    let status = call_on(&client, "get_setup_status", json!({})).await.ok();
    assert_eq!(status["link"], "managed", "{status}");
}
