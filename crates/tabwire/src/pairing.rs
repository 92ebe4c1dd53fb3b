//! The pairing secret of the extension link.
//!
//! The link socket admits a browser only when its hello carries this secret. The native
//! host, which a browser starts only for our extension (the manifest's allowed_origins,
//! and the host checks the caller's origin again), reads it and adds it to the
//! extension's hello; anything else that reaches the socket without it is refused.
//!
//! It lives in the config dir, apart from the runtime dir that holds the socket, on
//! purpose: a container or sandbox given the runtime dir for its other sockets still
//! cannot link a browser of its own making. It is created on first use (`tabwire
//! install-native-host` does it up front), readable by this user alone
//! (`platform::secret`: mode 0600, or a DACL naming only this user), and never printed.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, bail};

/// 32 random bytes, hex.
const SECRET_CHARS: usize = 64;

/// Where the engine's link looks for it (`engine::link_secret_path`).
pub fn path() -> PathBuf {
    engine::link_secret_path()
}

/// The secret, created if there is none yet.
pub fn load_or_create() -> anyhow::Result<String> {
    let path = path();
    if let Some(secret) = load()? {
        return Ok(secret);
    }
    let dir = path.parent().context("the secret's path has a parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Written whole under a private name, then linked into place: a reader never sees
    // half a secret, and of two racing creators the first link wins and both use it.
    let staged = dir.join(format!(".link-secret.{}", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    let secret = platform::random::hex(SECRET_CHARS / 2).context("no system randomness")?;
    platform::secret::create_private(&staged, secret.as_bytes())
        .with_context(|| format!("cannot write {}", staged.display()))?;
    let linked = std::fs::hard_link(&staged, &path);
    let _ = std::fs::remove_file(&staged);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
    }
    load()?.context("the pairing secret vanished while it was created")
}

/// The secret, if one exists; an unreadable or malformed one is an error that says how
/// to recover.
pub fn load() -> anyhow::Result<Option<String>> {
    let path = path();
    let mut text = String::new();
    match std::fs::File::open(&path) {
        Ok(mut file) => {
            platform::secret::check_private(&file, &path).map_err(anyhow::Error::msg)?;
            file.read_to_string(&mut text)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let secret = text.trim();
    if secret.len() != SECRET_CHARS || !secret.chars().all(|c| c.is_ascii_hexdigit()) {
        bail!(
            "{} is not a tabwire pairing secret; delete it and restart tabwire and the browser to pair again",
            path.display()
        );
    }
    Ok(Some(secret.to_owned()))
}
