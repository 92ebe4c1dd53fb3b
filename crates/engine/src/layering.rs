//! The rooms import downward only. This test reads every source file and fails on an
//! import that goes up or sideways, so a new circle cannot land unnoticed.

use std::path::Path;

/// Each room and the rooms it may import (itself always).
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("config", &[]),
    ("ids", &[]),
    ("urls", &[]),
    ("files", &["error", "ids"]),
    ("browser", &["error", "config", "ids", "files", "urls"]),
    (
        "page",
        &["browser", "error", "config", "ids", "files", "urls"],
    ),
    (
        "data",
        &["page", "browser", "error", "config", "ids", "files", "urls"],
    ),
    (
        "recordings",
        &["page", "browser", "error", "config", "ids", "files", "urls"],
    ),
    (
        "search",
        &["page", "browser", "error", "config", "ids", "files", "urls"],
    ),
    (
        "agents",
        &[
            "recordings",
            "search",
            "data",
            "page",
            "browser",
            "error",
            "config",
            "ids",
            "files",
            "urls",
        ],
    ),
];

/// The room a source file belongs to: its folder, or its own name at the top.
fn room_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?;
    let room = first.strip_suffix(".rs").unwrap_or(first);
    (room != "lib" && room != "layering").then(|| room.to_owned())
}

/// Every `crate::room` a file names, a grouped import's (`use crate::{a::X, b}`) too.
fn rooms_named(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("crate::") {
        let rest = &source[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => found.extend(group_heads(group)),
            None => found.extend(leading_name(rest)),
        }
    }
    found
}

/// The identifier a path starts with, if it does.
fn leading_name(path: &str) -> Option<String> {
    let name: String = path
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The first name of each item of a `{…}` group (from just after its `{`), at its top
/// level only: `{a::{x, y}, b}` names a and b.
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let (mut depth, mut item_start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                heads.extend(leading_name(&group[item_start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.extend(leading_name(&group[item_start..i]));
                item_start = i + 1;
            }
            _ => {}
        }
    }
    heads
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn rooms_import_downward_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut violations = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        let Some(room) = room_of(relative) else {
            continue;
        };
        let allowed = ALLOWED
            .iter()
            .find(|(name, _)| *name == room)
            .unwrap_or_else(|| panic!("room '{room}' ({}) is not in ALLOWED", relative.display()))
            .1;
        let source = std::fs::read_to_string(&file).expect("read source");
        for named in rooms_named(&source) {
            if named != room && !allowed.contains(&named.as_str()) {
                violations.push(format!("{} imports crate::{named}", relative.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against the room order:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_check_sees_an_upward_import() {
    assert_eq!(
        rooms_named("use crate::agents::Engine; crate::page::x"),
        ["agents", "page"]
    );
    assert_eq!(
        rooms_named("use crate::{\n    agents::{Engine, X},\n    page,\n};"),
        ["agents", "page"]
    );
}
