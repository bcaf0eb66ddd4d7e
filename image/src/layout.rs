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

/// Reads the image `digest` back from the layout at `dir`: its manifest and every blob it points to, each
/// checked against its digest (a layout someone edited gives an error, never a different image).
pub fn read_image(dir: &Path, digest: &Digest) -> Result<Image, ImageError> {
    let fail = |detail: String| ImageError::Layout {
        path: dir.display().to_string(),
        detail,
    };
    let blobs = dir.join("blobs").join("sha256");
    let read = |d: &Digest| -> Result<Vec<u8>, ImageError> {
        let bytes = std::fs::read(blobs.join(d.hex())).map_err(|e| fail(format!("{d}: {e}")))?;
        let found = Digest::of(&bytes);
        if found != *d {
            return Err(fail(format!(
                "blob {d} was changed: its content is {found}"
            )));
        }
        Ok(bytes)
    };
    let manifest_bytes = read(digest)?;
    let manifest: crate::spec::Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| fail(format!("manifest {digest} is not valid: {e}")))?;
    let mut out = Vec::new();
    for descriptor in std::iter::once(&manifest.config).chain(&manifest.layers) {
        out.push(crate::assemble::Blob {
            descriptor: descriptor.clone(),
            bytes: read(&descriptor.digest)?,
        });
    }
    Ok(Image {
        manifest,
        manifest_bytes,
        digest: digest.clone(),
        blobs: out,
    })
}
