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
        }
        Err(error) => {
            problems += 1;
            println!("BAD  faces: {error}");
            println!("     fix: --face btap, --face chrome or --face btap,chrome");
        }
    }
    match &args.cdp_endpoint {
        Some(endpoint) => println!("ok   link: CDP endpoint {endpoint} (checked on first use)"),
        None => match engine::find_browser(args.browser_path.as_deref()) {
            Ok(path) => {
                let version = std::process::Command::new(&path)
                    .arg("--version")
                    .output()
                    .ok()
                    .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                    .unwrap_or_default();
                println!("ok   browser: {} {version}", path.display());
            }
            Err(error) => {
                problems += 1;
                println!("MISSING browser: {error}");
                println!(
                    "     fix: apt-get install -y chromium   (or pass --browser-path /path/to/chrome)"
                );
            }
        },
    }
    if engine::running_as_root() {
        println!("note running as root: the browser is started with --no-sandbox");
    }
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
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
    let name = format!("{}.json", crate::native_host::HOST_NAME);
    let mut registered = 0;
    for (browser, dir) in crate::native_host::manifest_dirs() {
        let path = dir.join(&name);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        registered += 1;
        let current = exe
            .as_ref()
            .is_some_and(|exe| text.contains(&exe.display().to_string()));
        if current {
            println!("ok   native host for {browser}: {}", path.display());
        } else {
            println!(
                "STALE native host for {browser}: {} names another tabwire binary",
                path.display()
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
            "ok   link pairing secret: {} (0600)",
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
            "ok   tab search: by words and by meaning ({}-dimension embedding model, {})",
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
