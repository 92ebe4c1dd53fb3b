//! Search of every open tab by meaning and by word: the `search_tabs_content` tool's
//! engine. Owns the static embedding model (`embed`, shipped inside the binary), the
//! chunking and lexical terms (`text`), the in-memory hybrid index (`index`: BM25 and
//! cosine, fused by rank) and the service that keeps it current (`indexer`).
//!
//! - Nothing leaves the process: the model is compiled in, the index lives in memory.
//! - Indexing never reserves a tab and runs its CPU work on the blocking pool, so a page
//!   tool is never answered `target_busy` or kept waiting because of it.
//! - Without the model (turned off, or a file that does not load) search still answers
//!   from the lexical index, and says why vector search is off.
//!
//! May import page, browser and the base modules.

pub mod embed;
pub mod index;
pub mod indexer;
pub mod text;

pub use index::{ChunkSource, Hit, Ranking};
pub use indexer::{IndexStats, SearchReport, SearchRequest, TabSearch};
