//! What differs between Linux, macOS and Windows, behind small named seams.
//!
//! Every other crate is written once for all three systems; where the operating system
//! decides how something is done, it calls the seam here. Each seam is one module with
//! one implementation per platform (`#[cfg(unix)]` / `#[cfg(windows)]` beside each other)
//! and the same tests, run on Linux by the suite and on Windows under Wine
//! (`scripts/test-windows.sh`).
//!
//! | seam | Linux and macOS | Windows |
//! | --- | --- | --- |
//! | [`process`]: a browser with its CDP pipe, dying with us | fds 3 and 4, `PR_SET_PDEATHSIG` (Linux) | CRT fds 3 and 4 through `lpReserved2`, a kill-on-close job object |
//! | [`local`]: the broker's and the extension link's socket | a Unix socket in a 0700 dir, peer uid checked | a named pipe only this user may open, both ends' user checked |
//! | [`fs`]: confined writes | `openat(O_NOFOLLOW)` walk | handles held without share-delete, reparse points refused, Windows name rules |
//! | [`dirs`]: per-user paths | XDG (macOS: `~/Library`) | `%LOCALAPPDATA%`, `%APPDATA%` |
//! | [`native_messaging`]: the extension host's registration | manifest files | manifest file plus `HKCU\Software\<vendor>\NativeMessagingHosts` |
//! | [`secret`]: files only this user reads | mode 0600 | a protected DACL naming this user alone |
//! | [`browsers`]: where browsers install | `PATH`, `/Applications` | Program Files, `%LOCALAPPDATA%`, App Paths |
//! | [`desktop`]: native file dialogs of the browser | unsupported | `#32770` dialogs owned by the browser's process |
//! | [`priority`]: background threads that yield | a thread's nice value (Linux; macOS: none) | `THREAD_PRIORITY_LOWEST` |
//! | [`lock`], [`random`], [`shutdown`], [`user`] | flock, getrandom, SIGTERM/SIGINT, uid | LockFileEx, ProcessPrng, console events, SID |
//!
//! This crate knows nothing of CDP, MCP or tabwire's engine: it speaks bytes, paths and
//! processes. It imports no other crate of the workspace.

pub mod browsers;
pub mod desktop;
pub mod dirs;
pub mod fs;
pub mod local;
pub mod lock;
pub mod native_messaging;
pub mod priority;
pub mod process;
pub mod random;
pub mod secret;
pub mod shutdown;
pub mod user;

#[cfg(windows)]
mod win;
