//! Search of every open tab by meaning and by word: the `search_tabs_content` tool's
//! engine. Owns the use of the text encoder (`embed`: the `encoder` crate's model as
//! the configuration names it), the chunking and lexical terms (`text`), the in-memory
//! hybrid index (`index`: BM25 and cosine, fused by rank), the thread that embeds
//! passages (`embedder`) and the service that keeps it all current (`indexer`).
//!
//! - Nothing leaves the process: the model is compiled in, the index lives in memory.
//! - Indexing never reserves a tab; chunking runs on the blocking pool and embedding on
//!   one low-priority thread, so a page tool is never answered `target_busy` or kept
//!   waiting because of it.
//! - The model loads at the first search that needs it, not before.
//! - Without the model (turned off, or a file that does not load) search still answers
//!   from the lexical index, and says why vector search is off.
//!
//! May import page, browser and the base modules.

pub mod embed;
mod embedder;
pub mod index;
pub mod indexer;
pub mod text;

pub use index::{ChunkSource, Hit, Ranking};
pub use indexer::{IndexStats, SearchReport, SearchRequest, TabSearch};
