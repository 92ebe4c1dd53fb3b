//! The page script: plain JS files under `page/`, embedded in the binary and evaluated as
//! one function per call, so nothing lives in the page between calls (no globals, no ids).

use std::sync::OnceLock;

const FILES: &[&str] = &[
    include_str!("../page/dom.js"),
    include_str!("../page/locate.js"),
    include_str!("../page/scan.js"),
    include_str!("../page/act.js"),
    include_str!("../page/value.js"),
    include_str!("../page/storage.js"),
];

/// `function (op, args) { …; return TW[op](args); }`
pub(crate) fn library() -> &'static str {
    static LIBRARY: OnceLock<String> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let mut source = String::from("function (op, args) {\n\"use strict\";\nconst TW = {};\n");
        for file in FILES {
            source.push_str(file);
            source.push_str("\n;\n");
        }
        source.push_str(
            "if (typeof TW[op] !== 'function') return {status: 'error', message: 'unknown page op ' + op};\nreturn TW[op](args);\n}",
        );
        source
    })
}

/// An expression that runs one op with JSON arguments.
pub(crate) fn call_expression(op: &str, args: &serde_json::Value) -> String {
    format!("({})({}, {})", library(), serde_json::Value::from(op), args)
}
