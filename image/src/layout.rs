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

/// What [`retain`] kept and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retained {
    /// Manifests kept (those asked for that the layout holds).
    pub kept: usize,
    /// Files removed from `blobs/sha256` (blobs no kept manifest points to, and stray temp files).
    pub removed: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// Garbage-collects the layout at `dir`: keeps the manifests in `keep` and every blob they point to,
/// removes every other blob, and lists in `index.json` only the kept images it listed. A kept manifest
/// that cannot be read keeps nothing of its own (its blobs go; reading it back fails as it did before).
/// A missing layout is empty.
pub fn retain(
    dir: &Path,
    keep: &std::collections::BTreeSet<Digest>,
) -> Result<Retained, ImageError> {
    let fail = |e: std::io::Error| ImageError::Layout {
        path: dir.display().to_string(),
        detail: e.to_string(),
    };
    let blobs = dir.join("blobs").join("sha256");
    let entries = match std::fs::read_dir(&blobs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Retained::default()),
        Err(e) => return Err(fail(e)),
    };
    let mut live: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut kept = 0;
    for digest in keep {
        let Ok(bytes) = std::fs::read(blobs.join(digest.hex())) else {
            continue;
        };
        let Ok(manifest) = serde_json::from_slice::<crate::spec::Manifest>(&bytes) else {
            continue;
        };
        kept += 1;
        live.insert(digest.hex().to_string());
        for d in std::iter::once(&manifest.config).chain(&manifest.layers) {
            live.insert(d.digest.hex().to_string());
        }
    }
    let mut out = Retained {
        kept,
        ..Retained::default()
    };
    for entry in entries {
        let entry = entry.map_err(fail)?;
        let name = entry.file_name().to_string_lossy().to_string();
        if live.contains(&name) {
            continue;
        }
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        std::fs::remove_file(entry.path()).map_err(fail)?;
        out.removed += 1;
        out.bytes += size;
    }
    let index_path = dir.join("index.json");
    if let Ok(bytes) = std::fs::read(&index_path)
        && let Ok(mut index) = serde_json::from_slice::<Index>(&bytes)
    {
        let before = index.manifests.len();
        index.manifests.retain(|m| live.contains(m.digest.hex()));
        if index.manifests.len() != before {
            let bytes = serde_json::to_vec(&index).map_err(|e| ImageError::Layout {
                path: dir.display().to_string(),
                detail: e.to_string(),
            })?;
            std::fs::write(&index_path, bytes).map_err(fail)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assemble::{Image, ImageSpec, assemble};

    fn image(dir: &Path, text: &str) -> Image {
        let bin = dir.join(format!("bin-{text}"));
        std::fs::write(&bin, text).unwrap();
        assemble(&ImageSpec::new(&bin, "app"), None).unwrap()
    }

    #[test]
    fn retain_keeps_the_kept_images_whole_and_removes_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = tmp.path().join("layout");
        let (a, b) = (image(tmp.path(), "a"), image(tmp.path(), "b"));
        write_layout(&layout, &a, "app").unwrap();
        write_layout(&layout, &b, "app").unwrap();
        let keep = std::collections::BTreeSet::from([a.digest.clone()]);
        let done = retain(&layout, &keep).unwrap();
        assert_eq!(done.kept, 1);
        assert!(done.removed >= 2 && done.bytes > 0, "{done:?}");
        assert_eq!(read_image(&layout, &a.digest).unwrap(), a);
        assert!(read_image(&layout, &b.digest).is_err());
        let index = std::fs::read_to_string(layout.join("index.json")).unwrap();
        assert!(!index.contains(b.digest.hex()), "{index}");
        assert_eq!(
            retain(&layout, &keep).unwrap().removed,
            0,
            "nothing more to remove"
        );
        assert_eq!(
            retain(&tmp.path().join("none"), &keep).unwrap(),
            Retained::default()
        );
    }
}
