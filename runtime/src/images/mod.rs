//! Images built from the app's workspace (`image: build(…)`): source identity, cargo build, assembly and
//! delivery by digest, and the substitution of the delivered `registry/name@sha256:…` for the placeholder
//! (`build:shop-api`) in the app, so that the plan shows the digest and its hash covers it.
//!
//! `deploy` runs three stages of it (see [`stages`]): `inputs` reads each build's source identity,
//! `build` builds what changed into the state directory's build cache (`builds/`, an OCI layout indexed in
//! the journal), and — only once the plan that shows the digests is approved — `deliver` pushes. An image
//! whose inputs are unchanged since its last delivery (and that the destination still has) is neither
//! built nor pushed. After a run succeeds, [`gc`] drops from the build cache what no release needs.

mod cargo_build;
pub mod gc;
pub mod identity;
pub mod stages;
pub mod store;

pub use stages::{
    ImageInputs, Prepared, PreparedImage, SOURCE_DIRTY, SOURCE_REVISION, build, read_inputs,
};

use std::path::{Path, PathBuf};

use piceli_core::model::{App, ImageBuild, Target};
use piceli_core::{Code, Coded};
use piceli_image::{Digest, DockerConfig, ImageError, RegistryClient, Repository};
use serde::Serialize;

use store::ImageStore;

/// Problems of building and delivering images (the image crate's own, and ours).
#[derive(Debug, thiserror::Error)]
pub enum ImagesError {
    /// From building, assembling or delivering.
    #[error(transparent)]
    Image(ImageError),
    /// The app builds images and neither the target nor `--registry`/`--oci-dir` says where they go.
    #[error("the app builds {images} and target `{target}` names no registry")]
    NoRegistry {
        /// The placeholders of the images the app builds, comma-separated (`build:shop-api, …`).
        images: String,
        /// The target's name.
        target: String,
    },
    /// A package's sources or the workspace cannot be read.
    #[error("cannot read the sources at {path}: {detail}")]
    Sources {
        /// The package directory, the file (relative to it) or the workspace that cannot be read.
        path: String,
        /// The I/O error (reading a file or directory, or running `cargo metadata`).
        detail: String,
    },
    /// A delivery the approved plan does not cover: a reference it does not run, or built content that
    /// does not hash to the reference's digest.
    #[error("{image}: {detail}")]
    NotApproved {
        /// The image's placeholder (`build:shop-api`).
        image: String,
        /// What does not match.
        detail: String,
    },
    /// The state directory's images.json cannot be read or written.
    #[error("cannot use {path}: {detail}")]
    Store {
        /// The path of `images.json`.
        path: String,
        /// The I/O or JSON error, or what is wrong with a recorded entry.
        detail: String,
    },
}

impl Coded for ImagesError {
    fn code(&self) -> Code {
        match self {
            ImagesError::Image(e) => e.code(),
            ImagesError::NoRegistry { .. } => Code::ImageNoDestination,
            ImagesError::NotApproved { .. } => Code::ImagesNotApproved,
            ImagesError::Sources { .. } | ImagesError::Store { .. } => Code::ImageSourcesUnreadable,
        }
    }

    fn help(&self) -> String {
        match self {
            ImagesError::Image(e) => e.help(),
            ImagesError::NoRegistry { .. } => {
                "add `{ registry: \"HOST[:PORT]/PATH\" }` to the target, or pass `--registry HOST[:PORT]/PATH` or \
                 `--oci-dir DIR`"
                    .into()
            }
            other => other.code().info().explanation.into(),
        }
    }
}

/// How images are built and where they go.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The workspace cargo builds in (default: the working directory).
    pub workspace: PathBuf,
    /// `--registry HOST[:PORT]/PATH`: overrides the target's registry for this run.
    pub registry: Option<String>,
    /// `--oci-dir DIR`: write an OCI layout instead of pushing.
    pub oci_dir: Option<PathBuf>,
    /// `--registry-auth FILE`: the docker config file with the registry's credentials.
    pub auth: Option<PathBuf>,
    /// The state directory (`images.json` lives there).
    pub state_dir: PathBuf,
    /// cargo's `--target-dir` (default: cargo's).
    pub target_dir: Option<PathBuf>,
    /// `--registry-ca FILE`: talk to the registry over HTTPS trusting exactly these CA certificates (PEM).
    pub ca: Option<PathBuf>,
}

/// One stage of building or delivering an image (`-o json` prints each as a line).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ImageEvent {
    /// The image's inputs were read.
    Inputs {
        /// The image's placeholder (`build:shop-api`).
        image: String,
        /// The digest of its inputs (`sha256:<hex>`).
        inputs: String,
        /// The workspace's git commit; None when it is not a git checkout.
        commit: Option<String>,
        /// Whether the package's files or Cargo.lock differ from the commit.
        dirty: bool,
        /// Whether the inputs and destination are those of the last delivery and the destination still
        /// has it (then nothing is built or pushed).
        unchanged: bool,
    },
    /// Built (or skipped: the inputs are those of the delivered image, or of one in the build cache).
    Build {
        /// The image's placeholder (`build:shop-api`).
        image: String,
        /// The manifest digest (`sha256:<hex>`), built or the last delivered one's.
        digest: String,
        /// Whether the build was skipped (the inputs are those of the delivered or a cached image).
        skipped: bool,
        /// Whether the image came from the build cache (built by an earlier, unapproved run).
        cached: bool,
        /// Milliseconds this stage took.
        ms: u64,
    },
    /// Delivered (or skipped: the destination has it).
    Deliver {
        /// The image's placeholder (`build:shop-api`).
        image: String,
        /// What the workload will run: `HOST[:PORT]/PATH@sha256:<hex>` (`NAME@sha256:<hex>` for an OCI
        /// layout).
        reference: String,
        /// Blobs uploaded to the registry, or for an OCI layout its blobs and manifest (0 when skipped).
        uploaded: usize,
        /// Blobs the registry already had (0 for an OCI layout or when skipped).
        present: usize,
        /// Bytes sent in uploads (0 for an OCI layout or when skipped).
        bytes: u64,
        /// Whether delivery was skipped (the destination has the image).
        skipped: bool,
        /// Milliseconds this stage took.
        ms: u64,
    },
    /// After a run succeeded: the build cache garbage-collected (see [`gc`]).
    Collect {
        /// Images kept (those the running and the live release run).
        kept: usize,
        /// Blobs removed.
        removed: usize,
        /// Their bytes.
        bytes: u64,
    },
}

/// Where images go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Destination {
    Registry(Repository),
    Oci(PathBuf),
}

impl Destination {
    /// Reads back what [`describe`] wrote (`oci:DIR`, or a registry repository).
    fn parse(text: &str) -> Result<Destination, ImagesError> {
        match text.strip_prefix("oci:") {
            Some(dir) => Ok(Destination::Oci(PathBuf::from(dir))),
            None => Repository::parse(text)
                .map(Destination::Registry)
                .map_err(ImagesError::Image),
        }
    }
}

/// The build cache in a state directory: an OCI layout holding every image built and not yet known
/// delivered (indexed in the journal by image and inputs).
pub fn cache_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("builds")
}

/// The registry's CA certificates (`--registry-ca FILE`), read.
fn read_ca(ca: Option<&Path>) -> Result<Option<Vec<u8>>, ImagesError> {
    ca.map(|path| {
        std::fs::read(path).map_err(|e| ImagesError::Sources {
            path: path.display().to_string(),
            detail: e.to_string(),
        })
    })
    .transpose()
}

fn docker_config(auth: Option<&Path>) -> Result<Option<DockerConfig>, ImagesError> {
    auth.map(DockerConfig::load)
        .transpose()
        .map_err(ImagesError::Image)
}

/// For `render` (offline, never builds): the app with the last delivered reference of each built image
/// from the state directory, and a note for each image that has none (it renders as its placeholder).
pub fn for_render(app: App, state_dir: &Path) -> (App, Vec<String>) {
    if app.builds.is_empty() {
        return (app, Vec::new());
    }
    let store = ImageStore::load(state_dir).unwrap_or_default();
    let mut notes = Vec::new();
    let mut references = Vec::new();
    for build in &app.builds {
        match store.images.get(&build.image.v) {
            Some(d) => references.push((
                build.image.v.clone(),
                d.reference.clone(),
                d.identity.clone(),
            )),
            None => notes.push(format!(
                "note: `{}` is not built yet and renders as that placeholder; `deploy` builds and delivers it",
                build.image.v
            )),
        }
    }
    (stages::substitute(app, &references), notes)
}

/// For `plan`, `apply` and `render`: the app with the last delivered build of each image from the target's
/// state directory (`target` and `--state-dir` as the command got them), and a note per image never delivered.
pub fn delivered(
    app: App,
    target: Option<&str>,
    state_dir_flag: Option<&Path>,
) -> (App, Vec<String>) {
    if app.builds.is_empty() {
        return (app, Vec::new());
    }
    let target = target
        .map(str::to_string)
        .or_else(|| app.targets.first().map(|t| t.name.v.clone()));
    let dir = state_dir(&app, target.as_deref().unwrap_or("default"), state_dir_flag);
    for_render(app, &dir)
}

/// The state directory of a target: `--state-dir`, or `.piceli/<app>/<target>` as sessions use.
pub fn state_dir(app: &App, target: &str, flag: Option<&Path>) -> PathBuf {
    flag.map_or_else(
        || crate::engine::state::StateDir::default_path(&app.name.v, target),
        Path::to_path_buf,
    )
}

fn destination(
    app: &App,
    target: &Target,
    opts: &BuildOptions,
    build: &ImageBuild,
) -> Result<Destination, ImagesError> {
    if let Some(dir) = &opts.oci_dir {
        return Ok(Destination::Oci(dir.clone()));
    }
    let Some(registry) = opts
        .registry
        .clone()
        .or_else(|| target.registry.as_ref().map(|r| r.v.clone()))
    else {
        let images: Vec<&str> = app.builds.iter().map(|b| b.image.v.as_str()).collect();
        return Err(ImagesError::NoRegistry {
            images: images.join(", "),
            target: target.name.v.clone(),
        });
    };
    let repo = Repository::parse(&registry).map_err(ImagesError::Image)?;
    let name = if build.this_app {
        app.name.v.as_str()
    } else {
        build.bin_name()
    };
    Ok(Destination::Registry(
        repo.join(&name.to_ascii_lowercase())
            .map_err(ImagesError::Image)?,
    ))
}

fn describe(d: &Destination) -> String {
    match d {
        Destination::Registry(r) => r.to_string(),
        Destination::Oci(dir) => format!("oci:{}", dir.display()),
    }
}

/// Whether the destination still has the delivered image (someone may have emptied the registry).
async fn still_there(
    d: &Destination,
    reference: &str,
    auth: Option<&DockerConfig>,
    ca: Option<&[u8]>,
) -> Result<bool, ImagesError> {
    let Some(digest) = reference
        .rsplit_once('@')
        .and_then(|(_, d)| Digest::parse(d).ok())
    else {
        return Ok(false);
    };
    match d {
        Destination::Registry(repo) => {
            let client =
                RegistryClient::with_ca(repo.clone(), auth, ca).map_err(ImagesError::Image)?;
            client
                .has_manifest(&digest)
                .await
                .map_err(ImagesError::Image)
        }
        Destination::Oci(dir) => Ok(dir.join("blobs/sha256").join(digest.hex()).exists()),
    }
}
