//! The operating system asking this process to stop: SIGTERM or SIGINT on Unix; Ctrl-C,
//! Ctrl-Break, the console closing, logoff or shutdown on Windows.

/// Resolves when the process is asked to stop (never, if the signals cannot be watched).
pub async fn requested() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(windows)]
    {
        use tokio::signal::windows;
        let (Ok(mut c), Ok(mut brk), Ok(mut close), Ok(mut shutdown)) = (
            windows::ctrl_c(),
            windows::ctrl_break(),
            windows::ctrl_close(),
            windows::ctrl_shutdown(),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = c.recv() => {}
            _ = brk.recv() => {}
            _ = close.recv() => {}
            _ = shutdown.recv() => {}
        }
    }
}

/// Idle connections and many sessions need file descriptors: take what the hard limit
/// allows (bounded), so a flood meets tabwire's own limits first. Nothing to do on
/// Windows, whose handle limit is not a per-process setting.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let mut limit = getrlimit(Resource::Nofile);
        let wanted = limit.maximum.unwrap_or(65_536).min(65_536);
        if limit.current.is_some_and(|current| current < wanted) {
            limit.current = Some(wanted);
            let _ = setrlimit(Resource::Nofile, limit);
        }
    }
}
