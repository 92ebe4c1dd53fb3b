//! The peers, installed from npm into a scratch folder on first use.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// The versions measured (the ones named in `../shared/anchors.md`); change them here.
pub const PLAYWRIGHT_MCP: &str = "0.0.83";
pub const DEVTOOLS_MCP: &str = "1.11.0";

/// Installs both peers into `dir` unless the pinned versions are already there.
pub fn ensure_peers(dir: &Path) -> anyhow::Result<()> {
    let wanted = [
        ("@playwright/mcp", PLAYWRIGHT_MCP),
        ("chrome-devtools-mcp", DEVTOOLS_MCP),
    ];
    if wanted
        .iter()
        .all(|(name, version)| installed_version(dir, name).as_deref() == Some(*version))
    {
        return Ok(());
    }
    let npm = Command::new("npm").arg("--version").output();
    if !npm.is_ok_and(|o| o.status.success()) {
        bail!("npm is needed to install the peers (Debian: apt-get install -y nodejs npm)");
    }
    std::fs::create_dir_all(dir)?;
    let manifest = dir.join("package.json");
    if !manifest.exists() {
        std::fs::write(
            &manifest,
            "{ \"name\": \"tabwire-bench-peers\", \"private\": true }\n",
        )?;
    }
    let specs: Vec<String> = wanted.iter().map(|(n, v)| format!("{n}@{v}")).collect();
    eprintln!(
        "installing the peers into {} (npm install {}) …",
        dir.display(),
        specs.join(" ")
    );
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .args(&specs)
        .current_dir(dir)
        .status()
        .context("running npm install")?;
    if !status.success() {
        bail!("npm install failed ({status})");
    }
    for (name, version) in wanted {
        let found = installed_version(dir, name);
        if found.as_deref() != Some(version) {
            bail!("{name}: expected {version} after install, found {found:?}");
        }
    }
    eprintln!("peers installed");
    Ok(())
}

pub fn installed_version(dir: &Path, package: &str) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("node_modules").join(package).join("package.json"))
        .ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}
