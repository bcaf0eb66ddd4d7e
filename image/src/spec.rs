//! The OCI image documents: descriptors, the image manifest, the index and the image config.
//!
//! Every map is a `BTreeMap` and every struct serializes its fields in one order, so the same image gives
//! the same bytes (and digest) whichever serde_json features the rest of a build turns on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;

/// `application/vnd.oci.image.manifest.v1+json`.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// `application/vnd.oci.image.index.v1+json`.
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// `application/vnd.oci.image.config.v1+json`.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// `application/vnd.oci.image.layer.v1.tar+gzip`.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.oci.image.layer.v1.tar+gzip";
/// Docker's schema 2 manifest, which registries still serve for many base images.
pub const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Docker's manifest list (an index).
pub const DOCKER_LIST_MEDIA_TYPE: &str =
    "application/vnd.docker.distribution.manifest.list.v2+json";

/// The annotation naming the image's source repository.
pub const SOURCE_ANNOTATION: &str = "org.opencontainers.image.source";
/// The annotation naming the source revision (a git commit).
pub const REVISION_ANNOTATION: &str = "org.opencontainers.image.revision";
/// Our annotation listing the build host's shared libraries packed with the binary.
pub const LIBRARIES_ANNOTATION: &str = "dev.piceli.image.libraries";

/// A pointer to a blob: its media type, digest and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// The blob's media type (e.g. `application/vnd.oci.image.layer.v1.tar+gzip`).
    pub media_type: String,
    /// The digest of the blob's bytes (`sha256:<hex>`).
    pub digest: Digest,
    /// The blob's size in bytes.
    pub size: u64,
    /// The platform of the manifest it points to, in an index entry; None elsewhere or when the index
    /// does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    /// Annotations on the descriptor (an OCI layout names its image here); empty when none, and then not
    /// written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The platform of an index entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    /// The CPU architecture, as Go names it (`amd64`, `arm64`).
    pub architecture: String,
    /// The operating system (`linux`).
    pub os: String,
    /// The CPU variant (e.g. `v8` for `arm64`); None when the entry gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// An image manifest: one config and the layers, bottom first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// The manifest schema version: always 2.
    pub schema_version: u32,
    /// The manifest's own media type ([`MANIFEST_MEDIA_TYPE`] in the images we assemble); None when the
    /// document omits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The descriptor of the image config blob.
    pub config: Descriptor,
    /// The descriptors of the layers (gzipped tars), bottom first.
    pub layers: Vec<Descriptor>,
    /// The manifest's annotations (source, revision, base image, packed libraries, …); empty when none,
    /// and then not written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An image index (or a Docker manifest list): manifests per platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    /// The index schema version: always 2.
    pub schema_version: u32,
    /// [`INDEX_MEDIA_TYPE`] or [`DOCKER_LIST_MEDIA_TYPE`]; None when the document omits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// The manifests it lists: one per platform in a registry's index, or the one image of an OCI layout.
    pub manifests: Vec<Descriptor>,
}

/// The image configuration blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageConfig {
    /// The CPU architecture the image runs on, as Go names it (`amd64`, `arm64`).
    pub architecture: String,
    /// The operating system (`linux`).
    pub os: String,
    /// How containers of the image run (all defaults when the document has no `config`).
    #[serde(default)]
    pub config: RunConfig,
    /// The layers' uncompressed digests.
    pub rootfs: RootFs,
    /// How each layer was made, bottom first (entries with `empty_layer` made none); empty when not recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<History>,
}

/// How a container of the image runs (the `config` object of the image config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunConfig {
    /// `User`: who containers run as (`UID:GID` in the images we assemble); None leaves it to the runtime.
    #[serde(rename = "User", default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// `Env`: the environment, each entry `NAME=VALUE`.
    #[serde(rename = "Env", default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// `Entrypoint`: the program run and its first arguments (`/app/NAME` in the images we assemble).
    #[serde(rename = "Entrypoint", default, skip_serializing_if = "Vec::is_empty")]
    pub entrypoint: Vec<String>,
    /// `Cmd`: the arguments after the entry point.
    #[serde(rename = "Cmd", default, skip_serializing_if = "Vec::is_empty")]
    pub cmd: Vec<String>,
    /// `WorkingDir`: the containers' working directory; None leaves it to the runtime.
    #[serde(
        rename = "WorkingDir",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub working_dir: Option<String>,
    /// `Labels`: the image's labels (`null` reads as none).
    #[serde(
        rename = "Labels",
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub labels: BTreeMap<String, String>,
}

/// The layers' uncompressed digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootFs {
    /// The rootfs type: always `layers`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The digest of each layer's uncompressed tar (`sha256:<hex>`), in the order of the manifest's layers.
    pub diff_ids: Vec<Digest>,
}

/// One history entry (what made a layer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// The command or step that made the layer; None when not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// A note on the step (our libraries layer lists the libraries it packs); None when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Whether the step made no layer (no entry in `rootfs.diff_ids` matches it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_layer: bool,
}

/// Docker writes `"Labels": null`; read it as no labels.
fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    Ok(Option::<BTreeMap<String, String>>::deserialize(d)?.unwrap_or_default())
}

/// The OCI architecture name of the build host (`amd64`, `arm64`, …).
pub fn host_architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "powerpc64" => "ppc64le",
        other => other,
    }
}
