//! Who this process runs as.

/// Whether this process runs as root (Chromium then needs `--no-sandbox`). Never on
/// Windows, where an administrator's Chromium keeps its sandbox.
pub fn is_root() -> bool {
    #[cfg(unix)]
    {
        rustix::process::geteuid().is_root()
    }
    #[cfg(windows)]
    {
        false
    }
}

/// This user's identity as text: the uid on Unix, the SID on Windows (or "user" if the
/// token cannot be read). Names private files and pipes.
pub fn id() -> String {
    #[cfg(unix)]
    {
        rustix::process::getuid().as_raw().to_string()
    }
    #[cfg(windows)]
    {
        crate::win::current_user_sid()
            .map(|sid| sid.text)
            .unwrap_or_else(|_| "user".into())
    }
}

/// Whether a window can be shown: always on macOS and Windows; on Linux, only with an X11
/// or Wayland display.
pub fn has_display() -> bool {
    if cfg!(any(windows, target_os = "macos")) {
        return true;
    }
    std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
}
