//! Files the engine writes: always under the output directory, never through `..` or an
//! absolute path, and atomically (a temporary file renamed into place).

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{EngineError, Result};

/// Resolves a caller's relative path under `root`, refusing escapes.
pub fn confined_path(root: &Path, relative: &str, param: &str) -> Result<PathBuf> {
    let candidate = Path::new(relative);
    if relative.trim().is_empty() {
        return Err(EngineError::invalid(param, "must not be empty"));
    }
    if candidate.is_absolute() {
        return Err(EngineError::Refused {
            code: "path_outside_output_dir".into(),
            message: format!(
                "{param}: '{relative}' is absolute; give a path relative to the output dir {}",
                root.display()
            ),
        });
    }
    for component in candidate.components() {
        if !matches!(component, Component::Normal(_) | Component::CurDir) {
            return Err(EngineError::Refused {
                code: "path_outside_output_dir".into(),
                message: format!(
                    "{param}: '{relative}' leaves the output dir {} ('..' is not allowed)",
                    root.display()
                ),
            });
        }
    }
    Ok(root.join(candidate))
}

/// Writes bytes atomically, creating parent directories. Returns the path and sha256.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(PathBuf, String)> {
    let io = |e: std::io::Error| EngineError::Io(format!("cannot write {}: {e}", path.display()));
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(io)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let temp = parent.join(format!(".{file_name}.{}.partial", std::process::id()));
    let mut file = std::fs::File::create(&temp).map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        io(e)
    })?;
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    Ok((absolute, sha256_hex(bytes)))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_refused() {
        let root = Path::new("/tmp/out");
        for bad in ["/etc/passwd", "../x", "a/../../x", ""] {
            assert!(confined_path(root, bad, "save_path").is_err(), "{bad}");
        }
        assert_eq!(
            confined_path(root, "shots/a.png", "save_path").unwrap(),
            root.join("shots/a.png")
        );
    }

    #[test]
    fn atomic_write_leaves_only_the_file() {
        let dir = std::env::temp_dir().join(format!("tw-files-{}", std::process::id()));
        let (path, sha) = write_atomic(&dir.join("a/b.txt"), b"hello").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert_eq!(
            sha,
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert_eq!(std::fs::read_dir(dir.join("a")).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
