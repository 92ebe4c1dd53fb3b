//! The page script: plain JS files under `crates/engine/page_script/`, embedded in the
//! binary.
//!
//! It runs in tabwire's isolated world of each document (the page's own scripts can
//! neither see nor change it, and it sees pristine built-ins), installed there as
//! `__tabwire(op, args)` once a tabwire navigation has loaded the document (in the
//! background, `Page::prepare_world`) or with the first call into it; each later call
//! sends only the op and its arguments. Where no isolated world can be had, the whole
//! script is evaluated for the one call.

use std::sync::OnceLock;

const FILES: &[&str] = &[
    include_str!("../../page_script/dom.js"),
    include_str!("../../page_script/locate.js"),
    include_str!("../../page_script/refs.js"),
    include_str!("../../page_script/scan.js"),
    include_str!("../../page_script/tree.js"),
    include_str!("../../page_script/content.js"),
    include_str!("../../page_script/net.js"),
    include_str!("../../page_script/act.js"),
    include_str!("../../page_script/value.js"),
    include_str!("../../page_script/storage.js"),
    include_str!("../../page_script/pick.js"),
    include_str!("../../page_script/watch.js"),
];

/// What a call into a world without the script returns (instead of running anything).
const NOT_INSTALLED: &str = "__tabwire_not_installed__";

/// `(function () { …; return function (op, args) {…}; })()`: builds the op table once and
/// yields the dispatcher.
pub(crate) fn dispatcher() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| {
        let mut source = String::from("(function () {\n\"use strict\";\nconst TW = {};\n");
        for file in FILES {
            push_compact(&mut source, file);
            source.push_str(";\n");
        }
        source.push_str(
            "return function (op, args) {\n\
             if (typeof TW[op] !== 'function') return {status: 'error', message: 'unknown page op ' + op};\n\
             beginCall();\n\
             return TW[op](args);\n};\n})()",
        );
        source
    })
}

/// Appends `js` without its comment lines, blank lines and indentation: a quarter less to
/// send and to parse into every document (the comments stay in the files, for readers).
/// Safe for these files because no literal spans lines in them (a test checks), and code
/// lines that had a line break between them still have one, so automatic semicolons fall
/// where they did.
fn push_compact(source: &mut String, js: &str) {
    for line in js.lines() {
        let line = line.trim();
        if !line.is_empty() && !line.starts_with("//") {
            source.push_str(line);
            source.push('\n');
        }
    }
}

/// The script as a statement that installs it (`Page::prepare_world`; `bench floor`
/// registers it for every new document to show what doing so would cost a navigation).
pub fn install_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| format!("globalThis.__tabwire = {};", dispatcher()))
}

/// A call into a world where the script is installed; where it is not, the call runs
/// nothing and yields the NOT_INSTALLED marker.
pub(crate) fn installed_call(op: &str, args: &serde_json::Value) -> String {
    format!(
        "(typeof __tabwire === 'function' ? __tabwire({}, {}) : {})",
        serde_json::Value::from(op),
        args,
        serde_json::Value::from(NOT_INSTALLED),
    )
}

/// Whether an evaluation's reply is the NOT_INSTALLED marker.
pub(crate) fn is_not_installed(reply: &serde_json::Value) -> bool {
    reply["result"]["value"] == NOT_INSTALLED
}

/// Installs the script in the world, then makes the call.
pub(crate) fn install_and_call(op: &str, args: &serde_json::Value) -> String {
    format!(
        "(globalThis.__tabwire = {})({}, {})",
        dispatcher(),
        serde_json::Value::from(op),
        args
    )
}

/// The whole script for one call, leaving nothing behind (the main world's fallback).
pub(crate) fn standalone_call(op: &str, args: &serde_json::Value) -> String {
    format!(
        "({})({}, {})",
        dispatcher(),
        serde_json::Value::from(op),
        args
    )
}

#[cfg(test)]
mod tests {
    use crate::error::ErrorCode;

    /// Compacting drops whole lines and indentation only, which is safe while no literal
    /// spans lines: no template literals, no line continuations, no block comment left
    /// open at a line's end, no line break `lines()` would not see. A file that starts
    /// using one needs a real tokenizer here.
    #[test]
    fn no_page_script_literal_spans_lines() {
        for file in super::FILES {
            // Line breaks to JavaScript that `lines()` does not split at.
            for odd in ['\r', '\u{2028}', '\u{2029}'] {
                assert!(!file.contains(odd), "{odd:?} in a page script file");
            }
            for (n, line) in file.lines().enumerate() {
                let code = line.trim();
                if code.starts_with("//") {
                    continue;
                }
                assert!(
                    !code.contains('`'),
                    "template literal at line {}: {code}",
                    n + 1
                );
                assert!(
                    !code.ends_with('\\'),
                    "line continuation at line {}: {code}",
                    n + 1
                );
                if let Some(open) = code.rfind("/*") {
                    assert!(
                        code[open..].contains("*/"),
                        "block comment left open at line {}: {code}",
                        n + 1
                    );
                }
            }
        }
        let written: usize = super::FILES.iter().map(|file| file.len()).sum();
        let compact = super::dispatcher().len();
        assert!(compact < written * 9 / 10, "{compact} of {written} bytes");
    }

    /// Every failure status the page script can report is an engine error code, so none
    /// is turned into a generic script error on its way out.
    #[test]
    fn every_page_status_is_an_error_code() {
        let mut statuses = Vec::new();
        for file in super::FILES {
            for marker in ["status: '", "focusReport('"] {
                for (at, _) in file.match_indices(marker) {
                    let rest = &file[at + marker.len()..];
                    statuses.push(rest.split('\'').next().unwrap_or_default().to_owned());
                }
            }
        }
        assert!(statuses.len() > 10, "{statuses:?}");
        let unknown: Vec<&String> = statuses
            .iter()
            .filter(|s| *s != "ok" && ErrorCode::parse(s).is_none())
            .collect();
        assert!(
            unknown.is_empty(),
            "page statuses without a code: {unknown:?}"
        );
    }
}
