//! The desktop pair's state: short-lived tickets for native file dialogs the browser
//! owns, and the checks between an inspection and a cancel (BrowserTap's rules: a
//! ticket lives 15 s, at most 8 are kept, the oldest goes first, and any cancel attempt
//! uses its ticket up). What a dialog is and how it is pressed is the platform's
//! (`platform::desktop`); this is what tabwire promises around it.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

use platform::desktop::DialogError;
pub use platform::desktop::{FileDialog, Identity, InputState, supported};

pub const TICKET_LIFE: Duration = Duration::from_secs(15);
pub const MAX_TICKETS: usize = 8;
/// How long input must have been quiet before a cancel is sent, and how long a cancel
/// waits for that at most.
const QUIET: Duration = Duration::from_millis(750);
const QUIET_WAIT: Duration = Duration::from_secs(3);
/// How long the dialog may take to close once Cancel is pressed.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Why the pair did not act; each has BrowserTap's code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogRefusal {
    Unsupported,
    NotFound,
    Unverifiable(String),
    Unavailable(String),
    TicketInvalid,
    TicketExpired,
    IdentityChanged,
    InputActivity(String),
    /// Cancel was pressed but the dialog is still open.
    CancelUnconfirmed,
}

impl DialogRefusal {
    pub fn code(&self) -> &'static str {
        match self {
            DialogRefusal::Unsupported => "native_dialog_unsupported",
            DialogRefusal::NotFound => "native_dialog_not_foreground",
            DialogRefusal::Unverifiable(_) => "native_dialog_unverifiable",
            DialogRefusal::Unavailable(_) => "native_dialog_unavailable",
            DialogRefusal::TicketInvalid => "native_dialog_ticket_invalid",
            DialogRefusal::TicketExpired => "native_dialog_ticket_expired",
            DialogRefusal::IdentityChanged => "native_dialog_identity_changed",
            DialogRefusal::InputActivity(_) => "input_activity_detected",
            DialogRefusal::CancelUnconfirmed => "native_dialog_cancel_unconfirmed",
        }
    }

    pub fn message(&self) -> String {
        match self {
            DialogRefusal::Unsupported => format!(
                "Native file dialogs are supported only on Windows; this server runs on {}, where the browser owns no such dialog tabwire could reach.",
                std::env::consts::OS
            ),
            DialogRefusal::NotFound => "No native file dialog of the browser is open.".into(),
            DialogRefusal::Unverifiable(why) => format!("A dialog is open but cannot be verified: {why}."),
            DialogRefusal::Unavailable(why) => format!("The system refused: {why}."),
            DialogRefusal::TicketInvalid => {
                "The ticket is unknown or was already used; inspect the dialog again.".into()
            }
            DialogRefusal::TicketExpired => {
                "The ticket expired (tickets live 15 s); inspect the dialog again.".into()
            }
            DialogRefusal::IdentityChanged => {
                "The dialog is not the one inspected (closed, replaced or moved to another process); inspect again.".into()
            }
            DialogRefusal::InputActivity(what) => {
                format!("The user is using the mouse or keyboard ({what}); nothing was sent.")
            }
            DialogRefusal::CancelUnconfirmed => {
                "Cancel was clicked but the dialog is still open; inspect its state before acting again.".into()
            }
        }
    }

    /// Whether something was sent to the dialog before this.
    pub fn dispatched(&self) -> bool {
        matches!(self, DialogRefusal::CancelUnconfirmed)
    }
}

impl From<DialogError> for DialogRefusal {
    fn from(error: DialogError) -> DialogRefusal {
        match error {
            DialogError::Unsupported => DialogRefusal::Unsupported,
            DialogError::NotFound => DialogRefusal::NotFound,
            DialogError::Unverifiable(why) => DialogRefusal::Unverifiable(why),
            DialogError::Unavailable(why) => DialogRefusal::Unavailable(why),
        }
    }
}

/// A dialog inspected, and the ticket that names it.
#[derive(Debug, Clone)]
pub struct Inspected {
    pub ticket: String,
    pub expires_in: Duration,
    pub dialog: FileDialog,
    /// `chrome`, `edge`, `brave`, or `browser` for tabwire's own.
    pub browser: String,
}

/// A cancel that closed the dialog.
#[derive(Debug, Clone)]
pub struct Cancelled {
    pub identity: Identity,
    pub input: InputState,
}

struct Ticket {
    id: String,
    identity: Identity,
    expires: Instant,
}

#[derive(Default)]
pub struct NativeDialogs {
    tickets: Mutex<VecDeque<Ticket>>,
}

/// Which processes count as the browser: tabwire's own (by pid), or an installed
/// Chrome, Edge or Brave (its image is what App Paths registers; a portable copy is not).
pub struct BrowserProcesses {
    pub own_pid: Option<u32>,
}

impl BrowserProcesses {
    fn accepts(&self, pid: u32, image: &std::path::Path) -> bool {
        Some(pid) == self.own_pid
            || (browser_name(image).is_some() && platform::browsers::is_registered(image))
    }
}

/// `chrome`, `edge` or `brave` by the process's image name.
pub fn browser_name(image: &std::path::Path) -> Option<&'static str> {
    let name = image.file_name()?.to_string_lossy().to_lowercase();
    match name.as_str() {
        "chrome.exe" => Some("chrome"),
        "msedge.exe" => Some("edge"),
        "brave.exe" => Some("brave"),
        _ => None,
    }
}

impl NativeDialogs {
    /// Finds the browser's dialog and gives it a ticket.
    pub async fn inspect(&self, browsers: BrowserProcesses) -> Result<Inspected, DialogRefusal> {
        if !platform::desktop::supported() {
            return Err(DialogRefusal::Unsupported);
        }
        let dialog = tokio::task::spawn_blocking(move || {
            platform::desktop::find(&|pid, image| browsers.accepts(pid, image))
        })
        .await
        .map_err(|e| DialogRefusal::Unavailable(e.to_string()))??;
        let ticket =
            platform::random::hex(24).map_err(|e| DialogRefusal::Unavailable(e.to_string()))?;
        let mut tickets = self.tickets.lock();
        tickets.retain(|t| t.expires > Instant::now());
        while tickets.len() >= MAX_TICKETS {
            tickets.pop_front();
        }
        tickets.push_back(Ticket {
            id: ticket.clone(),
            identity: dialog.identity.clone(),
            expires: Instant::now() + TICKET_LIFE,
        });
        Ok(Inspected {
            ticket,
            expires_in: TICKET_LIFE,
            browser: browser_name(&dialog.identity.image)
                .unwrap_or("browser")
                .to_owned(),
            dialog,
        })
    }

    /// Uses a ticket up, whatever happens next.
    pub fn take(&self, ticket: &str) -> Result<Identity, DialogRefusal> {
        let mut tickets = self.tickets.lock();
        let at = tickets
            .iter()
            .position(|t| t.id == ticket)
            .ok_or(DialogRefusal::TicketInvalid)?;
        let taken = tickets.remove(at).ok_or(DialogRefusal::TicketInvalid)?;
        if taken.expires <= Instant::now() {
            return Err(DialogRefusal::TicketExpired);
        }
        Ok(taken.identity)
    }

    /// Presses the inspected dialog's Cancel: the same dialog, quiet input, one click
    /// message, then the dialog seen gone.
    pub async fn cancel(
        &self,
        identity: Identity,
        browsers: BrowserProcesses,
    ) -> Result<Cancelled, DialogRefusal> {
        let hwnd = identity.hwnd;
        let now = tokio::task::spawn_blocking(move || {
            platform::desktop::describe(hwnd, &|pid, image| browsers.accepts(pid, image))
        })
        .await
        .map_err(|e| DialogRefusal::Unavailable(e.to_string()))?;
        if now.map(|d| d.identity).ok() != Some(identity.clone()) {
            return Err(DialogRefusal::IdentityChanged);
        }
        let input = quiet_input().await?;
        // A posted message is queued or refused whole: refused, nothing was sent.
        platform::desktop::press_cancel(hwnd, identity.cancel_hwnd)
            .map_err(DialogRefusal::Unavailable)?;
        // A closing window has no event to wait on from another process; look, briefly.
        let deadline = Instant::now() + CLOSE_WAIT;
        while platform::desktop::exists(hwnd) {
            if Instant::now() > deadline {
                return Err(DialogRefusal::CancelUnconfirmed);
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        Ok(Cancelled { identity, input })
    }
}

/// Waits (at most QUIET_WAIT) until the mouse and keyboard have been still for QUIET and
/// nothing is held.
async fn quiet_input() -> Result<InputState, DialogRefusal> {
    let deadline = Instant::now() + QUIET_WAIT;
    loop {
        let state = platform::desktop::input_state();
        if !state.held.is_empty() {
            return Err(DialogRefusal::InputActivity(format!(
                "keys or buttons held: {:?}",
                state.held
            )));
        }
        let idle = state.idle_ms.map(Duration::from_millis);
        match idle {
            None => return Ok(state),
            Some(idle) if idle >= QUIET => return Ok(state),
            Some(idle) if Instant::now() + (QUIET - idle) > deadline => {
                return Err(DialogRefusal::InputActivity(
                    "input within the last 750 ms".into(),
                ));
            }
            Some(idle) => tokio::time::sleep(QUIET - idle).await,
        }
    }
}
