//! Finding and launching a Chromium-family browser over `--remote-debugging-pipe`. Where
//! browsers install and how a child gets its pipe and dies with us differ per platform
//! (`platform::browsers`, `platform::process`); the flags are the same everywhere.

use std::path::{Path, PathBuf};

use crate::config::LaunchOptions;
use crate::error::EngineError;

/// The browser binary that would be launched, if any.
pub fn find_browser(explicit: Option<&Path>) -> Result<PathBuf, EngineError> {
    if let Some(path) = explicit {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(EngineError::BrowserNotFound(format!(
                "--browser-path {} does not exist",
                path.display()
            )))
        };
    }
    platform::browsers::find().ok_or_else(|| {
        EngineError::BrowserNotFound(format!(
            "no Chromium-family browser found; install one ({}) or pass --browser-path",
            install_hint()
        ))
    })
}

/// How a user of this platform gets a browser.
fn install_hint() -> &'static str {
    if cfg!(windows) {
        "Chrome or Edge from their vendors; Edge ships with Windows 10 and later"
    } else if cfg!(target_os = "macos") {
        "Google Chrome, Chromium, Edge or Brave into /Applications"
    } else {
        "Debian: apt-get install -y chromium"
    }
}

pub fn running_as_root() -> bool {
    platform::user::is_root()
}

/// A launched browser and the CDP connection over its pipe.
pub struct Connected {
    pub child: platform::process::BrowserProcess,
    pub connection: cdp::Connection,
    /// The throw-away profile to remove when it exits.
    pub temp_profile: Option<PathBuf>,
}

/// Launches a browser the way tabwire does and connects to it over the pipe (also what
/// `bench floor` times raw CDP against). On Linux it must run on a runtime worker (see
/// `platform::process::spawn_with_cdp_pipe`).
pub async fn launch_connected(options: &LaunchOptions) -> Result<Connected, EngineError> {
    let binary = find_browser(options.browser_path.as_deref())?;
    let (profile, temp_profile) = match &options.profile_dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let dir = std::env::temp_dir().join(crate::ids::unique("tabwire-profile"));
            (dir.clone(), Some(dir))
        }
    };
    std::fs::create_dir_all(&profile).map_err(|e| {
        EngineError::Launch(format!(
            "cannot create profile dir {}: {e}",
            profile.display()
        ))
    })?;
    let spawned = platform::process::spawn_with_cdp_pipe(&binary, &browser_args(options, &profile))
        .await
        .map_err(|e| EngineError::Launch(format!("cannot start {}: {e}", binary.display())))?;
    Ok(Connected {
        child: spawned.process,
        connection: cdp::Connection::over_pipe(
            spawned.to_browser,
            spawned.from_browser,
            Some(Box::new(move || spawned.backlog.unread())),
        ),
        temp_profile,
    })
}

/// The command line tabwire launches a browser with.
fn browser_args(options: &LaunchOptions, profile: &Path) -> Vec<String> {
    let headless = options.is_headless();
    let mut args: Vec<String> = vec![
        "--remote-debugging-pipe".into(),
        format!("--user-data-dir={}", profile.display()),
        "--no-first-run".into(),
        "--no-default-browser-check".into(),
        // A closed network refuses these connections many times a second otherwise.
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-features=Translate,MediaRouter,OptimizationHints".into(),
        // Pages may offer agents tools of their own (`document.modelContext`).
        "--enable-features=WebMCP".into(),
        // Background tabs must keep running timers and rendering: agents drive many tabs.
        "--disable-background-timer-throttling".into(),
        "--disable-backgrounding-occluded-windows".into(),
        "--disable-renderer-backgrounding".into(),
        "--password-store=basic".into(),
        "--use-mock-keychain".into(),
    ];
    if headless {
        args.push("--headless".into());
        args.push("--hide-scrollbars".into());
        // The headless default (800×600 minus chrome) is smaller than any real screen.
        args.push("--window-size=1280,800".into());
        args.push("--mute-audio".into());
    }
    if running_as_root() {
        // Chromium refuses to start as root with its sandbox on.
        args.push("--no-sandbox".into());
    }
    args.extend(options.extra_args.iter().cloned());
    args.push("about:blank".into());
    args
}
