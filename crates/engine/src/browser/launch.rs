//! Finding and launching a Chromium-family browser over `--remote-debugging-pipe`.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::{Child, Command};

use crate::config::LaunchOptions;
use crate::error::EngineError;

/// Binaries we look for, in order, when no path is given.
const CANDIDATES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "google-chrome-beta",
    "microsoft-edge",
    "microsoft-edge-stable",
    "brave-browser",
    "brave",
    "opera",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
    "/Applications/Brave Browser.app/Contents/MacOS/Brave Browser",
    "/snap/bin/chromium",
];

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
    CANDIDATES
        .iter()
        .find_map(|name| which(name))
        .ok_or_else(|| {
            EngineError::BrowserNotFound(
                "no Chromium-family browser found; install one (Debian: apt-get install -y chromium) or pass --browser-path".into(),
            )
        })
}

fn which(name: &str) -> Option<PathBuf> {
    let candidate = Path::new(name);
    if candidate.is_absolute() {
        return candidate.is_file().then(|| candidate.to_path_buf());
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.is_file())
}

pub fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A launched browser and the CDP connection over its pipe.
pub struct Connected {
    pub child: Child,
    pub connection: cdp::Connection,
    /// The throw-away profile to remove when it exits.
    pub temp_profile: Option<PathBuf>,
}

/// Launches a browser the way tabwire does and connects to it over the pipe (also what
/// `bench floor` times raw CDP against). Must run on a runtime worker thread (see
/// `launch`).
pub fn launch_connected(options: &LaunchOptions) -> Result<Connected, EngineError> {
    let launched = launch(options)?;
    let pipe = |e: std::io::Error| EngineError::Launch(format!("pipe: {e}"));
    let to_browser =
        tokio::net::unix::pipe::Sender::from_owned_fd(launched.to_browser).map_err(pipe)?;
    let from_browser =
        tokio::net::unix::pipe::Receiver::from_owned_fd(launched.from_browser).map_err(pipe)?;
    Ok(Connected {
        child: launched.child,
        connection: cdp::Connection::over_pipe(to_browser, from_browser),
        temp_profile: launched.temp_profile,
    })
}

/// A launched browser: the child process and the two pipe ends we talk over.
pub(crate) struct Launched {
    pub child: Child,
    pub to_browser: OwnedFd,
    pub from_browser: OwnedFd,
    pub temp_profile: Option<PathBuf>,
}

pub(crate) fn launch(options: &LaunchOptions) -> Result<Launched, EngineError> {
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

    let (browser_reads, to_browser) = pipe()?;
    let (from_browser, browser_writes) = pipe()?;
    let read_fd = browser_reads.as_raw_fd();
    let write_fd = browser_writes.as_raw_fd();

    let mut command = Command::new(&binary);
    command
        .kill_on_drop(true)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls (dup2, prctl) run between fork and exec.
    // PR_SET_PDEATHSIG fires when the *thread* that forked exits, so launch() must run on a
    // runtime worker thread (which lives as long as the server), never in spawn_blocking.
    unsafe {
        command.pre_exec(move || {
            // Chromium reads commands from fd 3 and writes replies to fd 4.
            if libc::dup2(read_fd, 3) < 0 || libc::dup2(write_fd, 4) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            // If tabwire dies without closing the pipe cleanly, the browser still goes.
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let child = command
        .spawn()
        .map_err(|e| EngineError::Launch(format!("cannot start {}: {e}", binary.display())))?;
    drop(browser_reads);
    drop(browser_writes);
    Ok(Launched {
        child,
        to_browser,
        from_browser,
        temp_profile,
    })
}

fn pipe() -> Result<(OwnedFd, OwnedFd), EngineError> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints; O_CLOEXEC keeps our ends out of the child
    // (the child's copies are made by dup2, which clears the flag).
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(EngineError::Launch(format!(
            "pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: pipe2 succeeded, so both fds are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
