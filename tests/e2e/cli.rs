//! tabwire on the command line: `tabwire call` runs one tool per process, the calls of a
//! profile act as one agent in a browser that stays up between them, exit statuses say
//! how a call went, and every command the skill document shows runs as it says.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

use crate::support::{BINARY, Site, config_dir, runtime_dir, scratch};

/// A profile the command line keeps its browser in, stopped when the test ends.
struct Shell {
    work: PathBuf,
}

impl Shell {
    fn new(name: &str) -> Shell {
        Shell {
            work: scratch(name),
        }
    }

    /// The profile's flags: they go before the command, as for the server.
    fn flags(&self) -> Vec<String> {
        vec![
            "--headless".into(),
            "--user-data-dir".into(),
            self.work.join("profile").display().to_string(),
            "--output-dir".into(),
            self.work.join("out").display().to_string(),
        ]
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(BINARY);
        command
            .args(self.flags())
            .args(args)
            .env("XDG_RUNTIME_DIR", runtime_dir())
            .env("XDG_CONFIG_HOME", config_dir())
            .env("XDG_DATA_HOME", self.work.join("data"))
            .stdin(std::process::Stdio::null());
        command
    }

    /// Runs `tabwire FLAGS ARGS…` to its end.
    async fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().await.expect("run tabwire")
    }

    /// `tabwire call` that must succeed; its stdout.
    async fn call(&self, tool: &str, arguments: &str) -> String {
        let output = self.run(&["call", tool, arguments, "--keep", "60"]).await;
        assert!(
            output.status.success(),
            "call {tool} {arguments}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("utf-8")
    }
}

impl Drop for Shell {
    // The broker would keep the browser up for a while after the test; end it now.
    fn drop(&mut self) {
        let _ = std::process::Command::new(BINARY)
            .args(self.flags())
            .args(["browser", "stop"])
            .env("XDG_RUNTIME_DIR", runtime_dir())
            .env("XDG_CONFIG_HOME", config_dir())
            .output();
    }
}

/// The ref an outline line ends with, for the line holding `needle`.
fn ref_of(outline: &str, needle: &str) -> String {
    let line = outline
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}: {outline}"));
    line.rsplit(' ').next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn calls_in_separate_processes_act_as_one_agent_and_exit_as_a_shell_expects() {
    let site = Site::start().await;
    let shell = Shell::new("cli-agent");
    let opened = shell
        .call(
            "open_url",
            &format!(r#"{{"url": "{}"}}"#, site.url("form.html")),
        )
        .await;
    assert!(opened.starts_with("opened http://127.0.0.1:"), "{opened}");

    // A ref one process read acts in the next.
    let outline = shell.call("scan_page", "{}").await;
    let name = ref_of(&outline, "textbox \"Full name\"");
    let typed = shell
        .call(
            "page_type",
            &format!(r#"{{"selector": "{name}", "text": "Ada"}}"#),
        )
        .await;
    assert_eq!(typed.trim(), "typed 3 chars into textbox \"Full name\"");
    let value = shell
        .call(
            "execute_js",
            r#"{"script": "document.getElementById('name').value"}"#,
        )
        .await;
    assert_eq!(value.trim(), "returned \"Ada\"");

    // Arguments from standard input.
    let mut piped = shell.command(&["call", "execute_js", "-"]);
    piped
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = piped.spawn().expect("spawn");
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(br#"{"script": "document.title"}"#)
            .await
            .expect("write");
    }
    let from_stdin = child.wait_with_output().await.expect("wait");
    assert!(from_stdin.status.success());
    assert_eq!(
        String::from_utf8_lossy(&from_stdin.stdout).trim(),
        "returned \"Form\""
    );

    // A tool's failure: status 1, its one line on stderr.
    let stale = shell
        .run(&["call", "page_click", r#"{"selector": "e999"}"#])
        .await;
    assert_eq!(stale.status.code(), Some(1));
    let said = String::from_utf8_lossy(&stale.stderr);
    assert!(
        said.starts_with("error stale_ref (not retryable)"),
        "{said}"
    );
    assert!(stale.stdout.is_empty());
    // A call that cannot be made: status 2, said why.
    let unknown = shell.run(&["call", "page_clik"]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("page_clik"));
    let not_json = shell.run(&["call", "open_url", "{url: x}"]).await;
    assert_eq!(not_json.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&not_json.stderr).contains("not JSON"));

    // A call the broker refuses (other engine settings than the running browser's) made
    // no call: status 2, the difference named.
    let refused = tokio::process::Command::new(BINARY)
        .args(shell.flags().iter().take(3))
        .args([
            "--output-dir",
            &shell.work.join("elsewhere").display().to_string(),
        ])
        .args(["call", "list_tabs"])
        .env("XDG_RUNTIME_DIR", runtime_dir())
        .env("XDG_CONFIG_HOME", config_dir())
        .output()
        .await
        .expect("run tabwire");
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("output_dir"));

    // --json: the original's reply, whole.
    let exact = shell.run(&["call", "list_tabs", "--json"]).await;
    assert!(exact.status.success());
    let reply: Value = serde_json::from_slice(&exact.stdout).expect("JSON");
    assert_eq!(reply["structuredContent"]["ok"], true, "{reply}");
    assert_eq!(
        reply["structuredContent"]["data"]["default_session_id"], "managed:1",
        "{reply}"
    );

    // Another session is another agent: no default tab of the first one's.
    let other = shell
        .run(&[
            "call",
            "execute_js",
            r#"{"script": "location.href"}"#,
            "--session",
            "other",
        ])
        .await;
    let other_said = String::from_utf8_lossy(&other.stdout);
    assert!(!other_said.contains("form.html"), "{other_said}");

    // status says what runs; stop ends the browser.
    let status = shell.run(&["browser", "status"]).await;
    let status = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(status.starts_with("running:"), "{status}");
    assert!(
        status.contains("cli:default") && status.contains("cli:other"),
        "{status}"
    );
    let browser_pid: u32 = status
        .split("browser pid ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .and_then(|pid| pid.trim().parse().ok())
        .unwrap_or_else(|| panic!("the browser's pid: {status}"));
    let stopped = shell.run(&["browser", "stop"]).await;
    assert_eq!(String::from_utf8_lossy(&stopped.stdout).trim(), "stopped");
    // Stopped means gone: the profile is free when the command returns.
    assert!(
        !crate::support::process_alive(browser_pid),
        "the browser still runs"
    );
    let gone = shell.run(&["browser", "status"]).await;
    assert!(String::from_utf8_lossy(&gone.stdout).starts_with("not running"));
}

#[tokio::test]
async fn every_command_the_skill_shows_runs_as_it_says() {
    let site = Site::start().await;
    let shell = Shell::new("cli-skill");
    let skill = shell.run(&["skill"]).await;
    let skill = String::from_utf8(skill.stdout).expect("utf-8");
    assert!(
        skill.starts_with("---\nname: tabwire\ndescription: "),
        "front matter"
    );
    let page = site.url("skill-login.html");
    let skill = skill.replace("https://example.com/login", &page);

    let mut ran = 0;
    let mut outline = String::new();
    for command in shell_commands(&skill) {
        let args: Vec<&str> = command.iter().map(String::as_str).collect();
        assert_eq!(args.first(), Some(&"tabwire"), "{command:?}");
        let output = shell.run(&args[1..]).await;
        assert!(
            output.status.success(),
            "{command:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        if args.get(2) == Some(&"scan_page") {
            outline = String::from_utf8_lossy(&output.stdout).to_string();
        }
        ran += 1;
    }
    assert!(ran >= 10, "{ran} commands");
    // The outline the skill prints is the one the page reads as.
    let shown = skill
        .split("```\n")
        .find(|block| block.starts_with("Sign in · "))
        .expect("the skill's sample outline");
    for line in shown.lines().skip(1) {
        assert!(outline.contains(line), "{line:?} not in {outline}");
    }
    // What the commands did is on the page: signed in as ann, the role chosen.
    let done = shell
        .call(
            "execute_js",
            r#"{"script": "[document.getElementById('status').textContent, document.getElementById('role').value]"}"#,
        )
        .await;
    assert_eq!(
        done.trim(),
        r#"returned ["Welcome, ann (Viewer)","Editor"]"#
    );
    assert!(shell.work.join("out/page.png").exists());
}

/// The commands of a document's `sh` blocks, split as a shell would split them (words,
/// and single-quoted words whole).
fn shell_commands(document: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    for block in document.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap_or_default();
        for line in block.lines().filter(|l| !l.trim().is_empty()) {
            let mut words = Vec::new();
            let mut rest = line.trim();
            while !rest.is_empty() {
                if let Some(quoted) = rest.strip_prefix('\'') {
                    let end = quoted.find('\'').expect("a closing quote");
                    words.push(quoted[..end].to_owned());
                    rest = quoted[end + 1..].trim_start();
                } else {
                    let end = rest.find(' ').unwrap_or(rest.len());
                    words.push(rest[..end].to_owned());
                    rest = rest[end..].trim_start();
                }
            }
            commands.push(words);
        }
    }
    commands
}
