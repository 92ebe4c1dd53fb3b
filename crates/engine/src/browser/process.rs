//! A browser process tabwire launched, watched: the moment it exits, its connection is
//! closed (so no command is written into a pipe nobody reads, and the call in flight is
//! answered at once) and the exit is on record for status reports.

use parking_lot::Mutex;
use std::time::Duration;

use platform::process::BrowserProcess;
use tokio::sync::{oneshot, watch};

pub(crate) struct Process {
    pid: Option<u32>,
    /// How it exited, once it has.
    exited: watch::Receiver<Option<String>>,
    /// Dropping (or sending on) it kills the process.
    kill: Mutex<Option<oneshot::Sender<()>>>,
}

impl Process {
    /// Watches `child`; when it exits, `on_exit` runs with how it exited.
    pub(crate) fn watch(
        mut child: BrowserProcess,
        on_exit: impl FnOnce(&str) + Send + 'static,
    ) -> Process {
        let pid = child.id();
        let (exited_tx, exited) = watch::channel(None);
        let (kill, killed) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = killed => {
                    let _ = child.start_kill();
                    child.wait().await
                }
            };
            let how = status.unwrap_or_else(|error| {
                format!("the browser process could not be waited for: {error}")
            });
            on_exit(&how);
            exited_tx.send_replace(Some(how));
        });
        Process {
            pid,
            exited,
            kill: Mutex::new(Some(kill)),
        }
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// How it exited, if it has.
    pub(crate) fn exit(&self) -> Option<String> {
        self.exited.borrow().clone()
    }

    /// Waits up to `timeout` for the process to exit; whether it did.
    pub(crate) async fn wait(&self, timeout: Duration) -> bool {
        let mut exited = self.exited.clone();
        tokio::time::timeout(timeout, exited.wait_for(Option::is_some))
            .await
            .is_ok()
    }

    pub(crate) fn kill(&self) {
        if let Some(kill) = self.kill.lock().take() {
            let _ = kill.send(());
        }
    }
}
