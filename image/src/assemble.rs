//! Assembles an OCI image from a built binary: the libraries layer (or a pulled base), the binary's layer,
//! the config and the manifest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::digest::Digest;
use crate::error::ImageError;
use crate::layer::{Layer, LayerBuilder};
use crate::libs::shared_libraries;
use crate::spec::{
    self, CONFIG_MEDIA_TYPE, Descriptor, History, ImageConfig, LIBRARIES_ANNOTATION,
    MANIFEST_MEDIA_TYPE, Manifest, REVISION_ANNOTATION, RootFs, RunConfig, SOURCE_ANNOTATION,
};

/// The numeric user and group the image runs as unless told otherwise (distroless' `nonroot`).
pub const NONROOT: (u64, u64) = (65532, 65532);

/// Where the binary lives in the image.
pub const APP_DIR: &str = "/app";

/// What to put in an image.
#[derive(Debug, Clone)]
pub struct ImageSpec {
    /// The built binary on this machine.
    pub binary: PathBuf,
    /// Its name in the image (`/app/NAME`), the entry point.
    pub name: String,
    /// Arguments after the entry point (`["serve"]` for an operator).
    pub args: Vec<String>,
    /// The numeric user and group (never 0 unless asked).
    pub user: (u64, u64),
    /// `org.opencontainers.image.source`.
    pub source: Option<String>,
    /// `org.opencontainers.image.revision`.
    pub revision: Option<String>,
    /// More annotations for the manifest (and labels for the config).
    pub annotations: BTreeMap<String, String>,
}

impl ImageSpec {
    /// An image of `binary` named `name`, running as the non-root user.
    pub fn new(binary: impl Into<PathBuf>, name: impl Into<String>) -> ImageSpec {
        ImageSpec {
            binary: binary.into(),
            name: name.into(),
            args: Vec::new(),
            user: NONROOT,
            source: None,
            revision: None,
            annotations: BTreeMap::new(),
        }
    }
}

/// A blob of an image with its descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    /// Its media type, digest (`sha256:<hex>` of `bytes`) and size.
    pub descriptor: Descriptor,
    /// The blob's content (for a layer, the gzipped tar).
    pub bytes: Vec<u8>,
}

/// A base image as pulled: its manifest, config and layer blobs.
#[derive(Debug, Clone)]
pub struct BaseImage {
    /// The pinned reference it was pulled by (`host/name@sha256:…`).
    pub reference: String,
    /// The digest of its platform manifest (`sha256:<hex>`): the pinned one, or the entry of this host's
    /// platform when the reference pins an index.
    pub digest: Digest,
    /// Its image config: the environment, working directory, labels and history the image keeps.
    pub config: ImageConfig,
    /// Its layers as pulled (gzipped tars), bottom first; the image's own go on top.
    pub layers: Vec<Blob>,
}

/// An assembled image: manifest bytes and digest, and every blob it points to (config first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// The image manifest.
    pub manifest: Manifest,
    /// The manifest's JSON: exactly the bytes pushed (or pulled) and digested.
    pub manifest_bytes: Vec<u8>,
    /// The digest of `manifest_bytes` (`sha256:<hex>`), by which the image is pulled.
    pub digest: Digest,
    /// Every blob the manifest points to: the config first, then the layers, bottom first.
    pub blobs: Vec<Blob>,
}

impl Image {
    /// The manifest's descriptor (for an index).
    pub fn descriptor(&self) -> Descriptor {
        Descriptor {
            media_type: MANIFEST_MEDIA_TYPE.to_string(),
            digest: self.digest.clone(),
            size: self.manifest_bytes.len() as u64,
            platform: None,
            annotations: BTreeMap::new(),
        }
    }
}

/// Builds the image of `spec` on top of `base`, or, with no base, of the binary and the shared libraries
/// it links on this host (none for a static binary).
pub fn assemble(spec: &ImageSpec, base: Option<&BaseImage>) -> Result<Image, ImageError> {
    let binary = read(&spec.binary)?;
    let mut annotations = spec.annotations.clone();
    if let Some(source) = &spec.source {
        annotations.insert(SOURCE_ANNOTATION.to_string(), source.clone());
    }
    if let Some(revision) = &spec.revision {
        annotations.insert(REVISION_ANNOTATION.to_string(), revision.clone());
    }

    let mut layers: Vec<Blob> = Vec::new();
    let mut diff_ids: Vec<Digest> = Vec::new();
    let mut history: Vec<History> = Vec::new();
    let mut run = RunConfig::default();
    match base {
        Some(base) => {
            annotations.insert(
                "org.opencontainers.image.base.name".into(),
                base.reference.clone(),
            );
            annotations.insert(
                "org.opencontainers.image.base.digest".into(),
                base.digest.to_string(),
            );
            layers.extend(base.layers.iter().cloned());
            diff_ids.extend(base.config.rootfs.diff_ids.iter().cloned());
            history.extend(base.config.history.iter().cloned());
            run.env = base.config.config.env.clone();
            run.working_dir = base.config.config.working_dir.clone();
            run.labels = base.config.config.labels.clone();
        }
        None => {
            let libs = shared_libraries(&spec.binary)?;
            let layer = system_layer(&libs, spec.user)?;
            let list: Vec<String> = libs.iter().map(|p| p.display().to_string()).collect();
            if !list.is_empty() {
                annotations.insert(LIBRARIES_ANNOTATION.to_string(), list.join(","));
            }
            history.push(History {
                created_by: Some("piceli-image: shared libraries of the build host".into()),
                comment: Some(if list.is_empty() {
                    "static binary".into()
                } else {
                    list.join(",")
                }),
                empty_layer: false,
            });
            push_layer(&mut layers, &mut diff_ids, layer);
            run.env = vec![
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string(),
            ];
        }
    }
    if base.is_some() && run.env.iter().all(|e| !e.starts_with("PATH=")) {
        run.env
            .push("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".to_string());
    }

    let path = format!("{APP_DIR}/{}", spec.name);
    let mut app = LayerBuilder::new();
    app.file(&path, binary, 0o755)?;
    push_layer(&mut layers, &mut diff_ids, app.build()?);
    history.push(History {
        created_by: Some(format!("piceli-image: {path}")),
        comment: None,
        empty_layer: false,
    });

    run.user = Some(format!("{}:{}", spec.user.0, spec.user.1));
    run.entrypoint = vec![path];
    run.cmd = spec.args.clone();
    if run.working_dir.is_none() {
        run.working_dir = Some("/".to_string());
    }
    run.labels
        .extend(annotations.iter().map(|(k, v)| (k.clone(), v.clone())));

    let config = ImageConfig {
        architecture: base.map_or_else(
            || spec::host_architecture().to_string(),
            |b| b.config.architecture.clone(),
        ),
        os: "linux".to_string(),
        config: run,
        rootfs: RootFs {
            kind: "layers".to_string(),
            diff_ids,
        },
        history,
    };
    let config_bytes = json(&config)?;
    let config_blob = Blob {
        descriptor: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.to_string(),
            digest: Digest::of(&config_bytes),
            size: config_bytes.len() as u64,
            platform: None,
            annotations: BTreeMap::new(),
        },
        bytes: config_bytes,
    };
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_MEDIA_TYPE.to_string()),
        config: config_blob.descriptor.clone(),
        layers: layers.iter().map(|b| b.descriptor.clone()).collect(),
        annotations,
    };
    let manifest_bytes = json(&manifest)?;
    let mut blobs = vec![config_blob];
    blobs.extend(layers);
    Ok(Image {
        digest: Digest::of(&manifest_bytes),
        manifest,
        manifest_bytes,
        blobs,
    })
}

/// The layer under the binary when there is no base: the libraries, and a passwd/group naming the user.
fn system_layer(libs: &[PathBuf], user: (u64, u64)) -> Result<Layer, ImageError> {
    let mut layer = LayerBuilder::new();
    for lib in libs {
        layer.file(&lib.to_string_lossy(), read(lib)?, 0o755)?;
    }
    let (uid, gid) = user;
    let passwd = format!(
        "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:{uid}:{gid}:nonroot:/:/sbin/nologin\n"
    );
    let group = format!("root:x:0:\nnonroot:x:{gid}:\n");
    layer.file("/etc/passwd", passwd.into_bytes(), 0o644)?;
    layer.file("/etc/group", group.into_bytes(), 0o644)?;
    layer.build()
}

fn push_layer(layers: &mut Vec<Blob>, diff_ids: &mut Vec<Digest>, layer: Layer) {
    diff_ids.push(layer.diff_id.clone());
    layers.push(Blob {
        descriptor: layer.descriptor(),
        bytes: layer.compressed,
    });
}

fn read(path: &Path) -> Result<Vec<u8>, ImageError> {
    std::fs::read(path)
        .map_err(|e| ImageError::assemble(format!("cannot read {}: {e}", path.display())))
}

fn json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, ImageError> {
    serde_json::to_vec(value).map_err(|e| ImageError::assemble(format!("cannot write JSON: {e}")))
}
