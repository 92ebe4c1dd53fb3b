//! `tabwire doctor`: what is found, what is missing, and the exact fix.

use crate::ServeArgs;

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let mut problems = 0;
    println!("tabwire {}", env!("CARGO_PKG_VERSION"));
    match mcp::faces::by_names(&args.face) {
        Ok(faces) => {
            let named: Vec<String> = faces
                .iter()
                .map(|f| {
                    format!(
                        "{} ({} tools)",
                        f.name,
                        f.tools.iter().filter(|t| t.listed).count()
                    )
                })
                .collect();
            println!("ok   faces: {} (--face / TABWIRE_FACE)", named.join(", "));
            match mcp::ToolSet::parse(&args.tools, &faces) {
                Ok(tools) => {
                    let served: usize = faces
                        .iter()
                        .map(|f| {
                            f.tools
                                .iter()
                                .filter(|t| t.listed && tools.serves(f, t))
                                .count()
                        })
                        .sum();
                    println!(
                        "ok   tools: {} ({served} listed; --tools / TABWIRE_TOOLS: all, core or names)",
                        tools.spelling()
                    );
                }
                Err(error) => {
                    problems += 1;
                    println!("BAD  tools: {error}");
                }
            }
        }
        Err(error) => {
            problems += 1;
            println!("BAD  faces: {error}");
            println!("     fix: --face btap, --face chrome or --face btap,chrome");
        }
    }
    match mcp::Replies::parse(&args.replies) {
        Ok(mcp::Replies::Lean) => println!(
            "ok   replies: lean (plain text for a model; --replies exact for drop-in clients)"
        ),
        Ok(mcp::Replies::Exact) => println!(
            "ok   replies: exact (the originals' shapes; --replies lean for fewer tokens when a model reads them)"
        ),
        Err(error) => {
            problems += 1;
            println!("BAD  replies: {error}");
        }
    }
    match args.cdp_endpoint.as_slice() {
        [] => match engine::find_browser(args.browser_path.as_deref()) {
            Ok(path) => {
                println!(
                    "ok   browser: {} {}",
                    path.display(),
                    browser_version(&path)
                );
            }
            Err(error) => {
                problems += 1;
                println!("MISSING browser: {error}");
                println!("     fix: install one, or pass --browser-path /path/to/chrome");
            }
        },
        endpoints => {
            for endpoint in endpoints {
                println!(
                    "ok   link: CDP endpoint {} (checked on first use)",
                    engine::without_query(endpoint)
                );
            }
        }
    }
    if engine::running_as_root() {
        println!("note running as root: the browser is started with --no-sandbox");
    }
    let display = platform::user::has_display();
    println!(
        "ok   display: {}",
        if display {
            "present (headed by default)"
        } else {
            "none (headless by default)"
        }
    );
    let config = crate::engine_config(args)?;
    println!("ok   output dir: {}", config.output_dir.display());
    tab_search(&config);
    if let engine::LinkConfig::Managed(options) = &config.link {
        match &options.profile_dir {
            Some(dir) => println!("ok   profile: {}", dir.display()),
            None => println!("ok   profile: throw-away (--isolated)"),
        }
    }
    // The extension link (for --extension and the browser-API tools).
    match crate::extension::write_out() {
        Ok(dir) => println!(
            "ok   extension: {} (id {})",
            dir.display(),
            crate::native_host::EXTENSION_ID
        ),
        Err(error) => {
            problems += 1;
            println!("MISSING extension folder: {error}");
        }
    }
    let exe = std::env::current_exe().ok();
    let mut registered = 0;
    for found in platform::native_messaging::find(crate::native_host::HOST_NAME) {
        registered += 1;
        let browser = found.browser;
        // The manifest is JSON: the binary's path is escaped inside it.
        let current = exe.as_ref().is_some_and(|exe| {
            serde_json::from_str::<serde_json::Value>(&found.manifest)
                .is_ok_and(|m| m["path"].as_str() == Some(&exe.display().to_string()))
        });
        if current {
            println!("ok   native host for {browser}: {}", found.place);
        } else {
            println!(
                "STALE native host for {browser}: {} names another tabwire binary",
                found.place
            );
            println!("     fix: tabwire install-native-host");
        }
    }
    if registered == 0 {
        println!(
            "note native host: not registered (needed only for --extension); fix: tabwire install-native-host"
        );
    }
    match crate::pairing::load() {
        Ok(Some(_)) => println!(
            "ok   link pairing secret: {} (readable by this user only)",
            crate::pairing::path().display()
        ),
        Ok(None) => println!(
            "note link pairing secret: none yet (created by install-native-host or the first link)"
        ),
        Err(error) => {
            problems += 1;
            println!("BROKEN link pairing secret: {error:#}");
        }
    }
    if problems == 0 {
        println!("\nready: add tabwire to your MCP client, e.g. `tabwire print-config claude`");
    }
    Ok(())
}

/// Whether tab search will search by meaning, and why not.
fn tab_search(config: &engine::EngineConfig) {
    if !config.tab_search {
        println!("ok   tab search: off (--no-tab-search)");
        return;
    }
    match engine::search::embed::load(&config.embed_model) {
        Ok(model) => println!(
            "ok   tab search: by words and by meaning ({}-dimension encoder, {}; loaded at the first search)",
            model.dims(),
            match &config.embed_model {
                engine::config::EmbedModel::Dir(dir) => format!("from {}", dir.display()),
                _ => format!(
                    "{:.1} MB inside the binary",
                    engine::search::embed::shipped_bytes() as f64 / 1e6
                ),
            }
        ),
        Err(why) => {
            println!("note tab search: by words only: {why}");
            println!(
                "     fix: drop --embed-model (or TABWIRE_EMBED_MODEL) to use the shipped model"
            );
        }
    }
}

/// The browser's version, as far as it can be told without starting it: Chrome on
/// Windows keeps each version in a folder named for it beside chrome.exe (and
/// `--version` there opens a window instead of printing); elsewhere `--version` prints
/// it, given 5 s at most (a binary that does something else is not waited for).
fn browser_version(path: &std::path::Path) -> String {
    if cfg!(windows) {
        let versions = path.parent().and_then(|dir| std::fs::read_dir(dir).ok());
        return versions
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| {
                name.split('.').count() == 4 && name.split('.').all(|p| p.parse::<u32>().is_ok())
            })
            .max_by_key(|name| {
                name.split('.')
                    .map(|p| p.parse::<u32>().unwrap_or(0))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
    }
    let Ok(mut child) = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
    else {
        return String::new();
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            let mut out = String::new();
            if let Some(mut stdout) = child.stdout.take() {
                let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
            }
            return out.trim().to_owned();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    "(did not say its version within 5 s)".into()
}
