//! Userscripts: scripts an agent keeps for pages whose URL matches, run at the start of
//! every document load until removed. One registry for every browser of the engine; each
//! tab tabwire attaches to gets the enabled scripts (`Page.addScriptToEvaluateOnNewDocument`,
//! wrapped so a script runs only where its URL patterns match), and a script added,
//! disabled or removed is put into or taken out of every tab already attached.

use parking_lot::Mutex;

use serde::Serialize;
use serde_json::json;

use super::{Browser, HOUSEKEEPING};
use crate::error::{EngineError, Input, Result};

/// The isolated world userscripts of that world run in (not tabwire's own).
pub(crate) const USERSCRIPT_WORLD: &str = "tabwire-userscripts";
/// How many scripts the registry keeps.
const MAX_SCRIPTS: usize = 64;
/// The longest script kept.
const MAX_SOURCE: usize = 512 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UserScriptWorld {
    /// The page's own world: the script sees the page's globals.
    #[serde(rename = "MAIN")]
    Main,
    /// A world of its own: the page cannot see or break it.
    #[serde(rename = "ISOLATED")]
    Isolated,
}

/// When in a load a script runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunAt {
    /// Before the page's own scripts, while the document is still empty.
    DocumentStart,
    /// Once the document is parsed (`DOMContentLoaded`).
    DocumentEnd,
    /// Once the page has loaded (`load`), as extensions' content scripts run by default.
    DocumentIdle,
}

#[derive(Debug, Clone, Serialize)]
pub struct UserScript {
    pub id: String,
    pub name: String,
    /// URL patterns (`*` matches anything; `<all_urls>` every web page) it runs on.
    pub matches: Vec<String>,
    /// URL patterns it never runs on.
    pub excludes: Vec<String>,
    pub world: UserScriptWorld,
    pub run_at: RunAt,
    pub enabled: bool,
    /// A stylesheet, put into the page as a `<style>`, not a script.
    pub css: bool,
    pub created_ms: u64,
    pub updated_ms: u64,
    #[serde(skip)]
    pub source: String,
}

/// What an agent asks to keep.
#[derive(Debug, Clone)]
pub struct NewUserScript {
    pub name: Option<String>,
    pub source: String,
    pub matches: Vec<String>,
    pub excludes: Vec<String>,
    pub world: UserScriptWorld,
    pub run_at: RunAt,
    /// A stylesheet rather than a script.
    pub css: bool,
}

#[derive(Default)]
pub struct UserScripts {
    scripts: Mutex<Vec<UserScript>>,
}

impl UserScripts {
    pub fn list(&self) -> Vec<UserScript> {
        self.scripts.lock().clone()
    }

    pub fn get(&self, id: &str) -> Option<UserScript> {
        self.scripts.lock().iter().find(|s| s.id == id).cloned()
    }

    /// Keeps a new script (enabled); it is not yet in any tab.
    pub(crate) fn add(&self, new: NewUserScript) -> Result<UserScript> {
        check(&new)?;
        let mut scripts = self.scripts.lock();
        if scripts.len() >= MAX_SCRIPTS {
            return Err(EngineError::invalid(
                Input::Script,
                format!("{MAX_SCRIPTS} userscripts are kept already; remove one first"),
            ));
        }
        let id = crate::ids::unique("us");
        let script = UserScript {
            name: new
                .name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| id.clone()),
            id,
            matches: if new.matches.is_empty() {
                vec!["<all_urls>".into()]
            } else {
                new.matches
            },
            excludes: new.excludes,
            world: new.world,
            run_at: new.run_at,
            enabled: true,
            css: new.css,
            created_ms: crate::ids::now_ms(),
            updated_ms: crate::ids::now_ms(),
            source: new.source,
        };
        scripts.push(script.clone());
        Ok(script)
    }

    /// Replaces what a script is (its source, patterns, world, timing, name); its id,
    /// state and age stay. The script now; tabs still hold the old one until it is put
    /// in again.
    pub(crate) fn replace(&self, id: &str, new: NewUserScript) -> Result<UserScript> {
        check(&new)?;
        let mut scripts = self.scripts.lock();
        let script = scripts
            .iter_mut()
            .find(|s| s.id == id)
            .ok_or_else(|| unknown(id))?;
        if let Some(name) = new.name.filter(|n| !n.trim().is_empty()) {
            script.name = name;
        }
        script.matches = if new.matches.is_empty() {
            vec!["<all_urls>".into()]
        } else {
            new.matches
        };
        script.excludes = new.excludes;
        script.world = new.world;
        script.run_at = new.run_at;
        script.source = new.source;
        script.css = new.css;
        script.updated_ms = crate::ids::now_ms();
        Ok(script.clone())
    }

    /// Forgets a script; the script as it was.
    pub(crate) fn remove(&self, id: &str) -> Result<UserScript> {
        let mut scripts = self.scripts.lock();
        let at = scripts
            .iter()
            .position(|s| s.id == id)
            .ok_or_else(|| unknown(id))?;
        Ok(scripts.remove(at))
    }

    /// Turns a script on or off; the script now.
    pub(crate) fn set_enabled(&self, id: &str, enabled: bool) -> Result<UserScript> {
        let mut scripts = self.scripts.lock();
        let script = scripts
            .iter_mut()
            .find(|s| s.id == id)
            .ok_or_else(|| unknown(id))?;
        script.enabled = enabled;
        script.updated_ms = crate::ids::now_ms();
        Ok(script.clone())
    }
}

/// What a script's own `==UserScript==` header says of it (Tampermonkey's format):
/// `@name`, `@description`, `@match` and `@include`, `@exclude`, `@run-at`,
/// `@inject-into`. What the agent passes beside the script wins over it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UserScriptHeader {
    pub name: Option<String>,
    pub description: Option<String>,
    pub matches: Vec<String>,
    pub excludes: Vec<String>,
    pub run_at: Option<RunAt>,
    pub world: Option<UserScriptWorld>,
}

impl UserScriptHeader {
    /// The header of `source` (all empty when it has none).
    pub fn read(source: &str) -> UserScriptHeader {
        let mut header = UserScriptHeader::default();
        let Some(start) = source.find("==UserScript==") else {
            return header;
        };
        let Some(length) = source[start..].find("==/UserScript==") else {
            return header;
        };
        for line in source[start..start + length].lines() {
            // `// @key value`, the value to the end of the line.
            let Some((_, entry)) = line.split_once('@') else {
                continue;
            };
            let (key, value) = entry
                .split_once(char::is_whitespace)
                .map_or((entry, ""), |(k, v)| (k, v.trim()));
            if value.is_empty() {
                continue;
            }
            match key {
                "name" => header.name = header.name.or(Some(value.to_owned())),
                "description" => header.description = header.description.or(Some(value.to_owned())),
                "match" | "include" => header.matches.push(value.to_owned()),
                "exclude" => header.excludes.push(value.to_owned()),
                "run-at" => {
                    header.run_at = match value {
                        "document-start" => Some(RunAt::DocumentStart),
                        "document-end" | "document-body" => Some(RunAt::DocumentEnd),
                        "document-idle" => Some(RunAt::DocumentIdle),
                        _ => header.run_at,
                    }
                }
                "inject-into" => {
                    header.world = match value {
                        "page" => Some(UserScriptWorld::Main),
                        "content" => Some(UserScriptWorld::Isolated),
                        _ => header.world,
                    }
                }
                _ => {}
            }
        }
        header
    }
}

/// Whether a source pasted as a userscript is a stylesheet (rules of `selector {
/// property: value }`, comments, at-rules) rather than JavaScript.
pub fn looks_like_css(source: &str) -> bool {
    let mut text = String::new();
    // Comments out.
    let mut rest = source;
    while let Some(start) = rest.find("/*") {
        text.push_str(&rest[..start]);
        rest = rest[start + 2..]
            .split_once("*/")
            .map_or("", |(_, after)| after);
    }
    text.push_str(rest);
    let (mut depth, mut rules, mut outside) = (0usize, 0usize, String::new());
    for c in text.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return false,
            '}' => {
                depth -= 1;
                rules += 1;
            }
            _ if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    // Outside the blocks only selectors (and at-rule preludes): never a statement.
    let statement = [
        "=", ";", "function", "return", "const ", "let ", "var ", "=>",
    ]
    .iter()
    .any(|s| outside.contains(s))
        && !outside.trim_start().starts_with("@import");
    depth == 0 && rules > 0 && !statement && text.contains(':')
}

/// A script worth keeping: not empty, not too long.
fn check(new: &NewUserScript) -> Result<()> {
    if new.source.trim().is_empty() {
        return Err(EngineError::invalid(Input::Script, "the script is empty"));
    }
    if new.source.len() > MAX_SOURCE {
        return Err(EngineError::invalid(
            Input::Script,
            format!(
                "the script is {} bytes; at most {MAX_SOURCE}",
                new.source.len()
            ),
        ));
    }
    Ok(())
}

fn unknown(id: &str) -> EngineError {
    EngineError::invalid(
        Input::Script,
        format!("no userscript has the id '{id}'; list them for their ids"),
    )
}

/// The guard before each script: whether the page's URL is one it runs on.
const GUARD: &str = include_str!("../../page_script/userscript.js");

/// The script as registered in a tab: it runs only where the page's URL matches.
pub(crate) fn wrapped(script: &UserScript) -> String {
    let mut source = String::from("(function () {\n");
    source.push_str(GUARD);
    source.push_str(&format!(
        "if (!runsOn({}, {}, location.href)) return;\n// tabwire userscript {}\nfunction run() {{\n",
        json!(script.matches),
        json!(script.excludes),
        json!(script.name),
    ));
    if script.css {
        source.push_str(&format!("addStyle({});", json!(script.source)));
    } else {
        source.push_str(&script.source);
    }
    source.push_str(match script.run_at {
        RunAt::DocumentStart => "\n}\nrun();\n})();",
        RunAt::DocumentEnd => "\n}\nwhenReady('DOMContentLoaded', run);\n})();",
        RunAt::DocumentIdle => "\n}\nwhenReady('load', run);\n})();",
    });
    source
}

/// An expression: whether the page's URL is one the script runs on.
pub(crate) fn runs_here(script: &UserScript) -> String {
    format!(
        "(function () {{\n{GUARD}\nreturn runsOn({}, {}, location.href);\n}})()",
        json!(script.matches),
        json!(script.excludes),
    )
}

impl Browser {
    /// Puts a script into one attached tab (its CDP session) for its next loads.
    pub(crate) async fn install_userscript(
        &self,
        target_id: &str,
        session: &str,
        script: &UserScript,
    ) -> Result<()> {
        let mut params = json!({ "source": wrapped(script) });
        if script.world == UserScriptWorld::Isolated {
            params["worldName"] = json!(USERSCRIPT_WORLD);
        }
        let added = self
            .conn
            .call(
                Some(session),
                "Page.addScriptToEvaluateOnNewDocument",
                params,
                HOUSEKEEPING,
            )
            .await?;
        if let Some(identifier) = added["identifier"].as_str() {
            let (id, identifier) = (script.id.clone(), identifier.to_owned());
            self.update_tab(target_id, |tab| {
                tab.userscripts.insert(id, identifier);
            });
        }
        Ok(())
    }

    /// Takes a script out of every tab of this browser that has it.
    pub(crate) async fn uninstall_userscript(&self, id: &str) {
        for tab in self.tabs() {
            let (Some(session), Some(identifier)) =
                (tab.session.clone(), tab.userscripts.get(id).cloned())
            else {
                continue;
            };
            let _ = self
                .conn
                .call(
                    Some(&session),
                    "Page.removeScriptToEvaluateOnNewDocument",
                    json!({ "identifier": identifier }),
                    HOUSEKEEPING,
                )
                .await;
            self.update_tab(&tab.target_id, |tab| {
                tab.userscripts.remove(id);
            });
        }
    }

    /// Puts a script into every tab of this browser tabwire is attached to.
    pub(crate) async fn install_everywhere(&self, script: &UserScript) {
        for tab in self.tabs() {
            if let Some(session) = tab.session.clone()
                && !tab.userscripts.contains_key(&script.id)
                && let Err(error) = self
                    .install_userscript(&tab.target_id, &session, script)
                    .await
            {
                tracing::debug!(%error, tab = %tab.target_id, "could not put a userscript into a tab");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stylesheets_are_told_from_scripts() {
        for css in [
            "body { background: #111; color: #eee; }",
            "/* dark */\n.banner, #ads > div:nth-child(2) { display: none !important }",
            "@media (max-width: 600px) { nav { display: none } }",
        ] {
            assert!(looks_like_css(css), "{css}");
        }
        for js in [
            "document.body.style.background = 'black';",
            "if (location.host) { console.log(1) }",
            "function hide() { document.querySelector('.x').remove(); }",
            "const rules = { a: 1 };",
            "window.x = 42;",
            "}",
        ] {
            assert!(!looks_like_css(js), "{js}");
        }
    }

    #[test]
    fn a_tampermonkey_header_is_read() {
        let source = "// ==UserScript==\n// @name        Dark docs\n// @match       https://docs.example.com/*\n// @include     http://127.0.0.1:*/*\n// @exclude     */print/*\n// @run-at      document-start\n// @inject-into page\n// @grant       none\n// ==/UserScript==\ndocument.title = 'x';";
        let header = UserScriptHeader::read(source);
        assert_eq!(header.name.as_deref(), Some("Dark docs"));
        assert_eq!(
            header.matches,
            ["https://docs.example.com/*", "http://127.0.0.1:*/*"]
        );
        assert_eq!(header.excludes, ["*/print/*"]);
        assert_eq!(header.run_at, Some(RunAt::DocumentStart));
        assert_eq!(header.world, Some(UserScriptWorld::Main));
        assert!(!looks_like_css(source));
        assert_eq!(
            UserScriptHeader::read("document.title = 'x';"),
            UserScriptHeader::default()
        );
        // An unclosed header is no header.
        assert_eq!(
            UserScriptHeader::read("// ==UserScript==\n// @name x\n"),
            UserScriptHeader::default()
        );
    }
}
