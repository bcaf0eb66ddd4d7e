//! Errors of building, writing and delivering images, each with its fixed code.

use piceli_core::{Code, Coded};

/// What went wrong while building, writing or delivering an image.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// `cargo build` failed or produced no binary of that name.
    #[error("cargo could not build `{package}`: {detail}")]
    Build {
        /// The cargo package built (empty when `rustc -V` itself could not run).
        package: String,
        /// What failed: cargo or rustc could not run or exited with an error, or no such package or binary.
        detail: String,
    },
    /// A file that goes into the image cannot be read, or `ldd` cannot list its libraries.
    #[error("cannot assemble the image: {detail}")]
    Assemble {
        /// What could not be read or listed, and why.
        detail: String,
    },
    /// An image reference, registry or digest is not well formed.
    #[error("`{text}` is not a valid {what}: {help}")]
    BadReference {
        /// The text as given.
        text: String,
        /// What it was read as (`repository`, `pinned image`).
        what: &'static str,
        /// How to write it instead.
        help: &'static str,
    },
    /// A digest is not `sha256:` and 64 hex digits.
    #[error("`{text}` is not a sha256 digest (`sha256:` and 64 lowercase hex digits)")]
    BadDigest {
        /// The text as given.
        text: String,
    },
    /// The registry cannot be reached or answered something the distribution API does not allow.
    #[error("registry {registry}: {detail}")]
    Registry {
        /// The registry's `HOST[:PORT]`.
        registry: String,
        /// What went wrong: the request and the registry's answer, a connection error or an invalid document.
        detail: String,
    },
    /// The registry refused our credentials, or the named docker config file cannot be used.
    #[error("registry {registry}: authentication failed: {detail}")]
    Auth {
        /// The registry's `HOST[:PORT]`, or the path of the docker config file that cannot be used.
        registry: String,
        /// Why the credentials were refused or the file cannot be used.
        detail: String,
    },
    /// Content pulled back does not have the digest it was asked by.
    #[error("{what} pulled by {expected} has digest {actual}")]
    DigestMismatch {
        /// What was pulled and from where (`manifest REPOSITORY`, `blob REPOSITORY`).
        what: String,
        /// The digest it was asked by (`sha256:<hex>`).
        expected: String,
        /// The digest of the bytes received (`sha256:<hex>`).
        actual: String,
    },
    /// The OCI layout directory cannot be written.
    #[error("cannot write the OCI layout {path}: {detail}")]
    Layout {
        /// The layout directory.
        path: String,
        /// The I/O or serialization error.
        detail: String,
    },
}

impl Coded for ImageError {
    fn code(&self) -> Code {
        match self {
            ImageError::Build { .. } => Code::ImageBuildFailed,
            ImageError::Assemble { .. } => Code::ImageAssembleFailed,
            ImageError::BadReference { .. } | ImageError::BadDigest { .. } => {
                Code::ImageReferenceInvalid
            }
            ImageError::Registry { .. } => Code::RegistryFailed,
            ImageError::Auth { .. } => Code::RegistryAuthFailed,
            ImageError::DigestMismatch { .. } => Code::ImageDigestMismatch,
            ImageError::Layout { .. } => Code::OciLayoutFailed,
        }
    }
}

impl ImageError {
    pub(crate) fn assemble(detail: impl std::fmt::Display) -> ImageError {
        ImageError::Assemble {
            detail: detail.to_string(),
        }
    }
}
