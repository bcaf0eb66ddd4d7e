//! Merging blocks.
