//! Processes: a server's tree, its memory, and ending it whole.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// (pid, parent pid, command name) of every process.
fn table() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let comm = head
            .split_once(" (")
            .map(|(_, c)| c)
            .unwrap_or("")
            .to_owned();
        let mut fields = rest.split_whitespace();
        let state = fields.next().unwrap_or("");
        let ppid = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if state != "Z" {
            out.push((pid, ppid, comm));
        }
    }
    out
}

/// Every live descendant of `root` (not `root` itself), with its command name.
pub fn descendants(root: u32) -> Vec<(u32, String)> {
    let all = table();
    let mut children: HashMap<u32, Vec<(u32, String)>> = HashMap::new();
    for (pid, ppid, comm) in all {
        children.entry(ppid).or_default().push((pid, comm));
    }
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for (child, comm) in children.get(&p).cloned().unwrap_or_default() {
            stack.push(child);
            out.push((child, comm));
        }
    }
    out
}

/// Browser processes: Chromium names its processes after its binary.
pub fn is_browser(comm: &str) -> bool {
    comm.starts_with("chrom") || comm.starts_with("headless_shell")
}

fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Resident set (VmRSS) of the server process alone, in KiB.
pub fn server_rss_kib(server: u32) -> u64 {
    status_kib(server, "VmRSS:")
}

/// CPU time (user and system) the server process has used, in ms.
pub fn cpu_ms(server: u32) -> u64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{server}/stat")) else {
        return 0;
    };
    // Fields after the command's closing parenthesis; utime and stime are the 12th
    // and 13th of those, in clock ticks (100 a second on Linux).
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (ticks(11) + ticks(12)) * 10
}

/// Peak resident set (VmHWM) of the server itself plus any helper processes it started
/// that are not the browser, in KiB.
pub fn server_peak_kib(server: u32) -> u64 {
    status_kib(server, "VmHWM:")
        + descendants(server)
            .iter()
            .filter(|(_, comm)| !is_browser(comm))
            .map(|(pid, _)| status_kib(*pid, "VmHWM:"))
            .sum::<u64>()
}

/// Proportional set size of one process (KiB): shared pages split between sharers, so the
/// sum over a multi-process browser counts each page once.
fn pss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Pss:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Samples the PSS of a server's browser processes every 200 ms and keeps the peak.
pub struct BrowserSampler {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl BrowserSampler {
    /// Starts sampling the browser processes below `server`.
    pub fn start(server: u32) -> BrowserSampler {
        let peak = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak.clone(), stop.clone());
        tokio::spawn(async move {
            while !s.load(Ordering::Relaxed) {
                let total = tokio::task::spawn_blocking(move || browser_pss_kib(server))
                    .await
                    .unwrap_or(0);
                p.fetch_max(total, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        BrowserSampler { peak, stop }
    }

    /// Takes one last sample and stops; the peak in KiB.
    pub fn finish(&self, server: u32) -> u64 {
        self.peak
            .fetch_max(browser_pss_kib(server), Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
        self.peak.load(Ordering::Relaxed)
    }
}

pub fn browser_pss_kib(server: u32) -> u64 {
    descendants(server)
        .iter()
        .filter(|(_, comm)| is_browser(comm))
        .map(|(pid, _)| pss_kib(*pid))
        .sum()
}

/// Ends a server and everything it started: the tree is read first (a browser may sit in
/// its own process group and would be orphaned otherwise), the client is expected to have
/// closed stdin already; whatever is still alive after a grace period is killed.
pub async fn end_tree(child: &mut tokio::process::Child) {
    let Some(root) = child.id() else {
        return;
    };
    let tree: Vec<u32> = descendants(root).into_iter().map(|(p, _)| p).collect();
    let graceful = tokio::time::timeout(Duration::from_secs(3), child.wait()).await;
    if graceful.is_err() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
    for pid in tree {
        if std::fs::metadata(format!("/proc/{pid}")).is_ok() {
            // SAFETY: kill(2) with a pid we read from /proc and a constant signal.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}
