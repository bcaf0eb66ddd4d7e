//! Images built from this workspace's sources: `image: build(package: "…", bin: "…", base: "…")` and
//! `build(self)`, and the registry a target delivers them to.

use crate::spanned::Spanned;
use serde::{Deserialize, Serialize};

/// The prefix of the placeholder an unbuilt image renders as (`build:shop-api`).
pub const BUILD_PLACEHOLDER_PREFIX: &str = "build:";

/// One image that `deploy` builds with cargo and delivers by digest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImageBuild {
    /// The placeholder the workload's `image` holds until a build is delivered (`build:PACKAGE`).
    pub image: Spanned<String>,
    /// The cargo package (`-p`).
    pub package: Spanned<String>,
    /// The binary (`--bin`); the package's name when not given.
    #[serde(default)]
    pub bin: Option<Spanned<String>>,
    /// A base image pinned by digest; with none, the binary and the libraries it links.
    #[serde(default)]
    pub base: Option<Spanned<String>>,
    /// `build(self)`: this app's own binary, run as the operator (`serve`).
    #[serde(default)]
    pub this_app: bool,
}

impl ImageBuild {
    /// The binary's name.
    pub fn bin_name(&self) -> &str {
        self.bin
            .as_ref()
            .map_or(self.package.v.as_str(), |b| b.v.as_str())
    }

    /// The placeholder text for a package.
    pub fn placeholder(package: &str) -> String {
        format!("{BUILD_PLACEHOLDER_PREFIX}{package}")
    }
}
