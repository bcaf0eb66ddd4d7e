//! Reproducible layers: tar archives with fixed times, owners and order, gzip-compressed with a fixed header.

use std::collections::BTreeMap;

use crate::digest::Digest;
use crate::error::ImageError;
use crate::spec::{Descriptor, LAYER_MEDIA_TYPE};

/// The modification time of every entry: the Unix epoch, so no build time leaks into a digest.
pub const FIXED_MTIME: u64 = 0;

/// What a layer entry is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    Dir,
    File { bytes: Vec<u8>, mode: u32 },
    Symlink { target: String },
}

/// The files of one layer, keyed by their absolute path in the image; the order they are added in does
/// not matter.
#[derive(Debug, Clone, Default)]
pub struct LayerBuilder {
    entries: BTreeMap<String, Entry>,
    owner: (u64, u64),
}

impl LayerBuilder {
    /// An empty layer whose entries belong to root (uid and gid 0).
    pub fn new() -> LayerBuilder {
        LayerBuilder::default()
    }

    /// Entries belong to this numeric user and group instead of root.
    pub fn owner(mut self, uid: u64, gid: u64) -> LayerBuilder {
        self.owner = (uid, gid);
        self
    }

    /// Adds a regular file at `path` (absolute, `/`-separated) with `mode` (e.g. `0o755`).
    pub fn file(&mut self, path: &str, bytes: Vec<u8>, mode: u32) -> Result<&mut Self, ImageError> {
        let path = normalize(path)?;
        self.parents(&path);
        self.entries.insert(
            path,
            Entry::File {
                bytes,
                mode: mode & 0o7777,
            },
        );
        Ok(self)
    }

    /// Adds a directory.
    pub fn dir(&mut self, path: &str) -> Result<&mut Self, ImageError> {
        let path = normalize(path)?;
        self.parents(&path);
        self.entries.entry(path).or_insert(Entry::Dir);
        Ok(self)
    }

    /// Adds a symbolic link at `path` pointing to `target`.
    pub fn symlink(&mut self, path: &str, target: &str) -> Result<&mut Self, ImageError> {
        let path = normalize(path)?;
        self.parents(&path);
        self.entries.insert(
            path,
            Entry::Symlink {
                target: target.to_string(),
            },
        );
        Ok(self)
    }

    /// The paths of the layer, sorted (directories included).
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    fn parents(&mut self, path: &str) {
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            let parent = &path[..at + i];
            if !parent.is_empty() {
                self.entries.entry(parent.to_string()).or_insert(Entry::Dir);
            }
            at += i + 1;
        }
    }

    /// Writes the tar archive and compresses it.
    pub fn build(&self) -> Result<Layer, ImageError> {
        let mut tar = tar::Builder::new(Vec::new());
        for (path, entry) in &self.entries {
            let mut header = tar::Header::new_ustar();
            header.set_mtime(FIXED_MTIME);
            header.set_uid(self.owner.0);
            header.set_gid(self.owner.1);
            let (data, kind, mode): (&[u8], tar::EntryType, u32) = match entry {
                Entry::Dir => (&[], tar::EntryType::Directory, 0o755),
                Entry::File { bytes, mode } => (bytes, tar::EntryType::Regular, *mode),
                Entry::Symlink { .. } => (&[], tar::EntryType::Symlink, 0o777),
            };
            header.set_entry_type(kind);
            header.set_mode(mode);
            header.set_size(data.len() as u64);
            let name = match entry {
                Entry::Dir => format!("{path}/"),
                _ => path.clone(),
            };
            let result = match entry {
                Entry::Symlink { target } => tar.append_link(&mut header, &name, target),
                _ => tar.append_data(&mut header, &name, data),
            };
            result
                .map_err(|e| ImageError::assemble(format!("cannot add {path} to a layer: {e}")))?;
        }
        let tar_bytes = tar
            .into_inner()
            .map_err(|e| ImageError::assemble(format!("cannot finish a layer: {e}")))?;
        Ok(Layer::from_tar(tar_bytes))
    }
}

/// A layer ready to push: the compressed bytes with their digest, and the uncompressed digest (diff id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    /// The layer's tar, gzipped: the bytes pushed.
    pub compressed: Vec<u8>,
    /// The digest of `compressed` (`sha256:<hex>`), as the manifest names the layer.
    pub digest: Digest,
    /// The digest of the uncompressed tar (`sha256:<hex>`), as the config's `rootfs.diff_ids` lists it.
    pub diff_id: Digest,
}

impl Layer {
    /// Compresses an uncompressed tar with a fixed gzip header (no name, mtime 0, "unknown" OS).
    ///
    /// Deflate is miniz_oxide's at level 6, called directly: flate2's output would depend on which
    /// backend other crates of a build turn on, and with it the digest.
    pub fn from_tar(tar_bytes: Vec<u8>) -> Layer {
        let diff_id = Digest::of(&tar_bytes);
        let deflated = miniz_oxide::deflate::compress_to_vec(&tar_bytes, 6);
        let mut compressed = Vec::with_capacity(deflated.len() + 18);
        // ID1 ID2, CM=deflate, FLG=0, MTIME=0, XFL=0, OS=255 (unknown).
        compressed.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        compressed.extend_from_slice(&deflated);
        compressed.extend_from_slice(&crc32fast::hash(&tar_bytes).to_le_bytes());
        compressed.extend_from_slice(&(tar_bytes.len() as u32).to_le_bytes());
        Layer {
            digest: Digest::of(&compressed),
            compressed,
            diff_id,
        }
    }

    /// The layer's descriptor in a manifest.
    pub fn descriptor(&self) -> Descriptor {
        Descriptor {
            media_type: LAYER_MEDIA_TYPE.to_string(),
            digest: self.digest.clone(),
            size: self.compressed.len() as u64,
            platform: None,
            annotations: BTreeMap::new(),
        }
    }
}

/// `/a/b` → `a/b`: tar names are relative; refuses empty, `.` and `..` parts.
fn normalize(path: &str) -> Result<String, ImageError> {
    let trimmed = path.trim_start_matches('/').trim_end_matches('/');
    let bad = trimmed.is_empty()
        || trimmed
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..");
    if bad {
        return Err(ImageError::assemble(format!(
            "`{path}` is not a plain absolute path in the image"
        )));
    }
    Ok(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(layer: &Layer) -> Vec<(String, u64, u64, u64, u32)> {
        let tar_bytes = {
            use std::io::Read as _;
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&layer.compressed[..])
                .read_to_end(&mut out)
                .expect("gunzip");
            out
        };
        assert_eq!(Digest::of(&tar_bytes), layer.diff_id);
        let mut archive = tar::Archive::new(&tar_bytes[..]);
        let list = archive.entries().expect("entries");
        list.map(|e| {
            let e = e.expect("entry");
            let h = e.header();
            let path = e.path().expect("path").to_string_lossy().into_owned();
            (
                path,
                h.mtime().expect("mtime"),
                h.uid().expect("uid"),
                h.gid().expect("gid"),
                h.mode().expect("mode"),
            )
        })
        .collect()
    }

    #[test]
    fn order_of_adding_does_not_change_the_layer() {
        let mut a = LayerBuilder::new();
        a.file("/app/b", b"b".to_vec(), 0o644).expect("add");
        a.file("/app/a", b"a".to_vec(), 0o755).expect("add");
        let mut b = LayerBuilder::new();
        b.file("/app/a", b"a".to_vec(), 0o755).expect("add");
        b.file("app/b", b"b".to_vec(), 0o644).expect("add");
        let (a, b) = (a.build().expect("build"), b.build().expect("build"));
        assert_eq!(a, b);
        let list = entries(&a);
        let names: Vec<&str> = list.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(names, ["app/", "app/a", "app/b"]);
        assert!(
            list.iter()
                .all(|e| e.1 == FIXED_MTIME && e.2 == 0 && e.3 == 0)
        );
        assert_eq!(list[1].4, 0o755);
    }

    #[test]
    fn owner_is_recorded_and_gzip_header_is_fixed() {
        let mut l = LayerBuilder::new().owner(65532, 65532);
        l.dir("/data")
            .expect("dir")
            .symlink("/data/link", "../etc")
            .expect("link");
        let layer = l.build().expect("build");
        assert!(entries(&layer).iter().all(|e| e.2 == 65532 && e.3 == 65532));
        // gzip: magic, deflate, no flags, mtime 0, "unknown" OS.
        assert_eq!(&layer.compressed[..8], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
        assert_eq!(layer.compressed[9], 255);
    }

    #[test]
    fn paths_outside_the_image_are_refused() {
        let mut l = LayerBuilder::new();
        assert!(l.file("/app/../etc/passwd", vec![], 0o644).is_err());
        assert!(l.file("/", vec![], 0o644).is_err());
    }
}
