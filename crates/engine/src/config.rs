//! How the engine is set up: which browser it reaches and how, and the directories it
//! may read and write. Built once by the binary; read by every room.

use std::path::PathBuf;

/// How the engine reaches a browser.
#[derive(Debug, Clone)]
pub enum LinkConfig {
    /// Launch (and relaunch after a crash) a browser of our own over a pipe.
    Managed(LaunchOptions),
    /// Attach to a running browser at a ws:// or http:// CDP endpoint; several form a
    /// pool (the least loaded first, one that fails passed over for a while).
    Endpoint(Vec<String>),
    /// The user's own browsers, linked through the tabwire extension.
    Extension,
}

impl LinkConfig {
    pub fn name(&self) -> &'static str {
        match self {
            LinkConfig::Managed(_) => "managed",
            LinkConfig::Endpoint(_) => "cdp",
            LinkConfig::Extension => "extension",
        }
    }
}

/// How the managed browser is started.
#[derive(Debug, Clone, Default)]
pub struct LaunchOptions {
    /// A browser binary chosen by the user; otherwise the usual install paths are searched.
    pub browser_path: Option<PathBuf>,
    /// None: headless when there is no display.
    pub headless: Option<bool>,
    /// Where the profile lives. None: a throw-away directory removed when the browser exits.
    pub profile_dir: Option<PathBuf>,
    pub extra_args: Vec<String>,
}

impl LaunchOptions {
    /// Headless unless asked otherwise or a display is available.
    pub fn is_headless(&self) -> bool {
        self.headless.unwrap_or(!platform::user::has_display())
    }
}

/// What each agent session gets of the browser.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SessionBrowsers {
    /// Every session shares the one browser: its tabs, cookies and storage.
    #[default]
    Shared,
    /// Each session has a browser context of its own on the one browser: its own
    /// cookies, storage, permissions and cache, and tabs no other session can see.
    IsolatedContexts,
    /// Each session has a browser of its own from the CDP endpoint(s), a farm that
    /// starts one per connection, opened on the session's first page call.
    PerSession,
}

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub link: LinkConfig,
    /// What each agent session gets of the browser.
    pub sessions: SessionBrowsers,
    /// Every file the engine writes lands under this directory (or a download root).
    pub output_dir: PathBuf,
    /// Uploads read only files under these directories.
    pub upload_roots: Vec<PathBuf>,
    /// Downloads may land in these directories, besides the output dir.
    pub download_roots: Vec<PathBuf>,
    /// Where permission leases are kept across restarts (None: in memory only).
    pub state_file: Option<PathBuf>,
    /// The shortest permission lease, in seconds (60 unless a test shortens it).
    pub min_lease_seconds: u64,
    /// The tabwire extension's id, and the folder it is loaded from.
    pub extension_id: Option<String>,
    pub extension_dir: Option<PathBuf>,
    /// The build stamp of the extension sources this binary carries.
    pub extension_stamp: Option<String>,
    /// Where bookmark subtrees are saved before they are removed.
    pub backup_dir: PathBuf,
    /// The text-embedding model tab search uses.
    pub embed_model: EmbedModel,
    /// Whether tab search reads the open tabs at all (off: no tab is read for it, and
    /// the search tools say so).
    pub tab_search: bool,
}

/// Which text-embedding model tab search uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum EmbedModel {
    /// The one compiled into the binary.
    #[default]
    Shipped,
    /// None: search is lexical only.
    Off,
    /// One in a directory (`weights.bin`, `vocab.tsv`, `normalize.tsv`, and optionally
    /// `means.tsv`), e.g. another vocabulary size made by `scripts/build-encoder.sh`.
    Dir(PathBuf),
}
