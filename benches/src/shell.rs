//! tabwire's command line as a coding agent's shell runs it: `tabwire [flags] call TOOL
//! 'JSON'`, one process a step, each one timed from spawn to exit and its stdout and stderr
//! kept as what the agent reads. The calls of one `Shell` share a scratch profile, so the
//! profile's broker keeps one browser up between them, as it does for an agent.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::mcp::{Reply, clip};

/// Longer than any call of the benches takes; a process still running then is killed.
const PROCESS_LIMIT: Duration = Duration::from_secs(120);

/// One profile's command line: the binary, its flags, and a runtime dir of its own.
pub struct Shell {
    binary: PathBuf,
    /// The flags before the subcommand: every process of a profile must give the same
    /// ones (the broker refuses a client that asks for other settings).
    flags: Vec<String>,
    /// XDG_RUNTIME_DIR for every process: the broker's socket, lock and log go there, so
    /// this profile's broker meets no other tabwire on the machine.
    runtime: PathBuf,
    profile: PathBuf,
}

/// A process as run: what it printed, how it exited, how long it took.
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
    pub status: String,
    pub elapsed: Duration,
}

impl Shell {
    /// A shell on a fresh scratch profile under `dir`: its runtime dir is made at mode
    /// 0700, as tabwire requires of it.
    pub fn new(binary: &Path, dir: &Path) -> anyhow::Result<Shell> {
        let shell = Shell::at(binary, dir);
        std::fs::create_dir_all(&shell.runtime)
            .with_context(|| shell.runtime.display().to_string())?;
        std::fs::set_permissions(&shell.runtime, std::fs::Permissions::from_mode(0o700))?;
        Ok(shell)
    }

    /// The shell of a profile under `dir`, nothing made yet (a report's command line).
    pub fn at(binary: &Path, dir: &Path) -> Shell {
        let flags = vec![
            "--headless".to_owned(),
            format!("--browser-path={}", crate::servers::CHROMIUM),
            "--user-data-dir".to_owned(),
            dir.join("profile").display().to_string(),
            "--output-dir".to_owned(),
            dir.join("out").display().to_string(),
        ];
        Shell {
            binary: binary.to_owned(),
            flags,
            runtime: dir.join("runtime"),
            profile: dir.join("profile"),
        }
    }

    /// A call's command line, for a report: `XDG_RUNTIME_DIR=… tabwire FLAGS call TOOL 'JSON'`.
    pub fn command_line(&self) -> String {
        format!(
            "XDG_RUNTIME_DIR={} {} {} call TOOL 'JSON'",
            self.runtime.display(),
            self.binary.display(),
            self.flags.join(" ")
        )
    }

    /// Runs `tabwire FLAGS ARGS` to its exit.
    pub async fn run(&self, args: &[&str]) -> anyhow::Result<Ran> {
        let mut command = tokio::process::Command::new(&self.binary);
        command
            .args(&self.flags)
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .stdin(std::process::Stdio::null())
            // A process past its time is killed (the broker it started lives on: it is
            // detached, and `stop` ends it).
            .kill_on_drop(true);
        let started = Instant::now();
        let output = tokio::time::timeout(PROCESS_LIMIT, command.output())
            .await
            .with_context(|| format!("tabwire {}: still running after 120 s", args.join(" ")))?
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        let elapsed = started.elapsed();
        Ok(Ran {
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            success: output.status.success(),
            status: output.status.to_string(),
            elapsed,
        })
    }

    /// `tabwire call TOOL 'JSON'` (no JSON when there are no arguments, as an agent types
    /// it); the reply is all it printed, stdout then stderr, and an error if it failed.
    pub async fn call(&self, tool: &str, args: &Value) -> anyhow::Result<Reply> {
        let json = args.to_string();
        let no_arguments = args.as_object().is_some_and(|a| a.is_empty());
        let mut argv = vec!["call", tool];
        if !no_arguments {
            argv.push(&json);
        }
        let ran = self.run(&argv).await?;
        if !ran.success {
            bail!(
                "tabwire call {tool} exited with {}: {}",
                ran.status,
                clip(&format!("{}{}", ran.stdout, ran.stderr), 600)
            );
        }
        Ok(Reply {
            text: format!("{}{}", ran.stdout, ran.stderr),
            elapsed: ran.elapsed,
            ..Reply::default()
        })
    }

    /// `tabwire skill`: what the agent reads once, instead of tools/list.
    pub async fn skill(&self) -> anyhow::Result<String> {
        let ran = self.run(&["skill"]).await?;
        if !ran.success || ran.stdout.is_empty() {
            bail!("tabwire skill exited with {}: {}", ran.status, ran.stderr);
        }
        Ok(ran.stdout)
    }

    /// `tabwire browser stop`: ends this profile's broker and its browser, and waits
    /// until they are gone. The command answers "stopped" while the browser is still
    /// shutting down (some 200 ms here), and a browser still writing its profile would
    /// race the scratch dir's removal, or slow the next measurement.
    pub async fn stop(&self) -> anyhow::Result<()> {
        let ran = self.run(&["browser", "stop"]).await?;
        if !ran.success {
            bail!(
                "tabwire browser stop exited with {}: {}{}",
                ran.status,
                ran.stdout,
                ran.stderr
            );
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.profile_in_use() {
            if Instant::now() > deadline {
                bail!(
                    "the browser of {} still runs 10 s after `tabwire browser stop`",
                    self.profile.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Whether a process names this profile on its command line (the broker, the browser
    /// and its helpers all do).
    fn profile_in_use(&self) -> bool {
        let profile = self.profile.display().to_string();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        entries.flatten().any(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(&profile))
        })
    }
}
