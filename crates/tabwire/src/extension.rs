//! The extension's files, embedded so an installed binary can always write out the
//! version that matches it (`tabwire extension-path`).

use std::path::PathBuf;

use anyhow::Context;

const FILES: &[(&str, &str)] = &[
    (
        "manifest.json",
        include_str!("../../../extension/manifest.json"),
    ),
    (
        "background.js",
        include_str!("../../../extension/background.js"),
    ),
    ("link.js", include_str!("../../../extension/link.js")),
    ("cdp.js", include_str!("../../../extension/cdp.js")),
    ("api.js", include_str!("../../../extension/api.js")),
    ("stamp.js", include_str!("../../../extension/stamp.js")),
];

/// A hash of the extension sources, reported by the running worker so a stale one shows.
pub fn build_stamp() -> String {
    let mut all = String::new();
    for (name, text) in FILES {
        all.push_str(name);
        all.push_str(text);
    }
    engine::files::sha256_hex(all.as_bytes())[..12].to_owned()
}

/// Writes the extension under the data dir (when it differs) and returns its folder.
pub fn write_out() -> anyhow::Result<PathBuf> {
    let dir = crate::data_dir().join("extension");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stamp = build_stamp();
    for (name, text) in FILES {
        let text = text.replace(
            "const BUILD_STAMP = 'dev';",
            &format!("const BUILD_STAMP = '{stamp}';"),
        );
        let path = dir.join(name);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            engine::files::write_file_blocking(&path, text.as_bytes())?;
        }
    }
    Ok(dir)
}
