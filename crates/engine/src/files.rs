//! Files the engine writes: always inside a root directory (the output dir, a download
//! root, the state dir), never through `..`, an absolute path or a symbolic link, and
//! atomically (a temporary file, fsync, renamed into place).
//!
//! Confinement is enforced by the operating system, not by looking first: the path is
//! walked one directory at a time from the root without following links
//! (`platform::fs::Dir`: `openat(O_NOFOLLOW)` on Unix; reparse points refused and each
//! directory held on Windows), so a link planted anywhere below the root (even while we
//! write) makes the write fail instead of landing elsewhere, and the file itself is
//! created only where nothing is. Names the platform would not store as given (on
//! Windows `a.png:stream`, `CON`, a trailing dot) are refused when the path is made. The
//! work is blocking, so the async entry points run it on the blocking pool; file contents
//! are hashed and copied in chunks, never read whole.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use platform::fs::{Dir, Walk};

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

/// The output dir's staging folder: where the browser saves what pages download, and
/// where the engine writes a trace, a GIF or a response body before it is moved into
/// place (`move_into`). Its files are created through the same confined walk as every
/// other write, so a link planted at `.staging` cannot send one elsewhere.
#[derive(Debug, Clone)]
pub struct Staging {
    dir: ConfinedDir,
}

impl Staging {
    const NAME: &'static str = ".staging";

    pub fn of(output_dir: &Path) -> Staging {
        Staging {
            dir: ConfinedDir {
                root: output_dir.to_path_buf(),
                relative: PathBuf::from(Self::NAME),
            },
        }
    }

    /// The folder itself (the browser's download folder is set to it).
    pub fn path(&self) -> PathBuf {
        self.dir.path()
    }

    /// Where the staged file `name` is (the browser names a download by its guid).
    pub fn file(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }

    /// Creates the folder (and the output dir), none of it through a link.
    pub fn create_dir(&self) -> Result<()> {
        self.open()
            .map(drop)
            .map_err(|e| EngineError::io(format!("cannot create {}", self.path().display()), e))
    }

    /// A new file of a name made from `kind` (`trace-…`), created through the confined
    /// walk: its path and the file, open for writing.
    pub fn create(&self, kind: &str) -> Result<(PathBuf, std::fs::File)> {
        let path = self.file(&crate::ids::unique(kind));
        let file = self.create_at(&path)?;
        Ok((path, file))
    }

    /// Creates the staged file at `path` (one of `file`'s), through the confined walk.
    pub fn create_at(&self, path: &Path) -> Result<std::fs::File> {
        let io = |e: std::io::Error| EngineError::io(format!("cannot write {}", path.display()), e);
        let name = path
            .strip_prefix(self.path())
            .ok()
            .filter(|name| name.components().count() == 1)
            .ok_or_else(|| EngineError::Io(format!("{} is not staged", path.display())))?;
        self.open()
            .and_then(|walk| walk.dir().create_new(name.as_os_str()))
            .map_err(io)
    }

    /// The folder, made if missing, walked to from the output dir without following links.
    fn open(&self) -> std::io::Result<Walk> {
        std::fs::create_dir_all(&self.dir.root)?;
        Dir::walk(&self.dir.root, &[OsStr::new(Self::NAME)])
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
            Component::Normal(part) => {
                if let Some(problem) = platform::fs::name_problem(&part.to_string_lossy()) {
                    return Err(EngineError::invalid(
                        input,
                        format!("'{relative}': '{}' {problem}", part.to_string_lossy()),
                    ));
                }
                clean.push(part)
            }
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
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                normal.push(component)
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    roots.iter().find_map(|root| {
        let rest = platform::fs::strip_root(&normal, root)?;
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
    let walk = open_parent(target).map_err(io)?;
    let dir = walk.dir();
    let temp = temp_name(target.file_name());
    let mut file = dir.create_new(&temp).map_err(io)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| dir.rename(&temp, target.file_name(), true));
    drop(file);
    if let Err(error) = written {
        let _ = dir.remove_file(&temp);
        return Err(io(error));
    }
    let _ = dir.sync();
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
        let walk = open_parent(&target).map_err(io)?;
        let dir = walk.dir();
        let temp = temp_name(target.file_name());
        let mut output = dir.create_new(&temp).map_err(io)?;
        let copied = copy_hashing(&mut input, &mut output).and_then(|(bytes, sha256)| {
            output.sync_all()?;
            dir.rename(&temp, target.file_name(), overwrite)?;
            Ok((bytes, sha256))
        });
        drop(output);
        match copied {
            Ok((bytes, sha256)) => {
                let _ = dir.sync();
                Ok(Written {
                    path: shown,
                    bytes,
                    sha256,
                })
            }
            Err(error) => {
                let _ = dir.remove_file(&temp);
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
    let canonical = std::fs::canonicalize(path).map_err(|e| match e.kind() {
        // A file that is not there is named as such, apart from a path that is wrong.
        std::io::ErrorKind::NotFound => EngineError::refused_input(
            ErrorCode::NotFound,
            Input::Files,
            format!("'{path}' does not exist"),
        ),
        _ => EngineError::invalid(Input::Files, format!("'{path}': {e}")),
    })?;
    if !canonical.is_file() {
        return Err(EngineError::invalid(
            Input::Files,
            format!("'{path}' is not a regular file"),
        ));
    }
    let inside = roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .any(|root| platform::fs::strip_root(&canonical, &root).is_some());
    if !inside {
        return Err(refused(format!(
            "'{path}' is outside the allowed upload roots"
        )));
    }
    Ok(platform::fs::display_path(&canonical).display().to_string())
}

/// A file name made from what an agent called a thing: letters, digits, `-`, `_` and
/// `.` kept, anything else (slashes included) made `_`, no leading or trailing dots;
/// `fallback` when nothing is left.
pub fn safe_name(name: &str, fallback: &str) -> String {
    let cleaned: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = cleaned.trim_matches('.');
    if cleaned.is_empty() {
        fallback.to_owned()
    } else {
        cleaned.to_owned()
    }
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

fn temp_name(final_name: &OsStr) -> OsString {
    OsString::from(format!(
        ".{}.{}.partial",
        final_name.to_string_lossy(),
        crate::ids::unique("w")
    ))
}

/// Opens the target's parent directory, creating directories on the way, none of them
/// through a link.
fn open_parent(target: &ConfinedPath) -> std::io::Result<Walk> {
    std::fs::create_dir_all(&target.root)?;
    let parent = target.relative.parent().unwrap_or(Path::new(""));
    let parts: Vec<&OsStr> = parent.components().map(|c| c.as_os_str()).collect();
    Dir::walk(&target.root, &parts)
}

#[cfg(test)]
mod tests {

    #[test]
    fn names_agents_give_become_safe_file_names() {
        assert_eq!(super::safe_name("form tour", "x"), "form_tour");
        assert_eq!(super::safe_name("../../etc/passwd", "x"), "_.._etc_passwd");
        assert_eq!(super::safe_name(" ..hidden.. ", "x"), "hidden");
        assert_eq!(super::safe_name("", "fallback"), "fallback");
        assert_eq!(super::safe_name("...", "fallback"), "fallback");
        assert_eq!(super::safe_name("Résumé-1_a.png", "x"), "Résumé-1_a.png");
    }

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

    /// Every way a Windows path can leave the root, or name something other than a plain
    /// file inside it, is refused before anything is written.
    #[cfg(windows)]
    #[test]
    fn windows_escapes_are_refused() {
        let root = std::env::temp_dir().join("tw-out");
        for bad in [
            r"C:x.png",
            r"C:\x.png",
            r"\x.png",
            r"/x.png",
            r"\\?\C:\x.png",
            r"\\.\C:\x.png",
            r"\\server\share\x.png",
            r"//server/share/x.png",
            r"a.png:evil",
            r"a.png::$DATA",
            "CON",
            "nul.txt",
            r"shots\COM1",
            "LPT9.png",
            r"a\..\..\x.png",
            r"..\x.png",
            "a.png.",
            "a.png ",
        ] {
            assert!(
                confined_path(&root, bad, Input::OutputPath).is_err(),
                "{bad}"
            );
        }
        let ok = confined_path(&root, r"shots\a.png", Input::OutputPath).unwrap();
        assert_eq!(ok.path(), root.join("shots").join("a.png"));
        let roots = [PathBuf::from(r"C:\Users\Me\Out")];
        let found = dir_within_roots(&roots, Path::new(r"c:\users\me\out\q3"), Input::Directory);
        assert!(found.is_some(), "a case-folded root is the same folder");
        let outside = dir_within_roots(&roots, Path::new(r"C:\Users\Me\Outside"), Input::Directory);
        assert!(outside.is_none());
        assert!(
            dir_within_roots(&roots, Path::new(r"C:\Users\Me\Out\..\x"), Input::Directory)
                .is_none()
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

    #[cfg(unix)]
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

    #[test]
    fn staged_files_are_made_inside_the_staging_folder_only() {
        let dir = scratch("staging");
        let staging = Staging::of(&dir.join("out"));
        let (path, file) = staging.create("trace").unwrap();
        assert_eq!(path.parent(), Some(staging.path().as_path()));
        assert!(path.is_file());
        // Windows removes no folder with a file open in it.
        drop(file);
        // A path outside it, or below a folder in it, is refused.
        assert!(staging.create_at(&dir.join("elsewhere.gif")).is_err());
        assert!(staging.create_at(&staging.file("a/b.gif")).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_as_the_staging_folder_is_not_followed() {
        let dir = scratch("staging-link");
        let root = dir.join("out");
        let outside = dir.join("elsewhere");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".staging")).unwrap();
        let staging = Staging::of(&root);
        assert!(staging.create("stream").is_err());
        assert!(staging.create_dir().is_err());
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

    /// (Windows roots have a drive: `windows_escapes_are_refused` covers them.)
    #[cfg(unix)]
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
