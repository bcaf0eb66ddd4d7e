//! Why a storage operation failed, independent of HTTP: the API layer turns it into a Status.

use crate::status::ApiError;

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The SQLite database failed.
    #[error("storage: {0}")]
    Db(#[from] rusqlite::Error),
    /// A stored object or event is not valid JSON.
    #[error("corrupt stored object: {0}")]
    Corrupt(serde_json::Error),
    /// An object could not be encoded for storage.
    #[error("encoding an object for storage: {0}")]
    Encode(serde_json::Error),
    /// Another thread panicked while holding the store.
    #[error("store lock poisoned")]
    Poisoned,
    /// The change history no longer reaches back to `requested` (compacted up to `compacted`).
    #[error("too old resource version: {requested} ({compacted})")]
    Compacted {
        /// The resource version asked for.
        requested: u64,
        /// The oldest resource version still in the history.
        compacted: u64,
    },
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Compacted { .. } => ApiError::expired(e.to_string()),
            other => ApiError::internal(other),
        }
    }
}

impl From<StoreError> for crate::error::SimError {
    fn from(e: StoreError) -> Self {
        crate::error::SimError::Runtime(e.to_string())
    }
}
