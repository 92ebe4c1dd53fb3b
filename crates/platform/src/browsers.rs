//! Where Chromium-family browsers install, per platform, in the order tabwire prefers
//! them when no `--browser-path` is given.
//!
//! - Linux: `chromium`, Chrome, Edge, Brave, Opera on `PATH`, then the snap.
//! - macOS: the `.app` bundles in `/Applications` and `~/Applications`.
//! - Windows: Chrome, Edge, Brave and Chromium under `%ProgramFiles%`,
//!   `%ProgramFiles(x86)%` and `%LOCALAPPDATA%` (per-user installs), then what the App
//!   Paths registry keys name (`chrome.exe`, `msedge.exe`, `brave.exe`), then `PATH`.

use std::path::{Path, PathBuf};

/// The first browser found, if any.
pub fn find() -> Option<PathBuf> {
    candidates().into_iter().find(|path| path.is_file())
}

/// Every place looked at, in order (for `doctor`, and to say where we looked).
pub fn candidates() -> Vec<PathBuf> {
    let mut found = Vec::new();
    if cfg!(windows) {
        windows_candidates(&mut found);
    } else if cfg!(target_os = "macos") {
        const APPS: [&str; 5] = [
            "Google Chrome.app/Contents/MacOS/Google Chrome",
            "Chromium.app/Contents/MacOS/Chromium",
            "Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
            "Brave Browser.app/Contents/MacOS/Brave Browser",
            "Opera.app/Contents/MacOS/Opera",
        ];
        for base in [
            PathBuf::from("/Applications"),
            crate::dirs::home().join("Applications"),
        ] {
            found.extend(APPS.iter().map(|app| base.join(app)));
        }
        found.extend(on_path(&["chromium", "google-chrome"]));
    } else {
        found.extend(on_path(&[
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
        ]));
        found.push(PathBuf::from("/snap/bin/chromium"));
    }
    found
}

/// A browser by name on `PATH` (`name.exe` on Windows).
fn on_path(names: &[&str]) -> Vec<PathBuf> {
    let Some(path) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let suffix = if cfg!(windows) { ".exe" } else { "" };
    names
        .iter()
        .flat_map(|name| {
            dirs.iter()
                .map(move |dir| dir.join(format!("{name}{suffix}")))
        })
        .collect()
}

/// The Windows browsers by vendor folder, and the executable App Paths registers.
const WINDOWS_BROWSERS: [(&str, &str); 4] = [
    (r"Google\Chrome\Application\chrome.exe", "chrome.exe"),
    (r"Microsoft\Edge\Application\msedge.exe", "msedge.exe"),
    (
        r"BraveSoftware\Brave-Browser\Application\brave.exe",
        "brave.exe",
    ),
    (r"Chromium\Application\chrome.exe", "chrome.exe"),
];

fn windows_candidates(found: &mut Vec<PathBuf>) {
    let bases: Vec<PathBuf> = [
        "ProgramFiles",
        "ProgramFiles(x86)",
        "ProgramW6432",
        "LOCALAPPDATA",
    ]
    .iter()
    .filter_map(|var| std::env::var_os(var).map(PathBuf::from))
    .collect();
    for (folder, _) in WINDOWS_BROWSERS {
        found.extend(bases.iter().map(|base| base.join(folder)));
    }
    for (_, exe) in WINDOWS_BROWSERS {
        found.extend(app_path(exe));
    }
    found.extend(on_path(&["chrome", "msedge", "brave", "chromium"]));
}

/// What `HKCU` or `HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths\<exe>` names,
/// quotes stripped; None elsewhere than Windows.
pub fn app_path(exe: &str) -> Option<PathBuf> {
    #[cfg(windows)]
    {
        use crate::win::registry::{Hive, default_value};
        let key = format!(r"SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths\{exe}");
        [Hive::CurrentUser, Hive::LocalMachine]
            .into_iter()
            .find_map(|hive| default_value(hive, &key))
            .map(|value| PathBuf::from(value.trim().trim_matches('"')))
            .filter(|path| path.is_absolute())
    }
    #[cfg(not(windows))]
    {
        let _ = exe;
        None
    }
}

/// Whether `binary` is a browser App Paths registers (a Windows install, not a portable
/// copy): its file name and full path match the key. Always false elsewhere.
pub fn is_registered(binary: &Path) -> bool {
    let Some(name) = binary
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
    else {
        return false;
    };
    app_path(&name).is_some_and(|registered| same_file(&registered, binary))
}

fn same_file(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| crate::fs::canonical(p).unwrap_or_else(|_| p.to_path_buf());
    let (a, b) = (canonical(a), canonical(b));
    a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_candidate_is_absolute() {
        for path in super::candidates() {
            assert!(path.is_absolute(), "{}", path.display());
        }
    }
}
