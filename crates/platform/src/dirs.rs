//! Per-user paths: where tabwire keeps its profile, state, configuration, private
//! runtime files and downloads.
//!
//! - Linux: the XDG base directories (`$XDG_DATA_HOME`, `$XDG_STATE_HOME`,
//!   `$XDG_CONFIG_HOME`, `$XDG_RUNTIME_DIR`), with their documented defaults.
//! - macOS: `~/Library/Application Support/tabwire` (an XDG variable that is set wins, as
//!   for most command-line tools), the runtime dir under the per-user `$TMPDIR`.
//! - Windows: `%LOCALAPPDATA%\tabwire` for data, state and runtime files, `%APPDATA%\tabwire`
//!   for configuration (it roams with the user, as configuration should).
//!
//! The environment is read each time, so tests can point a process elsewhere.

use std::path::PathBuf;

/// The user's home directory (the temp dir if none is known).
pub fn home() -> PathBuf {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    absolute_var(var).unwrap_or_else(std::env::temp_dir)
}

/// tabwire's data: the persistent browser profile, the extension's folder.
pub fn data_dir() -> PathBuf {
    if cfg!(windows) {
        local_app_data().join("tabwire")
    } else {
        xdg_or("XDG_DATA_HOME", &[".local", "share"]).join("tabwire")
    }
}

/// tabwire's state: permission leases, bookmark backups.
pub fn state_dir() -> PathBuf {
    if cfg!(windows) {
        local_app_data().join("tabwire").join("state")
    } else {
        xdg_or("XDG_STATE_HOME", &[".local", "state"]).join("tabwire")
    }
}

/// tabwire's configuration: the extension link's pairing secret.
pub fn config_dir() -> PathBuf {
    if cfg!(windows) {
        absolute_var("APPDATA")
            .unwrap_or_else(|| home().join("AppData").join("Roaming"))
            .join("tabwire")
    } else {
        xdg_or("XDG_CONFIG_HOME", &[".config"]).join("tabwire")
    }
}

/// Where the user's applications keep their settings, as browsers look for them:
/// `$XDG_CONFIG_HOME` (default `~/.config`) on Linux; `~/Library/Application Support` on
/// macOS, where browsers ignore XDG; `%LOCALAPPDATA%` on Windows.
pub fn apps_config_home() -> PathBuf {
    if cfg!(windows) {
        local_app_data()
    } else if cfg!(target_os = "macos") {
        home().join("Library").join("Application Support")
    } else {
        xdg_or("XDG_CONFIG_HOME", &[".config"])
    }
}

/// Where screenshots and downloads go unless told otherwise.
pub fn default_output_dir() -> PathBuf {
    home().join("Downloads").join("tabwire")
}

/// The base of the private runtime dir, before it is checked (`local::runtime_dir`).
pub(crate) fn runtime_base() -> PathBuf {
    if cfg!(windows) {
        return local_app_data().join("tabwire").join("run");
    }
    match absolute_var("XDG_RUNTIME_DIR") {
        Some(base) => base.join("tabwire"),
        None => std::env::temp_dir().join(format!("tabwire-{}", crate::user::id())),
    }
}

fn local_app_data() -> PathBuf {
    absolute_var("LOCALAPPDATA").unwrap_or_else(|| home().join("AppData").join("Local"))
}

/// An XDG directory: the variable when it is set and absolute, else its default (on
/// macOS, `~/Library/Application Support`).
fn xdg_or(var: &str, default: &[&str]) -> PathBuf {
    if let Some(dir) = absolute_var(var) {
        return dir;
    }
    let mut dir = home();
    if cfg!(target_os = "macos") {
        dir.push("Library");
        dir.push("Application Support");
        return dir;
    }
    dir.extend(default);
    dir
}

fn absolute_var(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dir_is_absolute_and_named_for_tabwire() {
        for dir in [data_dir(), state_dir(), config_dir(), runtime_base()] {
            assert!(dir.is_absolute(), "{}", dir.display());
            assert!(
                dir.components()
                    .any(|c| c.as_os_str().to_string_lossy().starts_with("tabwire")),
                "{}",
                dir.display()
            );
        }
        assert!(default_output_dir().ends_with("tabwire"));
    }
}
