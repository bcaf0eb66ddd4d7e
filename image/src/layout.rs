//! Writes an image as an OCI image layout directory (`oci-layout`, `index.json`, `blobs/sha256/…`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::assemble::Image;
use crate::digest::Digest;
use crate::error::ImageError;
use crate::spec::{INDEX_MEDIA_TYPE, Index};

/// The annotation an OCI layout's index uses to name an image.
pub const REF_NAME_ANNOTATION: &str = "org.opencontainers.image.ref.name";

/// Writes `image` into the layout at `dir` (created if missing), named `name` in `index.json`. Blobs
/// already there are kept; the index lists this image alone.
pub fn write_layout(dir: &Path, image: &Image, name: &str) -> Result<(), ImageError> {
    let fail = |e: std::io::Error| ImageError::Layout {
        path: dir.display().to_string(),
        detail: e.to_string(),
    };
    let blobs = dir.join("blobs").join("sha256");
    std::fs::create_dir_all(&blobs).map_err(fail)?;
    std::fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).map_err(fail)?;
    let write_blob = |digest: &Digest, bytes: &[u8]| -> Result<(), ImageError> {
        let path = blobs.join(digest.hex());
        if !path.exists() {
            let tmp = blobs.join(format!(".{}.tmp", digest.hex()));
            std::fs::write(&tmp, bytes).map_err(fail)?;
            std::fs::rename(&tmp, &path).map_err(fail)?;
        }
        Ok(())
    };
    for blob in &image.blobs {
        write_blob(&blob.descriptor.digest, &blob.bytes)?;
    }
    write_blob(&image.digest, &image.manifest_bytes)?;
    let mut descriptor = image.descriptor();
    descriptor.annotations = BTreeMap::from([(REF_NAME_ANNOTATION.to_string(), name.to_string())]);
    let index = Index {
        schema_version: 2,
        media_type: Some(INDEX_MEDIA_TYPE.to_string()),
        manifests: vec![descriptor],
    };
    let bytes = serde_json::to_vec(&index).map_err(|e| ImageError::Layout {
        path: dir.display().to_string(),
        detail: e.to_string(),
    })?;
    std::fs::write(dir.join("index.json"), bytes).map_err(fail)
}
