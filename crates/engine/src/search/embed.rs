//! The encoder as the engine's configuration names it (shipped, off, or a directory).

use std::sync::Arc;

pub use encoder::{MAX_PASSAGE_PIECES, Model, ModelError, cosine, shipped_bytes};

use crate::config::EmbedModel;

/// The model `which` names, loaded.
pub fn load(which: &EmbedModel) -> Result<Arc<Model>, ModelError> {
    match which {
        EmbedModel::Off => Err(ModelError::Off),
        EmbedModel::Dir(dir) => Model::from_dir(dir).map(Arc::new),
        EmbedModel::Shipped => encoder::shipped(),
    }
}
