//! Field ownership for server-side apply: paths, field sets and schema-guided walks over objects.

pub mod managed;
pub mod omitempty;
pub mod path;
pub mod times;
pub mod walk;
