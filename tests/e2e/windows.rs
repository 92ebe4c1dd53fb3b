//! tabwire built for Windows, driven under Wine (scripts/test-windows.sh builds it and
//! runs these; they are ignored otherwise). The Windows binary speaks MCP over stdio,
//! drives a Linux Chromium through `--cdp-endpoint`, shares one browser between two
//! clients through the broker's named pipe, registers its native host in Wine's
//! registry, keeps every write inside the output dir on Windows paths, and cancels a
//! real file dialog of a stand-in browser.
//!
//! What Wine cannot show (a real Windows Chrome launched over its pipe, the extension
//! link in a real Windows browser) is said in the README as untested.

use std::path::Path;

use serde_json::json;

use crate::support::{
    DebuggingBrowser, REPORT, Site, Tabwire, Wine, chrome_call, scratch, win_path,
};

/// The tool names a server lists.
async fn tool_names(tw: &Tabwire) -> Vec<String> {
    let tools = tw.client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn the_windows_build_lists_the_same_tools_as_the_linux_one() {
    let wine = Wine::get();
    for face in ["btap", "chrome", "btap,chrome"] {
        let windows = wine
            .stdio(
                scratch(&format!("wine-tools-{face}")),
                &["--isolated", "--face", face],
            )
            .await;
        let linux = Tabwire::stdio_with(&format!("linux-tools-{face}"), &["--face", face]).await;
        let (on_windows, on_linux) = (tool_names(&windows).await, tool_names(&linux).await);
        assert!(on_windows.len() > 20, "{face}: {on_windows:?}");
        assert_eq!(on_windows, on_linux, "{face}");
    }
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn a_page_is_read_typed_clicked_captured_and_downloaded_over_a_cdp_endpoint() {
    let wine = Wine::get();
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("wine-btap").await;
    let tw = wine
        .stdio(scratch("wine-btap"), &["--cdp-endpoint", &browser.http])
        .await;
    let opened = tw
        .ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    assert_eq!(opened["title"], "Form");
    let scan = tw.ok("scan_page", json!({})).await;
    assert!(scan.to_string().contains("Create account"), "{scan}");
    tw.ok(
        "page_type",
        json!({ "selector": { "label": "Full name" }, "text": "Ada Lovelace" }),
    )
    .await;
    tw.ok(
        "page_click",
        json!({ "selector": { "role": "button", "name": "Create account" } }),
    )
    .await;
    tw.ok(
        "wait_for",
        json!({ "js": "document.getElementById('result').textContent.includes('Ada Lovelace')", "timeout": 20 }),
    )
    .await;
    let shot = tw
        .call(
            "capture_page_screenshot",
            json!({ "save_path": "shots/form.png" }),
        )
        .await;
    assert_eq!(shot.images.len(), 1, "{}", shot.envelope);
    let png = std::fs::read(tw.output_dir.join("shots/form.png")).expect("screenshot saved");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // The reply names the file as Windows does.
    let data = shot.ok();
    let path = data["saved_path"].as_str().unwrap_or_default();
    assert!(
        path.starts_with("Z:\\") && path.ends_with("shots\\form.png"),
        "{data}"
    );
    let done = tw
        .ok("download_file", json!({ "url": site.url("report") }))
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        std::fs::read(tw.output_dir.join("downloads/report.csv")).expect("download landed"),
        REPORT.as_bytes()
    );
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn the_chrome_face_works_under_wine() {
    let wine = Wine::get();
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("wine-chrome").await;
    let tw = wine
        .stdio(
            scratch("wine-chrome"),
            &["--cdp-endpoint", &browser.http, "--face", "chrome"],
        )
        .await;
    tw.chrome_ok("chrome_navigate", json!({ "url": site.url("form.html") }))
        .await;
    let page = tw.chrome_ok("chrome_read_page", json!({})).await;
    assert!(page.to_string().contains("Create account"), "{page}");
    tw.chrome_ok(
        "chrome_fill_or_select",
        json!({ "selector": "#name", "value": "Grace Hopper" }),
    )
    .await;
    tw.chrome_ok(
        "chrome_click_element",
        json!({ "selector": "button[type=submit]" }),
    )
    .await;
    let result = chrome_call(
        &tw.client,
        "chrome_javascript",
        json!({ "code": "return document.getElementById('result').textContent" }),
    )
    .await;
    assert!(result.text.contains("Grace Hopper"), "{}", result.text);
    let shot = tw
        .chrome_ok(
            "chrome_screenshot",
            json!({ "name": "wine-shot", "savePng": true }),
        )
        .await;
    let saved = std::fs::read_dir(&tw.output_dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("wine-shot"));
    assert!(saved, "no screenshot under the output dir: {shot}");
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn two_windows_clients_share_one_browser_through_the_brokers_named_pipe() {
    let wine = Wine::get();
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("wine-broker").await;
    let work = scratch("wine-broker");
    let args = [
        "--cdp-endpoint",
        browser.http.as_str(),
        "--broker-grace",
        "0",
    ];
    // Clients of one browser agree on the engine's flags (the output dir among them).
    let first = wine.stdio(work.clone(), &args).await;
    let second = wine.stdio(work.clone(), &args).await;
    let opened = first
        .ok(
            "open_new_tab",
            json!({ "url": site.url("form.html"), "owner_id": "agent-a" }),
        )
        .await;
    let tab = opened["session_id"].as_str().unwrap().to_owned();
    // One broker decides for both: the second client sees the first's tab, and may not
    // close it as another owner.
    let all = second.ok("list_all_tabs", json!({})).await;
    assert!(all.to_string().contains("form.html"), "{all}");
    let refused = second
        .call(
            "close_tabs",
            json!({ "tab_id": tab, "owner_id": "agent-b" }),
        )
        .await;
    assert_eq!(refused.reason(), "not_owned", "{}", refused.envelope);
    let still = first.ok("list_tabs", json!({})).await;
    assert!(still.to_string().contains("form.html"), "{still}");
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn install_native_host_writes_the_registry_and_doctor_reads_it_back() {
    let wine = Wine::get();
    let said = wine.run(&["install-native-host"]).await;
    assert!(
        said.contains(r"HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.tabwire.link"),
        "{said}"
    );
    for vendor in [
        r"Google\Chrome",
        "Chromium",
        r"Microsoft\Edge",
        r"BraveSoftware\Brave-Browser",
    ] {
        let key = format!(r"HKCU\Software\{vendor}\NativeMessagingHosts\dev.tabwire.link");
        let output = Wine::command(Path::new("reg"))
            .args(["query", &key, "/ve"])
            .output()
            .await
            .expect("reg query");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(text.contains("dev.tabwire.link.json"), "{key}: {text}");
    }
    let doctor = wine.run(&["doctor"]).await;
    assert!(doctor.contains("ok   native host for Chrome"), "{doctor}");
    assert!(doctor.contains("ok   link pairing secret"), "{doctor}");
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn every_windows_path_that_leaves_the_output_dir_is_refused() {
    let wine = Wine::get();
    let site = Site::start().await;
    let browser = DebuggingBrowser::launch("wine-confine").await;
    let work = scratch("wine-confine");
    let outside = work.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(work.join("out")).unwrap();
    // A link planted in the output dir: Wine shows it as a plain folder.
    std::os::unix::fs::symlink(&outside, work.join("out").join("linked")).unwrap();
    let tw = wine
        .stdio(work.clone(), &["--cdp-endpoint", &browser.http])
        .await;
    tw.ok("open_url", json!({ "url": site.url("form.html") }))
        .await;
    for bad in [
        r"..\escape.png",
        r"shots\..\..\escape.png",
        r"C:\escape.png",
        r"C:escape.png",
        r"\escape.png",
        r"\\?\C:\escape.png",
        r"\\server\share\escape.png",
        "a.png:evil",
        "CON",
        "nul.png",
        r"shots\COM1.png",
        "escape.png.",
        r"linked\escape.png",
    ] {
        let reply = tw
            .call("capture_page_screenshot", json!({ "save_path": bad }))
            .await;
        assert!(reply.is_error, "{bad} was accepted: {}", reply.envelope);
    }
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "something landed outside"
    );
    assert!(!work.join("escape.png").exists());
    // The output dir named in another case is the same folder.
    let upper = win_path(&tw.output_dir).to_uppercase();
    let done = tw
        .ok(
            "download_file",
            json!({ "url": site.url("report"), "directory": upper }),
        )
        .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(tw.output_dir.join("report.csv").exists());
}

/// The desktop pair against a real GetOpenFileName dialog: a stand-in program named
/// chrome.exe, registered in App Paths as an installed Chrome is, whose window of
/// Chromium's class owns the dialog.
#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn the_desktop_pair_inspects_and_cancels_a_real_file_dialog() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let wine = Wine::get();
    let dialog_program = std::env::var_os("TABWIRE_WINE_DIALOG_EXE")
        .map(std::path::PathBuf::from)
        .expect("TABWIRE_WINE_DIALOG_EXE names the stand-in chrome.exe");
    let register = |value: Option<String>| {
        let key = r"HKCU\Software\Microsoft\Windows\CurrentVersion\App Paths\chrome.exe";
        let mut command = Wine::command(Path::new("reg"));
        match value {
            Some(path) => command.args(["add", key, "/ve", "/d", &path, "/f"]),
            None => command.args(["delete", key, "/f"]),
        };
        command
    };
    let browser = DebuggingBrowser::launch("wine-desktop").await;
    let tw = wine
        .stdio(scratch("wine-desktop"), &["--cdp-endpoint", &browser.http])
        .await;
    let nothing = tw
        .call(
            "inspect_native_file_dialog",
            json!({ "desktop_opt_in": true }),
        )
        .await;
    assert_eq!(
        nothing.envelope["legacy"]["code"], "native_dialog_not_foreground",
        "{}",
        nothing.envelope
    );

    let mut program = Wine::command(&dialog_program)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the dialog program");
    let mut lines = BufReader::new(program.stdout.take().unwrap()).lines();
    let open = tokio::time::timeout(crate::support::PATIENCE, lines.next_line())
        .await
        .expect("the dialog opened")
        .unwrap()
        .unwrap_or_default();
    assert!(open.starts_with("open "), "{open}");

    // Not registered: a portable copy is not an installed browser.
    register(None).output().await.expect("reg delete");
    let portable = tw
        .call(
            "inspect_native_file_dialog",
            json!({ "desktop_opt_in": true }),
        )
        .await;
    assert_eq!(
        portable.envelope["legacy"]["code"], "native_dialog_unverifiable",
        "{}",
        portable.envelope
    );

    register(Some(win_path(&dialog_program)))
        .output()
        .await
        .expect("reg add");
    let refused = tw.call("inspect_native_file_dialog", json!({})).await;
    assert_eq!(
        refused.envelope["legacy"]["code"],
        "desktop_opt_in_required"
    );
    let inspected = tw
        .ok(
            "inspect_native_file_dialog",
            json!({ "desktop_opt_in": true }),
        )
        .await;
    assert_eq!(inspected["status"], "inspected", "{inspected}");
    assert_eq!(inspected["desktop"]["browser"], "chrome");
    assert_eq!(inspected["dialog"]["title"], "Open");
    assert_eq!(inspected["dialog"]["file_name"], "report.csv");
    assert!(
        inspected["dialog"]["folder"]
            .as_str()
            .is_some_and(|f| f.to_lowercase().contains("windows")),
        "{inspected}"
    );
    let buttons = inspected["dialog"]["buttons"].to_string();
    assert!(
        buttons.contains("Cancel") && buttons.contains("Open"),
        "{buttons}"
    );
    let ticket = inspected["ticket"].as_str().unwrap().to_owned();

    let wrong = tw
        .call(
            "cancel_native_file_dialog",
            json!({ "ticket": "nope", "desktop_opt_in": true }),
        )
        .await;
    assert_eq!(
        wrong.envelope["legacy"]["code"],
        "native_dialog_ticket_invalid"
    );
    let cancelled = tw
        .ok(
            "cancel_native_file_dialog",
            json!({ "ticket": ticket, "desktop_opt_in": true }),
        )
        .await;
    assert_eq!(cancelled["status"], "success", "{cancelled}");
    assert_eq!(cancelled["cancelled"], true);
    // What the program saw: the user's Cancel.
    let ended = tokio::time::timeout(crate::support::PATIENCE, lines.next_line())
        .await
        .expect("the dialog program ended")
        .unwrap()
        .unwrap_or_default();
    assert_eq!(ended, "cancelled");
    let used = tw
        .call(
            "cancel_native_file_dialog",
            json!({ "ticket": ticket, "desktop_opt_in": true }),
        )
        .await;
    assert_eq!(
        used.envelope["legacy"]["code"],
        "native_dialog_ticket_invalid"
    );
    let _ = program.wait().await;
    register(None).output().await.expect("reg delete");
}

#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn doctor_finds_a_browser_where_windows_installs_them() {
    let wine = Wine::get();
    // Wine sets %ProgramFiles% itself, so the install goes where it points: the prefix's
    // own Program Files (taken away again at the end).
    let prefix = std::env::var_os("WINEPREFIX")
        .map(std::path::PathBuf::from)
        .expect("WINEPREFIX");
    let install = prefix.join("drive_c/Program Files/BraveSoftware/Brave-Browser/Application");
    std::fs::create_dir_all(&install).unwrap();
    std::fs::copy(&wine.exe, install.join("brave.exe")).unwrap();
    let said = wine.run(&["doctor"]).await;
    let _ = std::fs::remove_dir_all(prefix.join("drive_c/Program Files/BraveSoftware"));
    assert!(
        said.contains(r"Program Files\BraveSoftware\Brave-Browser\Application\brave.exe"),
        "{said}"
    );
    // And a browser only App Paths knows of (no other registered before it).
    for other in ["chrome.exe", "brave.exe"] {
        let key = format!(r"HKCU\Software\Microsoft\Windows\CurrentVersion\App Paths\{other}");
        let _ = Wine::command(Path::new("reg"))
            .args(["delete", &key, "/f"])
            .output()
            .await;
    }
    let elsewhere = scratch("wine-app-paths").join("msedge.exe");
    std::fs::copy(&wine.exe, &elsewhere).unwrap();
    let key = r"HKCU\Software\Microsoft\Windows\CurrentVersion\App Paths\msedge.exe";
    let added = Wine::command(Path::new("reg"))
        .args(["add", key, "/ve", "/d", &win_path(&elsewhere), "/f"])
        .output()
        .await
        .expect("reg add");
    assert!(added.status.success());
    let said = wine.run(&["doctor"]).await;
    let _ = Wine::command(Path::new("reg"))
        .args(["delete", key, "/f"])
        .output()
        .await;
    assert!(said.contains(&win_path(&elsewhere)), "{said}");
}

/// The extension link's Windows plumbing: the native host tabwire.exe (as Chrome starts
/// it, with the extension's origin) reaches the engine's owner over its named pipe and
/// adds the pairing secret, and the engine takes the link. The "extension" here is the
/// test speaking native messaging and answering the few CDP commands a link starts with:
/// it proves the transport and the pairing on Windows, not a browser (no Windows browser
/// runs under Wine).
#[allow(deprecated)] // MCP logging (SEP-2577); tabwire still offers it
#[tokio::test]
#[ignore = "needs Wine and the Windows build: scripts/test-windows.sh"]
async fn the_native_host_links_a_browser_through_the_named_pipe_with_the_pairing_secret() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let wine = Wine::get();
    // Another extension's origin is refused before anything is relayed.
    let other = Wine::command(&wine.exe)
        .arg("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .expect("run the native host");
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("refusing native-messaging caller"));
    let tw = wine
        .stdio(
            scratch("wine-link"),
            &["--extension", "--broker-grace", "0"],
        )
        .await;
    tw.client
        .set_level(rmcp::model::SetLevelRequestParams::new(
            rmcp::model::LoggingLevel::Info,
        ))
        .await
        .expect("logging/setLevel");
    // The engine's owner (the broker) serves the link pipe once the client is up.
    let status = tw.ok("get_setup_status", json!({})).await;
    assert_eq!(status["linked_browsers"], json!([]), "{status}");

    let mut host = Wine::command(&wine.exe)
        .arg("chrome-extension://ppccifgifikdledggbjmlefilliimeen/")
        .arg("--parent-window=0")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the native host");
    let mut to_host = host.stdin.take().unwrap();
    let mut from_host = host.stdout.take().unwrap();
    let send = |message: serde_json::Value| {
        let bytes = message.to_string().into_bytes();
        let mut framed = (bytes.len() as u32).to_le_bytes().to_vec();
        framed.extend(bytes);
        framed
    };
    let hello = json!({ "tabwire_link": 1, "client_id": "wine-link", "browser": "chrome", "extension_version": "test" });
    to_host.write_all(&send(hello)).await.unwrap();
    // Answer what the engine asks until the test ends.
    let answering = tokio::spawn(async move {
        loop {
            let mut length = [0u8; 4];
            if from_host.read_exact(&mut length).await.is_err() {
                return;
            }
            let mut body = vec![0u8; u32::from_le_bytes(length) as usize];
            if from_host.read_exact(&mut body).await.is_err() {
                return;
            }
            let message: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let Some(id) = message["id"].as_u64() else {
                continue;
            };
            let result = match message["method"].as_str().unwrap_or_default() {
                "Target.getTargets" => json!({ "targetInfos": [] }),
                "Browser.getVersion" => json!({ "product": "Chrome/1.0 (stand-in)" }),
                _ => json!({}),
            };
            let mut reply = json!({ "id": id, "result": result });
            if let Some(session) = message.get("sessionId") {
                reply["sessionId"] = session.clone();
            }
            if to_host.write_all(&send(reply)).await.is_err() {
                return;
            }
        }
    });
    tw.client
        .service()
        .wait_for("the log of the link", |heard| {
            matches!(heard, crate::support::Heard::Log(log) if log.data["message"] == "browser linked")
        })
        .await;
    let linked = tw.ok("get_setup_status", json!({})).await;
    assert!(
        linked["linked_browsers"].to_string().contains("wine-link"),
        "{linked}"
    );
    answering.abort();
    let _ = host.kill().await;
}
