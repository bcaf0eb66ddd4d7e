//! The last delivered build of each image, kept in the state directory (`images.json`): what `render`
//! shows offline and what lets `deploy` skip an unchanged build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::ImagesError;
use super::identity::SourceIdentity;

/// The file in the state directory.
pub const FILE: &str = "images.json";

/// One delivered image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivered {
    /// `registry/name@sha256:…` (or the OCI layout's name and digest).
    pub reference: String,
    /// Where it went: a registry repository or `oci:DIR`.
    pub destination: String,
    /// What it was built from.
    pub identity: SourceIdentity,
    /// The package's directory (found once with `cargo metadata`).
    pub package_dir: PathBuf,
    /// The directories of its path dependencies outside it (found with the package's).
    #[serde(default)]
    pub dep_dirs: Vec<PathBuf>,
}

/// Every delivered image, keyed by its placeholder (`build:shop-api`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageStore {
    /// The last delivery of each image, keyed by its placeholder.
    pub images: BTreeMap<String, Delivered>,
}

impl ImageStore {
    /// Reads the store in `state_dir` (empty when there is none yet).
    pub fn load(state_dir: &Path) -> Result<ImageStore, ImagesError> {
        let path = state_dir.join(FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| ImagesError::Store {
                path: path.display().to_string(),
                detail: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ImageStore::default()),
            Err(e) => Err(ImagesError::Store {
                path: path.display().to_string(),
                detail: e.to_string(),
            }),
        }
    }

    /// Writes the store atomically.
    pub fn save(&self, state_dir: &Path) -> Result<(), ImagesError> {
        let path = state_dir.join(FILE);
        let fail = |e: std::io::Error| ImagesError::Store {
            path: path.display().to_string(),
            detail: e.to_string(),
        };
        std::fs::create_dir_all(state_dir).map_err(fail)?;
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| ImagesError::Store {
            path: path.display().to_string(),
            detail: e.to_string(),
        })?;
        let tmp = state_dir.join(format!(".{FILE}.tmp"));
        std::fs::write(&tmp, bytes).map_err(fail)?;
        std::fs::rename(&tmp, &path).map_err(fail)
    }
}
