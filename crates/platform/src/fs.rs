//! The operations confined writes are made of: directories opened one component at a
//! time without following links, files created only where nothing is, renames within a
//! directory. `engine::files` builds its atomic, confined writes from these.
//!
//! - Unix: each directory is opened relative to the one before with
//!   `openat(O_NOFOLLOW | O_DIRECTORY)`, so a symbolic link anywhere below the root (even
//!   one planted while we write) fails the walk instead of redirecting it; files are
//!   created `O_NOFOLLOW | O_EXCL`.
//! - Windows: each directory is opened with `FILE_FLAG_OPEN_REPARSE_POINT` and refused if
//!   it is a reparse point (a symbolic link, a junction, a mount point), and its handle is
//!   held without `FILE_SHARE_DELETE`, so no directory of the walk can be renamed or
//!   replaced until the write is done; the file is created `CREATE_NEW` without following
//!   a reparse point. Names Windows would not store as given are refused first
//!   ([`name_problem`]).

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// An open directory inside a confined walk.
pub struct Dir {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    #[cfg(windows)]
    handle: std::os::windows::io::OwnedHandle,
    #[cfg(windows)]
    path: PathBuf,
}

fn link_refused(name: &OsStr) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "'{}' is a symbolic link, junction or not a directory; files are never written through links",
            name.to_string_lossy()
        ),
    )
}

#[cfg(unix)]
mod imp {
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io;
    use std::path::Path;

    use rustix::fs::{AtFlags, Mode, OFlags};
    use rustix::io::Errno;

    use super::{Dir, link_refused};

    const DIR_FLAGS: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    impl Dir {
        pub fn open_root(path: &Path) -> io::Result<Dir> {
            let fd = rustix::fs::open(path, DIR_FLAGS, Mode::empty())
                .map_err(|e| refuse_link(e, path.as_os_str()))?;
            Ok(Dir { fd })
        }

        pub fn child(&self, name: &OsStr) -> io::Result<Dir> {
            match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            let fd = rustix::fs::openat(&self.fd, name, DIR_FLAGS, Mode::empty())
                .map_err(|e| refuse_link(e, name))?;
            Ok(Dir { fd })
        }

        pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o644))?;
            Ok(File::from(fd))
        }

        pub fn rename(&self, from: &OsStr, to: &OsStr, overwrite: bool) -> io::Result<()> {
            #[cfg(target_os = "linux")]
            {
                use rustix::fs::RenameFlags;
                let flags = if overwrite {
                    RenameFlags::empty()
                } else {
                    RenameFlags::NOREPLACE
                };
                rustix::fs::renameat_with(&self.fd, from, &self.fd, to, flags)?;
            }
            #[cfg(not(target_os = "linux"))]
            {
                if !overwrite && rustix::fs::statat(&self.fd, to, AtFlags::SYMLINK_NOFOLLOW).is_ok()
                {
                    return Err(io::ErrorKind::AlreadyExists.into());
                }
                rustix::fs::renameat(&self.fd, from, &self.fd, to)?;
            }
            Ok(())
        }

        pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
            rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?;
            Ok(())
        }

        pub fn sync(&self) -> io::Result<()> {
            rustix::fs::fsync(&self.fd)?;
            Ok(())
        }
    }

    /// A link where a directory was expected reads ELOOP or ENOTDIR; say so plainly.
    fn refuse_link(error: Errno, name: &OsStr) -> io::Error {
        match error {
            Errno::LOOP | Errno::NOTDIR => link_refused(name),
            other => other.into(),
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::ffi::OsStr;
    use std::fs::File;
    use std::io;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
    use std::path::{Path, PathBuf};

    use windows_sys::Win32::Foundation::{
        ERROR_ALREADY_EXISTS, GENERIC_WRITE, HANDLE, INVALID_HANDLE_VALUE,
    };
    use windows_sys::Win32::Storage::FileSystem::{
        CREATE_NEW, CreateDirectoryW, CreateFileW, DeleteFileW, FILE_ATTRIBUTE_DIRECTORY,
        FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_REPARSE_POINT, FILE_ATTRIBUTE_TAG_INFO,
        FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_LIST_DIRECTORY,
        FILE_NAME_NORMALIZED, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ,
        FILE_SHARE_WRITE, FILE_TRAVERSE, FileAttributeTagInfo, GetFileInformationByHandleEx,
        GetFinalPathNameByHandleW, MOVEFILE_REPLACE_EXISTING, MOVEFILE_WRITE_THROUGH, MoveFileExW,
        OPEN_EXISTING, VOLUME_NAME_DOS,
    };

    use super::{Dir, link_refused};
    use crate::win::{check, wide};

    /// Opens a directory itself (a link is opened, not followed) and refuses anything
    /// that is not a plain directory. Sharing read and write but not delete: while we
    /// hold it, it cannot be renamed, removed or swapped for a link.
    fn open_dir(path: &Path, is_root: bool) -> io::Result<(OwnedHandle, PathBuf)> {
        // SAFETY: a NUL-terminated path; the handle is owned below.
        let handle = unsafe {
            CreateFileW(
                wide(path).as_ptr(),
                FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES,
                FILE_SHARE_READ | FILE_SHARE_WRITE,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT,
                std::ptr::null_mut(),
            )
        };
        if handle == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle nothing else owns.
        let handle = unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) };
        // SAFETY: zeroed is a valid FILE_ATTRIBUTE_TAG_INFO for the call to fill.
        let mut info: FILE_ATTRIBUTE_TAG_INFO = unsafe { std::mem::zeroed() };
        // SAFETY: the buffer is the size given.
        check(unsafe {
            GetFileInformationByHandleEx(
                handle.as_raw_handle() as HANDLE,
                FileAttributeTagInfo,
                &mut info as *mut _ as *mut core::ffi::c_void,
                std::mem::size_of::<FILE_ATTRIBUTE_TAG_INFO>() as u32,
            )
        })?;
        let is_plain_dir = info.FileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0
            && info.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT == 0;
        // Where the handle really is must be where we asked: a link the file system does
        // not report as a reparse point (Wine shows a Unix symbolic link as a plain
        // directory) still resolves elsewhere, and that is refused too.
        // The root is trusted as configured (its own parents may be links); below it,
        // every directory must be exactly where the walk expects it.
        let real = final_path(&handle).unwrap_or_else(|_| path.to_path_buf());
        let lands_elsewhere = !is_root && !same_path(&real, path);
        if !is_plain_dir || lands_elsewhere {
            return Err(link_refused(path.file_name().unwrap_or(path.as_os_str())));
        }
        Ok((handle, real))
    }

    /// The path the system resolves an open handle to.
    fn final_path(handle: &OwnedHandle) -> io::Result<PathBuf> {
        let mut buffer = vec![0u16; 1024];
        // SAFETY: the buffer holds `len` characters.
        let len = unsafe {
            GetFinalPathNameByHandleW(
                handle.as_raw_handle() as HANDLE,
                buffer.as_mut_ptr(),
                buffer.len() as u32,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if len == 0 || len >= buffer.len() {
            return Err(io::Error::last_os_error());
        }
        Ok(PathBuf::from(String::from_utf16_lossy(&buffer[..len])))
    }

    /// Two absolute paths name one place: compared without the `\\?\` prefix, case
    /// folded, either separator.
    fn same_path(a: &Path, b: &Path) -> bool {
        let norm = |p: &Path| {
            let text = p.to_string_lossy().replace('/', "\\");
            let text = text
                .strip_prefix(r"\\?\")
                .unwrap_or(&text)
                .trim_end_matches('\\');
            text.to_lowercase()
        };
        norm(a) == norm(b)
    }

    impl Dir {
        pub fn open_root(path: &Path) -> io::Result<Dir> {
            let (handle, path) = open_dir(path, true)?;
            Ok(Dir { handle, path })
        }

        pub fn child(&self, name: &OsStr) -> io::Result<Dir> {
            let path = self.path.join(name);
            // SAFETY: a NUL-terminated path.
            if unsafe { CreateDirectoryW(wide(&path).as_ptr(), std::ptr::null()) } == 0 {
                let error = io::Error::last_os_error();
                if error.raw_os_error() != Some(ERROR_ALREADY_EXISTS as i32) {
                    return Err(error);
                }
            }
            let (handle, path) = open_dir(&path, false)?;
            Ok(Dir { handle, path })
        }

        pub fn create_new(&self, name: &OsStr) -> io::Result<File> {
            // Shared for delete only, so the finished file can be renamed into place
            // while this handle is still open.
            // SAFETY: a NUL-terminated path; the handle is owned below.
            let handle = unsafe {
                CreateFileW(
                    wide(self.path.join(name)).as_ptr(),
                    GENERIC_WRITE,
                    FILE_SHARE_DELETE,
                    std::ptr::null(),
                    CREATE_NEW,
                    FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
                    std::ptr::null_mut(),
                )
            };
            if handle == INVALID_HANDLE_VALUE {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: a fresh handle nothing else owns.
            Ok(unsafe { File::from_raw_handle(handle as RawHandle) })
        }

        pub fn rename(&self, from: &OsStr, to: &OsStr, overwrite: bool) -> io::Result<()> {
            // A rename replaces a link at the final name; it never follows it.
            let flags = MOVEFILE_WRITE_THROUGH
                | if overwrite {
                    MOVEFILE_REPLACE_EXISTING
                } else {
                    0
                };
            // SAFETY: NUL-terminated paths inside a directory we hold.
            let moved = unsafe {
                MoveFileExW(
                    wide(self.path.join(from)).as_ptr(),
                    wide(self.path.join(to)).as_ptr(),
                    flags,
                )
            };
            if moved == 0 {
                let error = io::Error::last_os_error();
                if error.raw_os_error() == Some(ERROR_ALREADY_EXISTS as i32)
                    || error.raw_os_error() == Some(80)
                {
                    return Err(io::ErrorKind::AlreadyExists.into());
                }
                return Err(error);
            }
            Ok(())
        }

        pub fn remove_file(&self, name: &OsStr) -> io::Result<()> {
            // SAFETY: a NUL-terminated path; a link is removed, not its target.
            check(unsafe { DeleteFileW(wide(self.path.join(name)).as_ptr()) })
        }

        /// Renames are written through (`MOVEFILE_WRITE_THROUGH`); a directory has
        /// nothing more to flush on Windows.
        pub fn sync(&self) -> io::Result<()> {
            let _ = &self.handle;
            Ok(())
        }
    }
}

impl Dir {
    /// The directories from `root` down through `parts`, each made if missing and each
    /// refused if it is a link; the last one is returned (held, with all above it on
    /// Windows).
    pub fn walk(root: &Path, parts: &[&OsStr]) -> io::Result<Walk> {
        let mut held = vec![Dir::open_root(root)?];
        for part in parts {
            let next = held.last().map(|d| d.child(part)).transpose()?;
            held.extend(next);
        }
        Ok(Walk { held })
    }
}

/// A walk's directories, root first; the last is where the file goes.
pub struct Walk {
    held: Vec<Dir>,
}

impl Walk {
    pub fn dir(&self) -> &Dir {
        self.held.last().expect("a walk holds at least its root")
    }
}

/// Why Windows would not store `name` as given, if it would not: a stream name
/// (`a.png:evil`), a device name (`CON`, `nul.txt`, `COM1`), a trailing dot or space
/// (dropped silently, so two names would meet), or a character Windows forbids. Checked
/// on every platform's unit tests; enforced on Windows.
pub fn windows_name_problem(name: &str) -> Option<&'static str> {
    const DEVICES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    if name.contains(':') {
        return Some("holds ':' (an alternate data stream on Windows)");
    }
    if name
        .chars()
        .any(|c| matches!(c, '<' | '>' | '"' | '|' | '?' | '*') || (c as u32) < 32)
    {
        return Some("holds a character Windows does not allow in file names");
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some("ends with a dot or a space, which Windows drops");
    }
    // `nul.txt` and `COM1 .png` name the device as surely as `NUL`.
    let stem = name
        .split('.')
        .next()
        .unwrap_or(name)
        .trim_end()
        .to_ascii_uppercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|n| {
            matches!(
                n,
                "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³"
            )
        })
    };
    if DEVICES.contains(&stem.as_str())
        || numbered("COM")
        || numbered("LPT")
        || stem == "CONIN$"
        || stem == "CONOUT$"
    {
        return Some("is a device name on Windows (CON, PRN, AUX, NUL, COM1–9, LPT1–9)");
    }
    None
}

/// Why this OS would not store `name` as given, if it would not.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if cfg!(windows) {
        windows_name_problem(name)
    } else {
        None
    }
}

/// `path` below `root`, if it is: components compared as the file system compares them
/// (case-insensitively on Windows and macOS, where `C:\Users\Out` and `c:\users\out` are
/// one folder).
pub fn strip_root<'a>(path: &'a Path, root: &Path) -> Option<&'a Path> {
    if !cfg!(any(windows, target_os = "macos")) {
        return path.strip_prefix(root).ok();
    }
    let mut rest = path.components();
    for wanted in root.components() {
        let got = rest.next()?;
        let same = got.as_os_str().to_string_lossy().to_lowercase()
            == wanted.as_os_str().to_string_lossy().to_lowercase();
        if !same {
            return None;
        }
    }
    Some(rest.as_path())
}

/// A path as a user would write it: on Windows, `\\?\C:\x` is shown as `C:\x` (when that
/// names the same file); elsewhere unchanged.
pub fn display_path(path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    if cfg!(windows)
        && let Some(rest) = text.strip_prefix(r"\\?\")
        && rest.as_bytes().get(1) == Some(&b':')
        && rest.len() < 260
    {
        return PathBuf::from(rest);
    }
    path.to_path_buf()
}

/// `path` with links resolved, shown as a user would write it.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    Ok(display_path(&path.canonicalize()?))
}

/// Opens a file for reading (used for files handed to a page).
pub fn open_read(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tw-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn windows_names_that_do_not_round_trip_are_named() {
        for bad in [
            "a.png:evil",
            "CON",
            "con",
            "nul.txt",
            "COM1",
            "lpt9.log",
            "COM1 .png",
            "a.",
            "a ",
            "a?b",
            "a*b",
            "a|b",
            "CONOUT$",
            "com²",
        ] {
            assert!(windows_name_problem(bad).is_some(), "{bad}");
        }
        for good in [
            "a.png",
            "console.log",
            "COM10",
            "nullable",
            "a b.txt",
            "com",
            "LPT",
        ] {
            assert_eq!(windows_name_problem(good), None, "{good}");
        }
    }

    #[test]
    fn a_walk_makes_directories_and_files_land_once() {
        let root = scratch("walk");
        let walk = Dir::walk(&root, &[OsStr::new("a"), OsStr::new("b")]).unwrap();
        let mut file = walk.dir().create_new(OsStr::new("t.partial")).unwrap();
        std::io::Write::write_all(&mut file, b"x").unwrap();
        assert!(walk.dir().create_new(OsStr::new("t.partial")).is_err());
        walk.dir()
            .rename(OsStr::new("t.partial"), OsStr::new("t"), false)
            .unwrap();
        drop(file);
        std::fs::write(root.join("a/b/u"), b"y").unwrap();
        let again = walk.dir().create_new(OsStr::new("v")).unwrap();
        drop(again);
        let refused = walk.dir().rename(OsStr::new("v"), OsStr::new("u"), false);
        assert_eq!(refused.unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        walk.dir()
            .rename(OsStr::new("v"), OsStr::new("u"), true)
            .unwrap();
        walk.dir().remove_file(OsStr::new("u")).unwrap();
        drop(walk);
        assert_eq!(std::fs::read(root.join("a/b/t")).unwrap(), b"x");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_linked_directory_fails_the_walk() {
        let root = scratch("linked");
        let outside = scratch("linked-outside");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, root.join("shots")).unwrap();
        #[cfg(windows)]
        {
            let made = std::os::windows::fs::symlink_dir(&outside, root.join("shots")).is_ok()
                && std::fs::symlink_metadata(root.join("shots")).is_ok_and(|m| m.is_symlink());
            if !made {
                // Wine 8 answers success and makes nothing. scripts/test-windows.sh plants
                // a Unix symbolic link (which Wine shows as a plain directory) instead.
                let Some(planted) = std::env::var_os("TABWIRE_PLANTED_LINK_ROOT") else {
                    eprintln!("SKIPPED: no symbolic link can be made here");
                    return;
                };
                let error = Dir::walk(Path::new(&planted), &[OsStr::new("shots")]).err();
                let error = error.expect("a walk through the planted link is refused");
                assert_eq!(error.kind(), io::ErrorKind::PermissionDenied, "{error}");
                return;
            }
        }
        let error = Dir::walk(&root, &[OsStr::new("shots")])
            .err()
            .expect("refused");
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied, "{error}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        std::fs::remove_dir_all(root).unwrap();
        std::fs::remove_dir_all(outside).unwrap();
    }

    #[test]
    fn roots_compare_as_the_file_system_does() {
        let root = Path::new("/data/Out");
        assert_eq!(
            strip_root(Path::new("/data/Out/a"), root),
            Some(Path::new("a"))
        );
        assert_eq!(strip_root(Path::new("/data/Other/a"), root), None);
        let folded = strip_root(Path::new("/data/out/a"), root);
        assert_eq!(folded.is_some(), cfg!(any(windows, target_os = "macos")));
    }
}
