//! Native file dialogs the browser owns: found, described, and cancelled with a message
//! to their Cancel button. Only Windows has them in a form a program can reach (a
//! standard `#32770` dialog owned by the browser's window); elsewhere every call answers
//! [`DialogError::Unsupported`].
//!
//! A dialog counts when it is a visible, enabled top-level `#32770` window with the
//! standard file dialog's controls (the shell view `SHELLDLL_DefView`, the file-name box
//! 0x47C, the file-type box 0x470, and a Cancel push button with id 2 as a direct child),
//! whose owner chain (at most eight links, all in the dialog's process) ends at a window
//! of Chromium's class `Chrome_WidgetWin_1`, in a process the caller accepts as the
//! browser. The foreground window is looked at first, then every top-level window.

use std::path::PathBuf;

/// What identifies one dialog between an inspection and a cancel: any difference means
/// another dialog (or another process) took its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub hwnd: usize,
    pub cancel_hwnd: usize,
    pub owner_chain: Vec<usize>,
    pub process_id: u32,
    pub thread_id: u32,
    /// The process's creation time (a FILETIME), so a reused process id is told apart.
    pub process_created: u64,
    pub image: PathBuf,
}

/// A file dialog as found.
#[derive(Debug, Clone)]
pub struct FileDialog {
    pub identity: Identity,
    pub title: String,
    /// The folder the dialog shows, as its "Look in" box or address bar says it.
    pub folder: Option<String>,
    pub file_name: Option<String>,
    pub buttons: Vec<Button>,
    pub foreground: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    pub id: i32,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogError {
    /// Not on this platform.
    Unsupported,
    /// No dialog of the browser's is open.
    NotFound,
    /// A dialog is there but is not the standard one, or its owner is not the browser.
    Unverifiable(String),
    /// The system refused a call.
    Unavailable(String),
}

/// What the input devices did lately: how long since the last input, and which keys or
/// buttons are held now (virtual-key codes).
#[derive(Debug, Clone, Default)]
pub struct InputState {
    pub idle_ms: Option<u64>,
    pub held: Vec<u8>,
}

pub fn supported() -> bool {
    cfg!(windows)
}

/// The browser's file dialog, if one is open. `is_browser(pid, image)` says whether a
/// process is the browser.
pub fn find(is_browser: &dyn Fn(u32, &std::path::Path) -> bool) -> Result<FileDialog, DialogError> {
    #[cfg(windows)]
    {
        windows::find(is_browser)
    }
    #[cfg(not(windows))]
    {
        let _ = is_browser;
        Err(DialogError::Unsupported)
    }
}

/// The dialog at `hwnd` described again (to compare identities), if it still qualifies.
pub fn describe(
    hwnd: usize,
    is_browser: &dyn Fn(u32, &std::path::Path) -> bool,
) -> Result<FileDialog, DialogError> {
    #[cfg(windows)]
    {
        windows::describe(hwnd as _, is_browser)
    }
    #[cfg(not(windows))]
    {
        let _ = (hwnd, is_browser);
        Err(DialogError::Unsupported)
    }
}

/// Presses a dialog's Cancel as its own button does: `WM_COMMAND(IDCANCEL, BN_CLICKED)`
/// posted to the dialog, naming the button (no window activated, no input synthesised).
/// Err if the message could not be queued, in which case nothing was sent.
pub fn press_cancel(dialog_hwnd: usize, cancel_hwnd: usize) -> Result<(), String> {
    #[cfg(windows)]
    {
        windows::press_cancel(dialog_hwnd as _, cancel_hwnd as _)
    }
    #[cfg(not(windows))]
    {
        let _ = (dialog_hwnd, cancel_hwnd);
        Err("unsupported".into())
    }
}

/// Whether a window still exists.
pub fn exists(hwnd: usize) -> bool {
    #[cfg(windows)]
    {
        // SAFETY: IsWindow accepts any value.
        unsafe { windows_sys::Win32::UI::WindowsAndMessaging::IsWindow(hwnd as _) != 0 }
    }
    #[cfg(not(windows))]
    {
        let _ = hwnd;
        false
    }
}

/// The input devices' recent state (Windows: the last-input time and held keys; nothing
/// is observable elsewhere).
pub fn input_state() -> InputState {
    #[cfg(windows)]
    {
        windows::input_state()
    }
    #[cfg(not(windows))]
    {
        InputState::default()
    }
}

#[cfg(windows)]
mod windows {
    use std::path::{Path, PathBuf};

    use windows_sys::Win32::Foundation::{FILETIME, HWND, LPARAM};
    use windows_sys::Win32::System::SystemInformation::GetTickCount;
    use windows_sys::Win32::System::Threading::{
        GetProcessTimes, OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION,
        QueryFullProcessImageNameW,
    };
    use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
        GetAsyncKeyState, GetLastInputInfo, IsWindowEnabled, LASTINPUTINFO,
    };
    use windows_sys::Win32::UI::WindowsAndMessaging::{
        EnumChildWindows, EnumWindows, GW_OWNER, GWL_STYLE, GetClassNameW, GetDlgCtrlID,
        GetForegroundWindow, GetParent, GetWindow, GetWindowLongW, GetWindowThreadProcessId,
        IsIconic, IsWindowVisible, PostMessageW, SMTO_ABORTIFHUNG, SMTO_BLOCK, SendMessageTimeoutW,
        WM_COMMAND, WM_GETTEXT, WS_CHILD,
    };

    use super::{Button, DialogError, FileDialog, Identity, InputState};
    use crate::win::{Handle, from_wide};

    const CANCEL_ID: i32 = 2;
    const FILE_NAME_ID: i32 = 0x47C;
    const FILE_TYPE_ID: i32 = 0x470;
    const LOOK_IN_ID: i32 = 0x471;

    fn class(hwnd: HWND) -> String {
        let mut buffer = [0u16; 128];
        // SAFETY: the buffer length is passed.
        let len = unsafe { GetClassNameW(hwnd, buffer.as_mut_ptr(), buffer.len() as i32) };
        String::from_utf16_lossy(&buffer[..len.max(0) as usize])
    }

    /// A window's text, read with WM_GETTEXT (which the system carries across
    /// processes), never waiting long on a hung window.
    fn text(hwnd: HWND) -> String {
        let mut buffer = vec![0u16; 1024];
        let mut result = 0usize;
        // SAFETY: the buffer holds the length given; result receives the reply.
        unsafe {
            SendMessageTimeoutW(
                hwnd,
                WM_GETTEXT,
                buffer.len(),
                buffer.as_mut_ptr() as LPARAM,
                SMTO_BLOCK | SMTO_ABORTIFHUNG,
                500,
                &mut result,
            )
        };
        from_wide(&buffer)
    }

    fn control_id(hwnd: HWND) -> i32 {
        // SAFETY: GetDlgCtrlID accepts any handle.
        unsafe { GetDlgCtrlID(hwnd) }
    }

    fn process_of(hwnd: HWND) -> (u32, u32) {
        let mut pid = 0u32;
        // SAFETY: pid receives the process id; the thread id is returned.
        let tid = unsafe { GetWindowThreadProcessId(hwnd, &mut pid) };
        (pid, tid)
    }

    fn children(hwnd: HWND) -> Vec<HWND> {
        unsafe extern "system" fn collect(child: HWND, list: LPARAM) -> i32 {
            // SAFETY: list is the Vec passed below, alive for the call.
            let list = unsafe { &mut *(list as *mut Vec<HWND>) };
            list.push(child);
            (list.len() < 512) as i32
        }
        let mut list: Vec<HWND> = Vec::new();
        // SAFETY: the callback only pushes into `list`, which outlives the call.
        unsafe { EnumChildWindows(hwnd, Some(collect), &mut list as *mut _ as LPARAM) };
        list
    }

    fn top_level_windows() -> Vec<HWND> {
        unsafe extern "system" fn collect(window: HWND, list: LPARAM) -> i32 {
            // SAFETY: list is the Vec passed below, alive for the call.
            let list = unsafe { &mut *(list as *mut Vec<HWND>) };
            list.push(window);
            1
        }
        let mut list: Vec<HWND> = Vec::new();
        // SAFETY: the callback only pushes into `list`, which outlives the call.
        unsafe { EnumWindows(Some(collect), &mut list as *mut _ as LPARAM) };
        list
    }

    /// The process's image path and creation time.
    fn process_facts(pid: u32) -> Result<(PathBuf, u64), String> {
        // SAFETY: a query-only open; closed by Handle.
        let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if process.is_null() {
            return Err(format!(
                "process {pid} cannot be opened: {}",
                std::io::Error::last_os_error()
            ));
        }
        let process = Handle(process);
        let mut buffer = vec![0u16; 1024];
        let mut len = buffer.len() as u32;
        // SAFETY: the buffer holds `len` characters.
        let named = unsafe {
            QueryFullProcessImageNameW(process.0, PROCESS_NAME_WIN32, buffer.as_mut_ptr(), &mut len)
        } != 0;
        if !named {
            return Err(format!("process {pid} has no readable image path"));
        }
        let image = PathBuf::from(String::from_utf16_lossy(&buffer[..len as usize]));
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        // SAFETY: four FILETIMEs to fill.
        unsafe { GetProcessTimes(process.0, &mut created, &mut exited, &mut kernel, &mut user) };
        let created = (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime);
        Ok((image, created))
    }

    fn qualifies(hwnd: HWND) -> bool {
        // SAFETY: these read a window's state and accept any handle.
        unsafe {
            class(hwnd) == "#32770"
                && (GetWindowLongW(hwnd, GWL_STYLE) as u32) & WS_CHILD == 0
                && IsWindowVisible(hwnd) != 0
                && IsIconic(hwnd) == 0
                && IsWindowEnabled(hwnd) != 0
        }
    }

    pub(super) fn find(is_browser: &dyn Fn(u32, &Path) -> bool) -> Result<FileDialog, DialogError> {
        // SAFETY: no arguments.
        let foreground = unsafe { GetForegroundWindow() };
        let mut rest = top_level_windows();
        rest.retain(|&w| w != foreground);
        let mut seen = None;
        for hwnd in std::iter::once(foreground).chain(rest) {
            if hwnd.is_null() || !qualifies(hwnd) {
                continue;
            }
            match describe(hwnd, is_browser) {
                Ok(dialog) => return Ok(dialog),
                Err(error) => seen = seen.or(Some(error)),
            }
        }
        Err(seen.unwrap_or(DialogError::NotFound))
    }

    pub(super) fn describe(
        hwnd: HWND,
        is_browser: &dyn Fn(u32, &Path) -> bool,
    ) -> Result<FileDialog, DialogError> {
        let unverifiable = |why: String| DialogError::Unverifiable(why);
        if !qualifies(hwnd) {
            return Err(DialogError::NotFound);
        }
        let (process_id, thread_id) = process_of(hwnd);
        let mut owner_chain = Vec::new();
        let mut owner = hwnd;
        loop {
            // SAFETY: GetWindow accepts any handle.
            let next = unsafe { GetWindow(owner, GW_OWNER) };
            if next.is_null() {
                break;
            }
            if owner_chain.len() == 8 || owner_chain.contains(&(next as usize)) {
                return Err(unverifiable("its owner chain is too long or loops".into()));
            }
            if process_of(next).0 != process_id {
                return Err(unverifiable("an owner belongs to another process".into()));
            }
            owner_chain.push(next as usize);
            owner = next;
        }
        if owner_chain.is_empty() || class(owner) != "Chrome_WidgetWin_1" {
            return Err(unverifiable(
                "it is not owned by a browser window (Chrome_WidgetWin_1)".into(),
            ));
        }
        let (image, process_created) = process_facts(process_id).map_err(unverifiable)?;
        if !is_browser(process_id, &image) {
            return Err(unverifiable(format!(
                "its process {} ({}) is not the browser's",
                process_id,
                image.display()
            )));
        }
        let controls = children(hwnd);
        let by_id = |id: i32, classes: &[&str]| {
            controls
                .iter()
                .copied()
                .find(|&c| control_id(c) == id && classes.contains(&class(c).as_str()))
        };
        let has_view = controls.iter().any(|&c| class(c) == "SHELLDLL_DefView");
        let file_name = by_id(FILE_NAME_ID, &["ComboBoxEx32", "ComboBox"]);
        let file_type = by_id(FILE_TYPE_ID, &["ComboBox"]);
        let buttons: Vec<HWND> = controls
            .iter()
            .copied()
            // SAFETY: reads a control's parent and style.
            .filter(|&c| {
                class(c) == "Button"
                    && unsafe { GetParent(c) } == hwnd
                    && unsafe { GetWindowLongW(c, GWL_STYLE) } & 0xF <= 1
                    && unsafe { IsWindowVisible(c) } != 0
            })
            .collect();
        let cancel = buttons
            .iter()
            .copied()
            .find(|&b| control_id(b) == CANCEL_ID);
        let (Some(cancel), true, Some(file_name), Some(_)) =
            (cancel, has_view, file_name, file_type)
        else {
            return Err(unverifiable(
                "its layout is not the standard file dialog's".into(),
            ));
        };
        Ok(FileDialog {
            identity: Identity {
                hwnd: hwnd as usize,
                cancel_hwnd: cancel as usize,
                owner_chain,
                process_id,
                thread_id,
                process_created,
                image,
            },
            title: text(hwnd),
            folder: folder(&controls),
            file_name: Some(text(file_name)).filter(|t| !t.is_empty()),
            buttons: buttons
                .iter()
                .map(|&b| Button {
                    id: control_id(b),
                    text: text(b).replace('&', ""),
                })
                .collect(),
            // SAFETY: no arguments.
            foreground: unsafe { GetForegroundWindow() } == hwnd,
        })
    }

    /// The older dialog says its folder in its "Look in" box; the newer one in its
    /// address bar ("Address: C:\…").
    fn folder(controls: &[HWND]) -> Option<String> {
        let look_in = controls
            .iter()
            .find(|&&c| control_id(c) == LOOK_IN_ID && class(c) == "ComboBox");
        if let Some(&look_in) = look_in {
            return Some(text(look_in)).filter(|t| !t.is_empty());
        }
        controls
            .iter()
            .filter(|&&c| class(c) == "ToolbarWindow32")
            .map(|&c| text(c))
            .find_map(|t| t.split_once(": ").map(|(_, folder)| folder.to_owned()))
    }

    pub(super) fn press_cancel(dialog: HWND, cancel: HWND) -> Result<(), String> {
        const BN_CLICKED: usize = 0;
        let command = (BN_CLICKED << 16) | CANCEL_ID as usize;
        // SAFETY: a posted message carrying only a window handle.
        let posted = unsafe { PostMessageW(dialog, WM_COMMAND, command, cancel as LPARAM) };
        if posted == 0 {
            return Err(format!(
                "the message could not be queued: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }

    pub(super) fn input_state() -> InputState {
        let mut info = LASTINPUTINFO {
            cbSize: std::mem::size_of::<LASTINPUTINFO>() as u32,
            dwTime: 0,
        };
        // SAFETY: a sized struct to fill; GetTickCount has no arguments.
        let idle_ms = (unsafe { GetLastInputInfo(&mut info) } != 0)
            .then(|| u64::from(unsafe { GetTickCount() }.wrapping_sub(info.dwTime)));
        let held = (1u8..=254)
            // SAFETY: any virtual-key code may be asked for.
            .filter(|&key| unsafe { GetAsyncKeyState(i32::from(key)) } as u16 & 0x8000 != 0)
            .collect();
        InputState { idle_ms, held }
    }
}
