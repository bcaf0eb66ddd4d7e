//! OCI images from cargo-built binaries without a container engine: reproducible layers, the config and
//! manifest, an OCI layout directory, and delivery to a registry over the distribution API.
//!
//! The same binary always gives the same image digest: every tar entry has a fixed time and owner, entries
//! are sorted, gzip's header is fixed and the JSON documents serialize in one order.

pub mod assemble;
pub mod cargo;
pub mod digest;
pub mod error;
pub mod layer;
pub mod layout;
pub mod libs;
pub mod reference;
pub mod registry;
pub mod spec;

pub use assemble::{BaseImage, Blob, Image, ImageSpec, assemble};
pub use digest::Digest;
pub use error::ImageError;
pub use piceli_core::Coded;
pub use reference::{PinnedImage, Repository};
pub use registry::{PushReport, RegistryClient, auth::DockerConfig, pull_base};
