//! Which build of tabwire this process runs, and whether it is still the one installed.
//!
//! A process keeps running the executable it started from; a newer build installed over
//! that file (the same path, a new file) is not what it runs. The executable's path, size
//! and modification time when the server started are its identity; the same facts read
//! now say whether the file has been replaced since (`stale_process`: restart the MCP
//! server to run the new build). Reading them costs one `stat`, so a status report can
//! ask every time.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The executable as a file: where, how large, when last written.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    path: PathBuf,
    len: u64,
    modified_ns: u128,
}

static STARTED: OnceLock<Result<Stamp, String>> = OnceLock::new();
static SERVING_SINCE: OnceLock<SystemTime> = OnceLock::new();

/// Notes the executable this process started from, and when it began serving. Called
/// when serving starts; the first call decides.
pub fn note_start() {
    SERVING_SINCE.get_or_init(SystemTime::now);
    STARTED.get_or_init(stamp_now);
}

/// When this process began serving, in seconds since the Unix epoch, and for how long
/// it has.
pub fn serving() -> (f64, f64) {
    let since = *SERVING_SINCE.get_or_init(SystemTime::now);
    let epoch = since
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let uptime = since.elapsed().map_or(0.0, |d| d.as_secs_f64());
    (epoch, uptime)
}

fn stamp_now() -> Result<Stamp, String> {
    let path = std::env::current_exe().map_err(|e| format!("cannot name the executable: {e}"))?;
    let meta =
        std::fs::metadata(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let modified_ns = meta
        .modified()
        .ok()
        .and_then(|at| at.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| since.as_nanos());
    Ok(Stamp {
        path,
        len: meta.len(),
        modified_ns,
    })
}

/// The running build against the installed one.
pub struct Build {
    /// The executable this process started from.
    pub running: Value,
    /// The executable at that path now.
    pub installed: Value,
    /// `matches_tree` (the same file), `stale_process` (replaced since this process
    /// started) or `unverifiable` (either could not be read).
    pub verdict: &'static str,
    /// Whether the comparison was made.
    pub enforced: bool,
}

/// Compares the executable this process started from with the file there now.
pub fn build() -> Build {
    let started = STARTED.get_or_init(stamp_now);
    let now = stamp_now();
    let (verdict, enforced) = match (started, &now) {
        (Ok(then), Ok(now)) if then == now => ("matches_tree", true),
        (Ok(_), Ok(_)) => ("stale_process", true),
        _ => ("unverifiable", false),
    };
    Build {
        running: describe(started),
        installed: describe(&now),
        verdict,
        enforced,
    }
}

/// A stamp in the shape BrowserTap gives its source identities: `sha256` is of the
/// version, path, size and modification time (not of the file's bytes: a build is told
/// apart by being another file), `file_count` one executable.
fn describe(stamp: &Result<Stamp, String>) -> Value {
    let version = env!("CARGO_PKG_VERSION");
    match stamp {
        Ok(stamp) => json!({
            "schema": "tabwire.executable.v1",
            "scope": "executable_path_size_and_mtime",
            "sha256": engine::files::sha256_hex(
                format!("{version}\n{}\n{}\n{}", stamp.path.display(), stamp.len, stamp.modified_ns).as_bytes(),
            ),
            "file_count": 1,
            "complete": true,
            "error": null,
            "path": stamp.path,
            "version": version,
        }),
        Err(error) => json!({
            "schema": "tabwire.executable.v1",
            "scope": "executable_path_size_and_mtime",
            "sha256": null,
            "file_count": 0,
            "complete": false,
            "error": error,
            "version": version,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executable_this_test_runs_matches_itself() {
        note_start();
        let build = build();
        assert_eq!(build.verdict, "matches_tree");
        assert!(build.enforced);
        assert_eq!(build.running, build.installed);
        assert_eq!(build.running["sha256"].as_str().map(str::len), Some(64));
    }
}
