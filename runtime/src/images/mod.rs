//! Images built from the app's workspace (`image: build(…)`): source identity, cargo build, assembly and
//! delivery by digest, and the substitution of the delivered `registry/name@sha256:…` for the placeholder
//! (`build:shop-api`) in the app, so that the plan shows the digest and its hash covers it.
//!
//! An image whose inputs are unchanged since its last delivery (and that the destination still has) is
//! neither built nor pushed. Nothing is pushed before the plan is approved: [`prepare`] builds, and
//! [`Prepared::deliver`] pushes, called by `deploy` after approval.

mod cargo_build;
pub mod identity;
pub mod store;

use std::path::{Path, PathBuf};
use std::time::Instant;

use piceli_core::model::{App, ImageBuild, Target};
use piceli_core::{Code, Coded, ExitClass};
use piceli_image::{Digest, DockerConfig, Image, ImageError, RegistryClient, Repository};
use serde::Serialize;

use identity::SourceIdentity;
use store::{Delivered, ImageStore};

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
            ImagesError::Sources { .. } | ImagesError::Store { .. } => Code::ImageSourcesUnreadable,
        }
    }

    fn exit_class(&self) -> ExitClass {
        match self {
            ImagesError::Image(e) => e.exit_class(),
            ImagesError::NoRegistry { .. } => ExitClass::Rejected,
            ImagesError::Sources { .. } | ImagesError::Store { .. } => ExitClass::Failed,
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
    /// Built (or skipped: the inputs are those of the delivered image).
    Build {
        /// The image's placeholder (`build:shop-api`).
        image: String,
        /// The manifest digest (`sha256:<hex>`), built or the last delivered one's.
        digest: String,
        /// Whether the build was skipped (the inputs are those of the delivered image).
        skipped: bool,
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
}

/// Where images go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Destination {
    Registry(Repository),
    Oci(PathBuf),
}

/// One image, built or known unchanged.
#[derive(Debug, Clone)]
pub struct PreparedImage {
    /// `build:shop-api`.
    pub placeholder: String,
    /// `registry/name@sha256:…`: what the workload will run.
    pub reference: String,
    /// The manifest digest.
    pub digest: Digest,
    /// What it was built from.
    pub identity: SourceIdentity,
    /// Whether nothing changed since its last delivery (nothing to build or push).
    pub unchanged: bool,
    built: Option<Image>,
    destination: Destination,
    package_dir: PathBuf,
}

/// The images of one run.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// One entry per `build(…)` of the app, in the app's order.
    pub images: Vec<PreparedImage>,
    auth: Option<PathBuf>,
    state_dir: PathBuf,
}

/// Reads each build's inputs and builds those that changed (nothing is pushed yet).
pub async fn prepare(
    app: &App,
    target: &Target,
    opts: &BuildOptions,
    on_event: &mut (dyn FnMut(&ImageEvent) + Send),
) -> Result<Prepared, ImagesError> {
    let mut prepared = Prepared {
        images: Vec::new(),
        auth: opts.auth.clone(),
        state_dir: opts.state_dir.clone(),
    };
    if app.builds.is_empty() {
        return Ok(prepared);
    }
    let store = ImageStore::load(&opts.state_dir)?;
    let auth = prepared.docker_config()?;
    let workspace = if opts.workspace.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        opts.workspace.clone()
    };
    for build in &app.builds {
        let destination = destination(app, target, opts, build)?;
        let last = store.images.get(&build.image.v);
        let package_dir = match last.filter(|d| d.package_dir.join("Cargo.toml").exists()) {
            Some(d) => d.package_dir.clone(),
            None => cargo_build::package_dir(&workspace, &build.package.v)?,
        };
        let settings = format!(
            "{}|{}|{:?}",
            build.package.v,
            build.bin_name(),
            build.base.as_ref().map(|b| &b.v)
        );
        let identity = identity::identity(&workspace, &package_dir, &settings)?;
        let reusable = match last {
            Some(d)
                if d.identity.inputs == identity.inputs
                    && d.destination == describe(&destination) =>
            {
                still_there(&destination, &d.reference, auth.as_ref())
                    .await?
                    .then(|| d.reference.clone())
            }
            _ => None,
        };
        on_event(&ImageEvent::Inputs {
            image: build.image.v.clone(),
            inputs: identity.inputs.to_string(),
            commit: identity.commit.clone(),
            dirty: identity.dirty,
            unchanged: reusable.is_some(),
        });
        let started = Instant::now();
        let (reference, digest, built) = match reusable {
            Some(reference) => {
                let digest = reference
                    .rsplit_once('@')
                    .and_then(|(_, d)| Digest::parse(d).ok());
                let digest = digest.ok_or_else(|| ImagesError::Store {
                    path: opts.state_dir.join(store::FILE).display().to_string(),
                    detail: format!("`{reference}` has no digest"),
                })?;
                (reference, digest, None)
            }
            None => {
                let image =
                    cargo_build::build_image(build, &workspace, opts, &identity, auth.as_ref())
                        .await?;
                let reference = match &destination {
                    Destination::Registry(repo) => repo.at(&image.digest),
                    Destination::Oci(_) => format!("{}@{}", build.bin_name(), image.digest),
                };
                (reference, image.digest.clone(), Some(image))
            }
        };
        on_event(&ImageEvent::Build {
            image: build.image.v.clone(),
            digest: digest.to_string(),
            skipped: built.is_none(),
            ms: started.elapsed().as_millis() as u64,
        });
        let unchanged = built.is_none();
        prepared.images.push(PreparedImage {
            placeholder: build.image.v.clone(),
            reference,
            digest,
            identity,
            unchanged,
            built,
            destination,
            package_dir,
        });
    }
    Ok(prepared)
}

impl Prepared {
    /// The app with each built image's placeholder replaced by its reference.
    pub fn substitute(&self, mut app: App) -> App {
        // The references come from builds and the state directory, not from the macro: check them again.
        if !self.images.is_empty() {
            app.checked_at_compile_time = false;
        }
        let find = |image: &str| {
            self.images
                .iter()
                .find(|i| i.placeholder == image)
                .map(|i| i.reference.clone())
        };
        for w in &mut app.workloads {
            for c in w.containers.iter_mut().chain(w.init_containers.iter_mut()) {
                if let Some(r) = find(&c.image.v) {
                    c.image.v = r;
                }
            }
        }
        if let Some(op) = &mut app.operator
            && let Some(r) = find(&op.image.v)
        {
            op.image.v = r;
        }
        app
    }

    /// Whether every image is unchanged (nothing to push).
    pub fn unchanged(&self) -> bool {
        self.images.iter().all(|i| i.unchanged)
    }

    /// Pushes (or writes) each built image and records it in the state directory.
    pub async fn deliver(
        &self,
        on_event: &mut (dyn FnMut(&ImageEvent) + Send),
    ) -> Result<(), ImagesError> {
        if self.images.is_empty() {
            return Ok(());
        }
        let auth = self.docker_config()?;
        let mut store = ImageStore::load(&self.state_dir)?;
        for image in &self.images {
            let started = Instant::now();
            let (uploaded, present, bytes) = match (&image.built, &image.destination) {
                (None, _) => (0, 0, 0),
                (Some(built), Destination::Registry(repo)) => {
                    let client = RegistryClient::new(repo.clone(), auth.as_ref())
                        .map_err(ImagesError::Image)?;
                    let report = client.push(built, None).await.map_err(ImagesError::Image)?;
                    (report.uploaded.len(), report.skipped.len(), report.bytes)
                }
                (Some(built), Destination::Oci(dir)) => {
                    piceli_image::layout::write_layout(dir, built, &image.placeholder)
                        .map_err(ImagesError::Image)?;
                    (built.blobs.len() + 1, 0, 0)
                }
            };
            on_event(&ImageEvent::Deliver {
                image: image.placeholder.clone(),
                reference: image.reference.clone(),
                uploaded,
                present,
                bytes,
                skipped: image.built.is_none(),
                ms: started.elapsed().as_millis() as u64,
            });
            store.images.insert(
                image.placeholder.clone(),
                Delivered {
                    reference: image.reference.clone(),
                    destination: describe(&image.destination),
                    identity: image.identity.clone(),
                    package_dir: image.package_dir.clone(),
                },
            );
        }
        store.save(&self.state_dir)
    }

    fn docker_config(&self) -> Result<Option<DockerConfig>, ImagesError> {
        self.auth
            .as_deref()
            .map(DockerConfig::load)
            .transpose()
            .map_err(ImagesError::Image)
    }
}

/// For `render` (offline, never builds): the app with the last delivered reference of each built image
/// from the state directory, and a note for each image that has none (it renders as its placeholder).
pub fn for_render(app: App, state_dir: &Path) -> (App, Vec<String>) {
    if app.builds.is_empty() {
        return (app, Vec::new());
    }
    let store = ImageStore::load(state_dir).unwrap_or_default();
    let mut notes = Vec::new();
    let mut prepared = Prepared::default();
    for build in &app.builds {
        match store.images.get(&build.image.v) {
            Some(d) => prepared.images.push(PreparedImage {
                placeholder: build.image.v.clone(),
                reference: d.reference.clone(),
                digest: Digest::of(b""),
                identity: d.identity.clone(),
                unchanged: true,
                built: None,
                destination: Destination::Oci(PathBuf::new()),
                package_dir: d.package_dir.clone(),
            }),
            None => notes.push(format!(
                "note: `{}` is not built yet and renders as that placeholder; `deploy` builds and delivers it",
                build.image.v
            )),
        }
    }
    (prepared.substitute(app), notes)
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
        || PathBuf::from(".piceli").join(&app.name.v).join(target),
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
) -> Result<bool, ImagesError> {
    let Some(digest) = reference
        .rsplit_once('@')
        .and_then(|(_, d)| Digest::parse(d).ok())
    else {
        return Ok(false);
    };
    match d {
        Destination::Registry(repo) => {
            let client = RegistryClient::new(repo.clone(), auth).map_err(ImagesError::Image)?;
            client
                .has_manifest(&digest)
                .await
                .map_err(ImagesError::Image)
        }
        Destination::Oci(dir) => Ok(dir.join("blobs/sha256").join(digest.hex()).exists()),
    }
}
