//! The page script: plain JS files under `page/`, embedded in the binary.
//!
//! It runs in tabwire's isolated world of each document (the page's own scripts can
//! neither see nor change it, and it sees pristine built-ins), where the browser installs
//! it as `__tabwire(op, args)` when the document is created; each call then sends only
//! the op and its arguments. A world that lacks it gets it with the first call; where no
//! isolated world can be had, the whole script is evaluated for the one call.

use std::sync::OnceLock;

const FILES: &[&str] = &[
    include_str!("../page/dom.js"),
    include_str!("../page/locate.js"),
    include_str!("../page/scan.js"),
    include_str!("../page/act.js"),
    include_str!("../page/value.js"),
    include_str!("../page/storage.js"),
];

/// The marker a call into a world without the script throws.
pub(crate) const NOT_INSTALLED: &str = "tabwire page script not installed";

/// `(function () { …; return function (op, args) {…}; })()`: builds the op table once and
/// yields the dispatcher.
pub(crate) fn dispatcher() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| {
        let mut source = String::from("(function () {\n\"use strict\";\nconst TW = {};\n");
        for file in FILES {
            source.push_str(file);
            source.push_str("\n;\n");
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

/// The name of tabwire's isolated world in each document.
pub(crate) const WORLD: &str = "tabwire";

/// Installs the script (given to Page.addScriptToEvaluateOnNewDocument, so the browser
/// does it as each document is created, off any call's path).
pub(crate) fn install_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| format!("globalThis.__tabwire = {};", dispatcher()))
}

/// A call into a world where the script is installed (throws NOT_INSTALLED where not).
pub(crate) fn installed_call(op: &str, args: &serde_json::Value) -> String {
    format!(
        "(typeof __tabwire === 'function' ? __tabwire : (() => {{ throw new Error({}); }})())({}, {})",
        serde_json::Value::from(NOT_INSTALLED),
        serde_json::Value::from(op),
        args
    )
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
