//! Registering the extension's native-messaging host where each browser looks for it.
//!
//! - Linux: a manifest file in each browser's `NativeMessagingHosts` folder under
//!   `$XDG_CONFIG_HOME` (`google-chrome`, `chromium`, `microsoft-edge`, Brave's).
//! - macOS: the same under `~/Library/Application Support/<vendor>/`.
//! - Windows: one manifest file under `%LOCALAPPDATA%\tabwire\native-messaging`, named by
//!   each browser's `HKCU\Software\<vendor>\NativeMessagingHosts\<host>` key (a browser
//!   reads the registry there, never a folder).
//!
//! The caller writes files (atomically, with its own confinement) through `write`.

use std::io;
use std::path::{Path, PathBuf};

/// One place a browser will find the host.
#[derive(Debug, Clone)]
pub struct Registered {
    pub browser: &'static str,
    /// The manifest file, or on Windows the registry key naming it.
    pub place: String,
}

type Write<'a> = &'a dyn Fn(&Path, &[u8]) -> io::Result<()>;

/// Registers `manifest` as host `host` for every browser of this user that could use it:
/// on Linux and macOS the browsers whose configuration folder exists; on Windows all of
/// them (a browser installed later finds it too).
pub fn register(host: &str, manifest: &[u8], write: Write<'_>) -> io::Result<Vec<Registered>> {
    #[cfg(windows)]
    {
        let file = crate::dirs::data_dir()
            .join("native-messaging")
            .join(format!("{host}.json"));
        write(&file, manifest)?;
        let mut done = Vec::new();
        for (browser, vendor) in WINDOWS_VENDORS {
            let key = format!(r"Software\{vendor}\NativeMessagingHosts\{host}");
            crate::win::registry::set_user_default(&key, &file.display().to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("cannot write HKCU\\{key}: {e}")))?;
            done.push(Registered {
                browser,
                place: format!(r"HKCU\{key} = {}", file.display()),
            });
        }
        Ok(done)
    }
    #[cfg(not(windows))]
    {
        let mut done = Vec::new();
        for (browser, dir) in manifest_dirs() {
            if !dir.parent().is_some_and(Path::exists) {
                continue;
            }
            let file = dir.join(format!("{host}.json"));
            write(&file, manifest)?;
            done.push(Registered {
                browser,
                place: file.display().to_string(),
            });
        }
        Ok(done)
    }
}

/// Registers the host inside one browser profile folder (a custom `--user-data-dir`):
/// Chromium reads `NativeMessagingHosts` there on Linux and macOS. On Windows a browser
/// reads only the registry, so this is [`register`].
pub fn register_in_profile(
    profile: &Path,
    host: &str,
    manifest: &[u8],
    write: Write<'_>,
) -> io::Result<Vec<Registered>> {
    if cfg!(windows) {
        return register(host, manifest, write);
    }
    let file = profile
        .join("NativeMessagingHosts")
        .join(format!("{host}.json"));
    write(&file, manifest)?;
    Ok(vec![Registered {
        browser: "this profile",
        place: file.display().to_string(),
    }])
}

/// Browser name and registry vendor path, Windows.
pub const WINDOWS_VENDORS: [(&str, &str); 4] = [
    ("Chrome", r"Google\Chrome"),
    ("Chromium", "Chromium"),
    ("Edge", r"Microsoft\Edge"),
    ("Brave", r"BraveSoftware\Brave-Browser"),
];

/// Where each browser looks for per-user manifests on Linux and macOS.
pub fn manifest_dirs() -> Vec<(&'static str, PathBuf)> {
    let base = crate::dirs::apps_config_home();
    if cfg!(target_os = "macos") {
        let support = base;
        return vec![
            ("Chrome", support.join("Google/Chrome/NativeMessagingHosts")),
            ("Chromium", support.join("Chromium/NativeMessagingHosts")),
            ("Edge", support.join("Microsoft Edge/NativeMessagingHosts")),
            (
                "Brave",
                support.join("BraveSoftware/Brave-Browser/NativeMessagingHosts"),
            ),
        ];
    }
    let config = base;
    vec![
        ("Chrome", config.join("google-chrome/NativeMessagingHosts")),
        ("Chromium", config.join("chromium/NativeMessagingHosts")),
        ("Edge", config.join("microsoft-edge/NativeMessagingHosts")),
        (
            "Brave",
            config.join("BraveSoftware/Brave-Browser/NativeMessagingHosts"),
        ),
    ]
}

/// A registration found: where, and the manifest it points at.
#[derive(Debug, Clone)]
pub struct Found {
    pub browser: &'static str,
    pub place: String,
    pub manifest: String,
}

/// The registrations of host `host` this user has (for `doctor`).
pub fn find(host: &str) -> Vec<Found> {
    #[cfg(windows)]
    {
        use crate::win::registry::{Hive, default_value};
        WINDOWS_VENDORS
            .iter()
            .filter_map(|(browser, vendor)| {
                let key = format!(r"Software\{vendor}\NativeMessagingHosts\{host}");
                let file = default_value(Hive::CurrentUser, &key)?;
                let manifest = std::fs::read_to_string(&file).ok()?;
                Some(Found {
                    browser,
                    place: format!(r"HKCU\{key} = {file}"),
                    manifest,
                })
            })
            .collect()
    }
    #[cfg(not(windows))]
    {
        manifest_dirs()
            .into_iter()
            .filter_map(|(browser, dir)| {
                let file = dir.join(format!("{host}.json"));
                let manifest = std::fs::read_to_string(&file).ok()?;
                Some(Found {
                    browser,
                    place: file.display().to_string(),
                    manifest,
                })
            })
            .collect()
    }
}
