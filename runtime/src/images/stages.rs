//! The three image stages of `deploy`: `inputs` (each build's source identity, and whether it is the last
//! delivered image unchanged), `build` (what changed, into the build cache), and `deliver` (after approval:
//! push, or write the OCI layout, each image checked against the references the approved plan runs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use piceli_core::Spanned;
use piceli_core::model::{App, ImageBuild, Target};
use piceli_image::{Digest, Image, RegistryClient};

use super::identity::{self, SourceIdentity};
use super::store::{Delivered, ImageStore};
use super::{
    BuildOptions, Destination, ImageEvent, ImagesError, cache_dir, cargo_build, describe,
    destination, docker_config, read_ca, still_there,
};
use crate::journal::{DeployImage, Journal};

/// The annotation on a workload running a built image: the workspace's git commit (`none` outside git).
/// On the workload, not its pod template: a new commit with the same image restarts no pod.
pub const SOURCE_REVISION: &str = "piceli.dev/source-revision";

/// The annotation saying whether the image was built from a dirty tree (`true`: files of the package,
/// its path dependencies or Cargo.lock differ from the commit; allowed).
pub const SOURCE_DIRTY: &str = "piceli.dev/source-dirty";

/// One image whose inputs were read (the `inputs` stage).
#[derive(Debug, Clone)]
pub struct ImageInputs {
    /// `build:shop-api`.
    pub placeholder: String,
    /// What it is built from.
    pub identity: SourceIdentity,
    /// The last delivered reference, when the inputs and destination are those of the last delivery and
    /// the destination still has it (nothing to build or push).
    pub unchanged: Option<String>,
    build: ImageBuild,
    destination: Destination,
    package_dir: PathBuf,
    dep_dirs: Vec<PathBuf>,
}

/// One image, built, cached or known unchanged.
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
    /// Whether the destination already holds this digest though this state directory did not deliver it
    /// (another state directory, or another machine, pushed the same build): nothing to push.
    pub at_destination: bool,
    /// Whether it was built now (not unchanged, not from the build cache).
    pub built_now: bool,
    built: Option<Image>,
    destination: Destination,
    package_dir: PathBuf,
    dep_dirs: Vec<PathBuf>,
}

impl PreparedImage {
    /// Whether delivering it pushes nothing: unchanged since its last delivery, or already at its
    /// destination.
    pub fn nothing_to_push(&self) -> bool {
        self.unchanged || self.at_destination
    }
}

/// The images of one run.
#[derive(Debug, Clone, Default)]
pub struct Prepared {
    /// One entry per `build(…)` of the app, in the app's order.
    pub images: Vec<PreparedImage>,
    auth: Option<PathBuf>,
    ca: Option<PathBuf>,
    state_dir: PathBuf,
}

/// The `inputs` stage: each build's source identity and whether it is unchanged since its last delivery.
pub async fn read_inputs(
    app: &App,
    target: &Target,
    opts: &BuildOptions,
    on_event: &mut dyn FnMut(&ImageEvent),
) -> Result<Vec<ImageInputs>, ImagesError> {
    if app.builds.is_empty() {
        return Ok(Vec::new());
    }
    let store = ImageStore::load(&opts.state_dir)?;
    let auth = docker_config(opts.auth.as_deref())?;
    let ca = read_ca(opts.ca.as_deref())?;
    let workspace = workspace(opts);
    let facts = identity::Workspace::read(&workspace)?;
    let mut out = Vec::new();
    for build in &app.builds {
        let destination = destination(app, target, opts, build)?;
        let last = store.images.get(&build.image.v);
        // The directory found last time spares a `cargo metadata`, when it still is a package.
        let known = |d: &&Delivered| {
            d.package_dir.is_absolute() && d.package_dir.join("Cargo.toml").exists()
        };
        let (package_dir, dep_dirs) = match last.filter(known) {
            Some(d) => (d.package_dir.clone(), d.dep_dirs.clone()),
            None => cargo_build::package_dirs(&workspace, &build.package.v)?,
        };
        let settings = format!(
            "{}|{}|{:?}",
            build.package.v,
            build.bin_name(),
            build.base.as_ref().map(|b| &b.v)
        );
        let identity = identity::identity(&facts, &package_dir, &dep_dirs, &settings)?;
        let unchanged = match last {
            Some(d)
                if d.identity.inputs == identity.inputs
                    && d.destination == describe(&destination) =>
            {
                still_there(&destination, &d.reference, auth.as_ref(), ca.as_deref())
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
            unchanged: unchanged.is_some(),
        });
        out.push(ImageInputs {
            placeholder: build.image.v.clone(),
            identity,
            unchanged,
            build: build.clone(),
            destination,
            package_dir,
            dep_dirs,
        });
    }
    Ok(out)
}

/// The `build` stage: each image not unchanged is taken from the build cache when it holds these inputs,
/// or built by cargo, assembled, and put in the cache (nothing is pushed).
pub async fn build(
    inputs: Vec<ImageInputs>,
    opts: &BuildOptions,
    journal: &Journal,
    on_event: &mut dyn FnMut(&ImageEvent),
) -> Result<Prepared, ImagesError> {
    let mut prepared = Prepared {
        images: Vec::new(),
        auth: opts.auth.clone(),
        ca: opts.ca.clone(),
        state_dir: opts.state_dir.clone(),
    };
    let auth = docker_config(opts.auth.as_deref())?;
    let ca = read_ca(opts.ca.as_deref())?;
    let workspace = workspace(opts);
    let cache = cache_dir(&opts.state_dir);
    for input in inputs {
        let started = Instant::now();
        let inputs_digest = input.identity.inputs.to_string();
        let cached = match &input.unchanged {
            Some(_) => None,
            None => journal
                .built(&input.placeholder, &inputs_digest)
                .map_err(|e| store_error(&opts.state_dir, e))?
                .and_then(|d| Digest::parse(&d).ok())
                .and_then(|d| piceli_image::layout::read_image(&cache, &d).ok()),
        };
        let from_cache = cached.is_some();
        let (reference, digest, built) = match (&input.unchanged, cached) {
            (Some(reference), _) => (reference.clone(), digest_of(reference, opts)?, None),
            (None, Some(image)) => (
                reference_for(&input, &image.digest),
                image.digest.clone(),
                Some(image),
            ),
            (None, None) => {
                let image = cargo_build::build_image(
                    &input.build,
                    &workspace,
                    opts,
                    &input.identity,
                    auth.as_ref(),
                )
                .await?;
                piceli_image::layout::write_layout(&cache, &image, &input.placeholder)
                    .map_err(ImagesError::Image)?;
                journal
                    .record_build(&input.placeholder, &inputs_digest, image.digest.as_str())
                    .map_err(|e| store_error(&opts.state_dir, e))?;
                (
                    reference_for(&input, &image.digest),
                    image.digest.clone(),
                    Some(image),
                )
            }
        };
        // A reproducible build another state directory already pushed: asked of the destination (a HEAD
        // of the manifest by digest), so the plan does not ask approval to push what is there.
        let at_destination = input.unchanged.is_none()
            && still_there(&input.destination, &reference, auth.as_ref(), ca.as_deref()).await?;
        on_event(&ImageEvent::Build {
            image: input.placeholder.clone(),
            digest: digest.to_string(),
            skipped: input.unchanged.is_some() || from_cache,
            cached: from_cache,
            ms: started.elapsed().as_millis() as u64,
        });
        prepared.images.push(PreparedImage {
            placeholder: input.placeholder,
            reference,
            digest,
            identity: input.identity,
            unchanged: input.unchanged.is_some(),
            at_destination,
            built_now: input.unchanged.is_none() && !from_cache,
            built,
            destination: input.destination,
            package_dir: input.package_dir,
            dep_dirs: input.dep_dirs,
        });
    }
    Ok(prepared)
}

impl Prepared {
    /// The app with each built image's placeholder replaced by its reference, and the source identity
    /// on each workload that runs one (see [`SOURCE_REVISION`]).
    pub fn substitute(&self, app: App) -> App {
        let images: Vec<(String, String, SourceIdentity)> = self
            .images
            .iter()
            .map(|i| {
                (
                    i.placeholder.clone(),
                    i.reference.clone(),
                    i.identity.clone(),
                )
            })
            .collect();
        substitute(app, &images)
    }

    /// How many images were built now.
    pub fn built_now(&self) -> usize {
        self.images.iter().filter(|i| i.built_now).count()
    }

    /// Whether every image is unchanged (nothing to push).
    pub fn unchanged(&self) -> bool {
        self.images.iter().all(PreparedImage::nothing_to_push)
    }

    /// How many images must be pushed (their destination lacks them).
    pub fn pushes(&self) -> usize {
        self.images.iter().filter(|i| !i.nothing_to_push()).count()
    }

    /// What the journal keeps of each image for the run (read back by [`Prepared::from_records`]).
    pub fn records(&self) -> Vec<DeployImage> {
        self.images
            .iter()
            .map(|i| DeployImage {
                image: i.placeholder.clone(),
                reference: i.reference.clone(),
                destination: describe(&i.destination),
                inputs: i.identity.inputs.to_string(),
                commit: i.identity.commit.clone(),
                dirty: i.identity.dirty,
                toolchain: i.identity.toolchain.clone(),
                // The journal's `unchanged` is "nothing to push": a resumed run pushes neither.
                unchanged: i.nothing_to_push(),
            })
            .collect()
    }

    /// A resumed run's images, from its journal records; the content is read from the build cache when
    /// delivered (and checked against each reference's digest then).
    pub fn from_records(
        records: &[DeployImage],
        opts: &BuildOptions,
    ) -> Result<Prepared, ImagesError> {
        let store = ImageStore::load(&opts.state_dir)?;
        let mut images = Vec::new();
        for r in records {
            let bad = |detail: String| ImagesError::NotApproved {
                image: r.image.clone(),
                detail,
            };
            let digest = r
                .reference
                .rsplit_once('@')
                .and_then(|(_, d)| Digest::parse(d).ok())
                .ok_or_else(|| {
                    bad(format!(
                        "the journal's reference `{}` has no digest",
                        r.reference
                    ))
                })?;
            let inputs = Digest::parse(&r.inputs)
                .map_err(|_| bad(format!("the journal's inputs `{}` are no digest", r.inputs)))?;
            images.push(PreparedImage {
                placeholder: r.image.clone(),
                reference: r.reference.clone(),
                digest,
                identity: SourceIdentity {
                    commit: r.commit.clone(),
                    dirty: r.dirty,
                    inputs,
                    toolchain: r.toolchain.clone(),
                },
                unchanged: r.unchanged,
                at_destination: false,
                built_now: false,
                built: None,
                destination: Destination::parse(&r.destination)?,
                package_dir: store
                    .images
                    .get(&r.image)
                    .map(|d| d.package_dir.clone())
                    .unwrap_or_default(),
                dep_dirs: store
                    .images
                    .get(&r.image)
                    .map(|d| d.dep_dirs.clone())
                    .unwrap_or_default(),
            });
        }
        Ok(Prepared {
            images,
            auth: opts.auth.clone(),
            ca: opts.ca.clone(),
            state_dir: opts.state_dir.clone(),
        })
    }

    /// Delivers image `idx` (the `deliver` stage, one image): refused unless `approved` (the image
    /// references of the approved plan) holds its reference and its content hashes to that digest; then
    /// pushed (or written to the OCI layout) unless unchanged, and recorded in `images.json`.
    pub async fn deliver_image(
        &self,
        idx: usize,
        approved: &BTreeSet<String>,
        on_event: &mut dyn FnMut(&ImageEvent),
    ) -> Result<(), ImagesError> {
        let Some(image) = self.images.get(idx) else {
            return Ok(());
        };
        let refuse = |detail: String| ImagesError::NotApproved {
            image: image.placeholder.clone(),
            detail,
        };
        if !approved.contains(&image.reference) {
            return Err(refuse(format!(
                "`{}` is not an image the approved plan runs",
                image.reference
            )));
        }
        let started = Instant::now();
        let content = match (&image.built, image.nothing_to_push()) {
            (_, true) => None,
            (Some(built), false) => Some(built.clone()),
            (None, false) => Some(
                piceli_image::layout::read_image(&cache_dir(&self.state_dir), &image.digest)
                    .map_err(|e| refuse(format!("the build cache cannot give it: {e}")))?,
            ),
        };
        if let Some(built) = &content
            && Digest::of(&built.manifest_bytes) != image.digest
        {
            return Err(refuse(format!(
                "the built manifest is not {} (the approved digest)",
                image.digest
            )));
        }
        let auth = docker_config(self.auth.as_deref())?;
        let ca = read_ca(self.ca.as_deref())?;
        let (uploaded, present, bytes) = match (&content, &image.destination) {
            (None, _) => (0, 0, 0),
            (Some(built), Destination::Registry(repo)) => {
                let client = RegistryClient::with_ca(repo.clone(), auth.as_ref(), ca.as_deref())
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
            skipped: content.is_none(),
            ms: started.elapsed().as_millis() as u64,
        });
        let mut store = ImageStore::load(&self.state_dir)?;
        store.images.insert(
            image.placeholder.clone(),
            Delivered {
                reference: image.reference.clone(),
                destination: describe(&image.destination),
                identity: image.identity.clone(),
                package_dir: image.package_dir.clone(),
                dep_dirs: image.dep_dirs.clone(),
            },
        );
        store.save(&self.state_dir)
    }
}

/// The app with each `(placeholder, reference, identity)` substituted in its containers and operator,
/// and the identity's commit and dirtiness annotated on each workload that runs one.
pub(super) fn substitute(mut app: App, images: &[(String, String, SourceIdentity)]) -> App {
    // The references come from builds and the state directory, not from the macro: check them again.
    if !images.is_empty() {
        app.checked_at_compile_time = false;
    }
    let find = |image: &str| images.iter().find(|(p, _, _)| p == image);
    for w in &mut app.workloads {
        let mut identity = None;
        for c in w.containers.iter_mut().chain(w.init_containers.iter_mut()) {
            if let Some((_, reference, id)) = find(&c.image.v) {
                c.image.v = reference.clone();
                identity = identity.or(Some(id));
            }
        }
        if let Some(id) = identity {
            annotate_source(&mut w.annotations, id);
        }
    }
    if let Some(op) = &mut app.operator
        && let Some((_, reference, id)) = find(&op.image.v)
    {
        op.image.v = reference.clone();
        annotate_source(&mut op.annotations, id);
    }
    app
}

/// The commit and dirtiness of the sources an image was built from, as the annotations of the workload
/// (or the operator's Deployment) that runs it.
fn annotate_source(annotations: &mut piceli_core::model::Labels, id: &SourceIdentity) {
    let revision = id.commit.as_deref().unwrap_or("none");
    let dirty = if id.dirty { "true" } else { "false" };
    for (key, value) in [(SOURCE_REVISION, revision), (SOURCE_DIRTY, dirty)] {
        annotations.retain(|(k, _)| k.v != key);
        annotations.push((
            Spanned::bare(key.to_string()),
            Spanned::bare(value.to_string()),
        ));
    }
}

fn workspace(opts: &BuildOptions) -> PathBuf {
    if opts.workspace.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        opts.workspace.clone()
    }
}

fn reference_for(input: &ImageInputs, digest: &Digest) -> String {
    match &input.destination {
        Destination::Registry(repo) => repo.at(digest),
        Destination::Oci(_) => format!("{}@{}", input.build.bin_name(), digest),
    }
}

fn digest_of(reference: &str, opts: &BuildOptions) -> Result<Digest, ImagesError> {
    reference
        .rsplit_once('@')
        .and_then(|(_, d)| Digest::parse(d).ok())
        .ok_or_else(|| ImagesError::Store {
            path: opts
                .state_dir
                .join(super::store::FILE)
                .display()
                .to_string(),
            detail: format!("`{reference}` has no digest"),
        })
}

fn store_error(state_dir: &Path, e: crate::journal::JournalError) -> ImagesError {
    ImagesError::Store {
        path: state_dir
            .join(crate::journal::DB_FILE)
            .display()
            .to_string(),
        detail: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::model::{Container, Operator, Workload};

    #[test]
    fn a_built_image_annotates_its_workload_and_the_operator_with_its_source() {
        let placeholder = "build:shop";
        let app = App {
            workloads: vec![Workload {
                name: Spanned::bare("api".into()),
                containers: vec![Container {
                    image: Spanned::bare(placeholder.into()),
                    ..Container::default()
                }],
                ..Workload::default()
            }],
            operator: Some(Operator {
                name: Spanned::bare("shop".into()),
                image: Spanned::bare(placeholder.into()),
                ..Operator::default()
            }),
            ..App::default()
        };
        let id = SourceIdentity {
            commit: Some("0123abcd".into()),
            dirty: true,
            inputs: Digest::of(b"inputs"),
            toolchain: "rustc 1.95.0".into(),
        };
        let reference = "127.0.0.1:5000/shop@sha256:00".to_string();
        let app = substitute(app, &[(placeholder.into(), reference.clone(), id)]);
        let op = app.operator.expect("operator");
        assert_eq!(op.image.v, reference);
        for annotations in [&app.workloads[0].annotations, &op.annotations] {
            let get = |key: &str| {
                annotations
                    .iter()
                    .find(|(k, _)| k.v == key)
                    .map(|(_, v)| v.v.as_str())
            };
            assert_eq!(get(SOURCE_REVISION), Some("0123abcd"));
            assert_eq!(get(SOURCE_DIRTY), Some("true"));
        }
    }
}
