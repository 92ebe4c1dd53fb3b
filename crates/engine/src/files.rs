//! Files the engine writes: always inside a root directory (the output dir, a download
//! root, the state dir), never through `..`, an absolute path or a symbolic link, and
//! atomically (a temporary file, fsync, renamed into place).
//!
//! Confinement is enforced by the kernel, not by looking first: the path is walked one
//! directory at a time from the root with `openat(O_NOFOLLOW | O_DIRECTORY)`, so a link
//! planted anywhere below the root (even while we write) makes the write fail instead of
//! landing elsewhere, and the file itself is created with `O_NOFOLLOW | O_EXCL`. The work
//! is blocking, so the async entry points run it on the blocking pool; file contents are
//! hashed and copied in chunks, never read whole.

use std::ffi::{CString, OsStr};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{EngineError, ErrorCode, Input, Result};

/// A path inside a root, checked lexically when made and by the kernel when written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinedPath {
    root: PathBuf,
    /// Only normal components; never empty.
    relative: PathBuf,
}

/// A file that was written: where, how many bytes, and their sha256.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: PathBuf,
    pub bytes: u64,
    pub sha256: String,
}

impl ConfinedPath {
    /// The path as a caller would open it.
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.relative)
    }

    pub fn file_name(&self) -> &OsStr {
        self.relative.file_name().unwrap_or_default()
    }
}

/// A directory inside a root (possibly the root itself), where files are then named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfinedDir {
    root: PathBuf,
    relative: PathBuf,
}

impl ConfinedDir {
    /// The root itself.
    pub fn root(root: &Path) -> ConfinedDir {
        ConfinedDir {
            root: root.to_path_buf(),
            relative: PathBuf::new(),
        }
    }

    /// A directory relative to `root`, checked like a file path.
    pub fn under(root: &Path, relative: &str, input: Input) -> Result<ConfinedDir> {
        let path = confined_path(root, relative, input)?;
        Ok(ConfinedDir {
            root: path.root,
            relative: path.relative,
        })
    }

    pub fn path(&self) -> PathBuf {
        self.root.join(&self.relative)
    }

    /// A file (or a relative path) inside this directory.
    pub fn file(&self, name: &str, input: Input) -> Result<ConfinedPath> {
        let checked = confined_path(&self.root, name, input)?;
        Ok(ConfinedPath {
            root: self.root.clone(),
            relative: self.relative.join(checked.relative),
        })
    }
}

/// Resolves a caller's relative path under `root`, refusing escapes.
pub fn confined_path(root: &Path, relative: &str, input: Input) -> Result<ConfinedPath> {
    if relative.trim().is_empty() {
        return Err(EngineError::invalid(input, "must not be empty"));
    }
    let candidate = Path::new(relative);
    if candidate.is_absolute() {
        return Err(EngineError::refused_input(
            ErrorCode::PathOutsideOutputDir,
            input,
            format!(
                "'{relative}' is absolute; give a path relative to {}",
                root.display()
            ),
        ));
    }
    let mut clean = PathBuf::new();
    for component in candidate.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            _ => {
                return Err(EngineError::refused_input(
                    ErrorCode::PathOutsideOutputDir,
                    input,
                    format!(
                        "'{relative}' leaves {} ('..' is not allowed)",
                        root.display()
                    ),
                ));
            }
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(EngineError::invalid(input, "names no file"));
    }
    Ok(ConfinedPath {
        root: root.to_path_buf(),
        relative: clean,
    })
}

/// An absolute directory that lies inside one of `roots` (lexically; each write checks
/// the rest with the kernel), as a directory confined to that root.
pub fn dir_within_roots(roots: &[PathBuf], absolute: &Path, input: Input) -> Option<ConfinedDir> {
    if !absolute.is_absolute() {
        return None;
    }
    let mut normal = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::RootDir | Component::Normal(_) => normal.push(component),
            Component::CurDir => {}
            _ => return None,
        }
    }
    roots.iter().find_map(|root| {
        let rest = normal.strip_prefix(root).ok()?;
        if rest.as_os_str().is_empty() {
            return Some(ConfinedDir::root(root));
        }
        ConfinedDir::under(root, &rest.to_string_lossy(), input).ok()
    })
}

/// Writes bytes atomically at a confined path, creating parent directories.
pub async fn write_atomic(target: ConfinedPath, bytes: Vec<u8>) -> Result<Written> {
    blocking(move || write_atomic_blocking(&target, &bytes)).await
}

/// The same, for code that is not async (the binary's set-up commands).
pub fn write_atomic_blocking(target: &ConfinedPath, bytes: &[u8]) -> Result<Written> {
    let shown = target.path();
    let io = |e: std::io::Error| EngineError::io(format!("cannot write {}", shown.display()), e);
    let dir = open_parent(target).map_err(io)?;
    let temp = temp_name(target.file_name());
    let mut file = create_new(&dir, &temp).map_err(io)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| rename_at(&dir, &temp, target.file_name(), true));
    if let Err(error) = written {
        let _ = unlink_at(&dir, &temp);
        return Err(io(error));
    }
    let _ = sync_dir(&dir);
    Ok(Written {
        path: shown,
        bytes: bytes.len() as u64,
        sha256: sha256_hex(bytes),
    })
}

/// Writes a file at an absolute path whose parent the caller chose (a config or state
/// file), atomically; the parent is created if missing.
pub fn write_file_blocking(path: &Path, bytes: &[u8]) -> Result<Written> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(EngineError::Io(format!("{} names no file", path.display())));
    };
    std::fs::create_dir_all(parent)
        .map_err(|e| EngineError::io(format!("cannot create {}", parent.display()), e))?;
    let target = confined_path(parent, &name.to_string_lossy(), Input::OutputPath)?;
    write_atomic_blocking(&target, bytes)
}

/// Copies a file (which may live anywhere, e.g. the browser's own download folder) to a
/// confined path, in chunks, hashing as it goes. `overwrite: false` refuses an existing
/// name.
pub async fn copy_into(source: PathBuf, target: ConfinedPath, overwrite: bool) -> Result<Written> {
    blocking(move || {
        let shown = target.path();
        let io =
            |e: std::io::Error| EngineError::io(format!("cannot write {}", shown.display()), e);
        let mut input = std::fs::File::open(&source)
            .map_err(|e| EngineError::io(format!("cannot read {}", source.display()), e))?;
        let dir = open_parent(&target).map_err(io)?;
        let temp = temp_name(target.file_name());
        let mut output = create_new(&dir, &temp).map_err(io)?;
        let copied = copy_hashing(&mut input, &mut output).and_then(|(bytes, sha256)| {
            output.sync_all()?;
            rename_at(&dir, &temp, target.file_name(), overwrite)?;
            Ok((bytes, sha256))
        });
        match copied {
            Ok((bytes, sha256)) => {
                let _ = sync_dir(&dir);
                Ok(Written {
                    path: shown,
                    bytes,
                    sha256,
                })
            }
            Err(error) => {
                let _ = unlink_at(&dir, &temp);
                Err(exists_or(error, &target, io))
            }
        }
    })
    .await
}

/// Moves a file we staged (inside `staging`, a directory of ours) to a confined path,
/// hashing it on the way. The staged file is removed whatever happens.
pub async fn move_into(staged: PathBuf, target: ConfinedPath, overwrite: bool) -> Result<Written> {
    let copy = copy_into(staged.clone(), target, overwrite).await;
    let _ = tokio::fs::remove_file(&staged).await;
    copy
}

/// The canonical paths of files that may be read (handed to a page): each must be a
/// regular file whose real path, links resolved, lies under one of `roots`.
pub async fn readable_files(roots: &[PathBuf], paths: &[String]) -> Result<Vec<String>> {
    let (roots, paths) = (roots.to_vec(), paths.to_vec());
    blocking(move || {
        paths
            .iter()
            .map(|path| readable_file(&roots, path))
            .collect()
    })
    .await
}

fn readable_file(roots: &[PathBuf], path: &str) -> Result<String> {
    let refused =
        |why: String| EngineError::refused_input(ErrorCode::PathNotAllowed, Input::Files, why);
    if roots.is_empty() {
        return Err(refused(
            "no upload root is configured, so no file can be read".into(),
        ));
    }
    let canonical = std::fs::canonicalize(path)
        .map_err(|e| EngineError::invalid(Input::Files, format!("'{path}': {e}")))?;
    if !canonical.is_file() {
        return Err(EngineError::invalid(
            Input::Files,
            format!("'{path}' is not a regular file"),
        ));
    }
    let inside = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|root| canonical.starts_with(root));
    if !inside {
        return Err(refused(format!(
            "'{path}' is outside the allowed upload roots"
        )));
    }
    Ok(canonical.display().to_string())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| EngineError::Io(format!("file task failed: {e}")))?
}

fn exists_or(
    error: std::io::Error,
    target: &ConfinedPath,
    io: impl Fn(std::io::Error) -> EngineError,
) -> EngineError {
    if error.kind() == std::io::ErrorKind::AlreadyExists {
        EngineError::refused(
            ErrorCode::FileExists,
            format!(
                "{} exists and overwriting was not asked for",
                target.path().display()
            ),
        )
    } else {
        io(error)
    }
}

fn copy_hashing(input: &mut impl Read, output: &mut impl Write) -> std::io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut total = 0u64;
    loop {
        let read = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buffer[..read]);
        output.write_all(&buffer[..read])?;
        total += read as u64;
    }
    Ok((total, hex(&hasher.finalize())))
}

fn temp_name(final_name: &OsStr) -> CString {
    let name = format!(
        ".{}.{}.partial",
        final_name.to_string_lossy(),
        crate::ids::unique("w")
    );
    c_name(OsStr::new(&name))
}

fn c_name(name: &OsStr) -> CString {
    // A path component from a normal component never holds a NUL.
    CString::new(name.as_bytes()).unwrap_or_default()
}

/// Opens the target's parent directory, creating directories on the way, each opened
/// relative to the one before with O_NOFOLLOW: a symbolic link anywhere fails the walk.
fn open_parent(target: &ConfinedPath) -> std::io::Result<OwnedFd> {
    std::fs::create_dir_all(&target.root)?;
    let root = c_name(target.root.as_os_str());
    let mut dir = open_dir(libc::AT_FDCWD, &root)?;
    let parent = target.relative.parent().unwrap_or(Path::new(""));
    for component in parent.components() {
        let name = c_name(component.as_os_str());
        // SAFETY: dir is an open directory fd and name a NUL-terminated string.
        let made = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) };
        if made != 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::AlreadyExists {
                return Err(error);
            }
        }
        dir =
            open_dir(dir.as_raw_fd(), &name).map_err(|e| refuse_link(e, component.as_os_str()))?;
    }
    Ok(dir)
}

fn open_dir(at: libc::c_int, name: &CString) -> std::io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: name is NUL-terminated; the returned fd is owned below.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: openat returned a fresh fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A link where a directory was expected reads ELOOP or ENOTDIR; say so plainly.
fn refuse_link(error: std::io::Error, name: &OsStr) -> std::io::Error {
    match error.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "'{}' is a symbolic link or not a directory; files are never written through links",
                name.to_string_lossy()
            ),
        ),
        _ => error,
    }
}

fn create_new(dir: &OwnedFd, name: &CString) -> std::io::Result<std::fs::File> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: dir is an open directory fd, name NUL-terminated; the fd is owned below.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, 0o644 as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: openat returned a fresh fd that nothing else owns.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Renames within one directory. A rename replaces a link at the final name rather than
/// following it. Without `overwrite`, an existing name is refused atomically where the
/// platform can (Linux).
fn rename_at(dir: &OwnedFd, from: &CString, to: &OsStr, overwrite: bool) -> std::io::Result<()> {
    let to = c_name(to);
    let fd = dir.as_raw_fd();
    #[cfg(target_os = "linux")]
    let rc = {
        let flags = if overwrite { 0 } else { libc::RENAME_NOREPLACE };
        // SAFETY: both names are NUL-terminated and relative to one open directory fd.
        unsafe { libc::renameat2(fd, from.as_ptr(), fd, to.as_ptr(), flags) }
    };
    #[cfg(not(target_os = "linux"))]
    let rc = {
        if !overwrite {
            let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: stat is a valid buffer; names are NUL-terminated.
            let exists = unsafe {
                libc::fstatat(
                    fd,
                    to.as_ptr(),
                    stat.as_mut_ptr(),
                    libc::AT_SYMLINK_NOFOLLOW,
                )
            } == 0;
            if exists {
                return Err(std::io::Error::from(std::io::ErrorKind::AlreadyExists));
            }
        }
        // SAFETY: both names are NUL-terminated and relative to one open directory fd.
        unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) }
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn unlink_at(dir: &OwnedFd, name: &CString) -> std::io::Result<()> {
    // SAFETY: name is NUL-terminated and relative to an open directory fd.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the rename itself durable.
fn sync_dir(dir: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: fsync on an open fd we own.
    if unsafe { libc::fsync(dir.as_raw_fd()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tw-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn escapes_are_refused() {
        let root = Path::new("/tmp/out");
        for bad in ["/etc/passwd", "../x", "a/../../x", "", "."] {
            assert!(
                confined_path(root, bad, Input::OutputPath).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            confined_path(root, "./shots/a.png", Input::OutputPath)
                .unwrap()
                .path(),
            root.join("shots/a.png")
        );
    }

    #[test]
    fn atomic_write_leaves_only_the_file() {
        let dir = scratch("atomic");
        let target = confined_path(&dir, "a/b.txt", Input::OutputPath).unwrap();
        let written = write_atomic_blocking(&target, b"hello").unwrap();
        assert_eq!(std::fs::read(&written.path).unwrap(), b"hello");
        assert_eq!(
            written.sha256,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(std::fs::read_dir(dir.join("a")).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_link_inside_the_root_is_never_followed() {
        let dir = scratch("links");
        let root = dir.join("out");
        let outside = dir.join("elsewhere");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        // A directory link, and a file link at the final name.
        std::os::unix::fs::symlink(&outside, root.join("shots")).unwrap();
        std::os::unix::fs::symlink(outside.join("victim"), root.join("a.png")).unwrap();
        let through_dir = confined_path(&root, "shots/x.png", Input::OutputPath).unwrap();
        assert!(write_atomic_blocking(&through_dir, b"x").is_err());
        let at_link = confined_path(&root, "a.png", Input::OutputPath).unwrap();
        write_atomic_blocking(&at_link, b"png").unwrap();
        // The link itself was replaced; nothing landed outside.
        assert!(
            !std::fs::symlink_metadata(root.join("a.png"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn a_copy_refuses_an_existing_name_unless_asked() {
        let dir = scratch("copy");
        let source = dir.join("source.bin");
        std::fs::write(&source, vec![7u8; 300_000]).unwrap();
        let target = confined_path(&dir, "out/copy.bin", Input::Filename).unwrap();
        let first = copy_into(source.clone(), target.clone(), false)
            .await
            .unwrap();
        assert_eq!(first.bytes, 300_000);
        assert_eq!(first.sha256, sha256_hex(&vec![7u8; 300_000]));
        let again = copy_into(source.clone(), target.clone(), false).await;
        assert_eq!(again.unwrap_err().code(), ErrorCode::FileExists);
        copy_into(source, target, true).await.unwrap();
        assert_eq!(std::fs::read_dir(dir.join("out")).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn absolute_paths_are_placed_under_their_root() {
        let roots = [PathBuf::from("/data/out"), PathBuf::from("/data/reports")];
        let found =
            dir_within_roots(&roots, Path::new("/data/reports/q3"), Input::Directory).unwrap();
        let file = found.file("a.csv", Input::Filename).unwrap();
        assert_eq!(file.path(), PathBuf::from("/data/reports/q3/a.csv"));
        assert!(dir_within_roots(&roots, Path::new("/data/other/a"), Input::Directory).is_none());
        assert!(dir_within_roots(&roots, Path::new("/data/out/../x"), Input::Directory).is_none());
        assert!(found.file("../b", Input::Filename).is_err());
    }
}
