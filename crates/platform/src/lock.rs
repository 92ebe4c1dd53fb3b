//! A lock file held for a process's life: one broker per browser.
//!
//! The operating system releases it when the process ends, however it ends (flock on
//! Unix, LockFileEx on Windows, both through `std::fs::File::try_lock`).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// Holds the lock until dropped.
pub struct Held {
    _file: File,
}

/// Takes the lock at `path`, or None if another process holds it.
pub fn try_lock(path: &Path) -> std::io::Result<Option<Held>> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(Held { _file: file })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(error)) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_held_lock_is_refused_until_released() {
        let path = std::env::temp_dir().join(format!("tw-lock-{}", std::process::id()));
        let held = super::try_lock(&path).unwrap().expect("first lock");
        assert!(super::try_lock(&path).unwrap().is_none());
        drop(held);
        assert!(super::try_lock(&path).unwrap().is_some());
        let _ = std::fs::remove_file(path);
    }
}
