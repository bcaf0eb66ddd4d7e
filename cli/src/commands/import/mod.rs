//! `piceli import yaml PATH…` and `piceli import live`: turn manifests or a running namespace into an
//! `app!` module (the work is in piceli-import; this file parses flags, reads, writes and reports).

pub mod live;
pub mod pin;

use crate::prelude::*;
use clap::{Args, Subcommand};
use piceli_import::write::{self, PiceliDep};
use piceli_import::{Imported, Options};
use std::path::{Path, PathBuf};

/// Where the objects come from.
#[derive(Debug, Clone, Subcommand)]
pub enum ImportSource {
    /// Files, directories (recursively: `.yaml`, `.yml`, `.json`) and `-` (standard input).
    Yaml(YamlArgs),
    /// What runs in a namespace (skipping what the cluster makes itself).
    Live(LiveArgs),
}

/// `import yaml`.
#[derive(Debug, Clone, Args)]
pub struct YamlArgs {
    /// Manifests to read: files, directories, or `-` for standard input.
    #[arg(required = true)]
    pub paths: Vec<String>,
    /// Where and how the app is written.
    #[command(flatten)]
    pub out: OutArgs,
}

/// `import live`.
#[derive(Debug, Clone, Args)]
pub struct LiveArgs {
    /// The kubeconfig file (never `~/.kube/config` or `KUBECONFIG` implicitly).
    #[arg(long)]
    pub kubeconfig: PathBuf,
    /// The context of the kubeconfig to use.
    #[arg(long)]
    pub context: String,
    /// Where and how the app is written.
    #[command(flatten)]
    pub out: OutArgs,
}

/// What to write.
#[derive(Debug, Clone, Args)]
pub struct OutArgs {
    /// Write the module to FILE (default: standard output); `.env.example` and included objects go to
    /// the crate around it.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Write a whole crate (Cargo.toml, src/main.rs, README.md, …) to DIR.
    #[arg(long = "crate", value_name = "DIR", conflicts_with = "out")]
    pub crate_dir: Option<PathBuf>,
    /// The app's name (default: the crate directory's name, else the manifests' `app.kubernetes.io/part-of` or shared `…/name` label, else the namespace).
    #[arg(long)]
    pub app: Option<String>,
    /// The target namespace (default: the one most objects name, else `default`).
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// How Secrets are written: `env` (`from_env("…")`, the variables in `.env.example`) or `external`
    /// (`external secret NAME;`: made outside the app). Either way no value reaches the source; Secrets
    /// cert-manager or an owner object makes are `external` in both modes.
    #[arg(long, value_enum, default_value_t = SecretsFlag::Env)]
    pub secrets: SecretsFlag,
    /// Pin each image that is not pinned by digest, with the digest its registry names for the tag now
    /// (unreachable, refused or unknown: it stays `unpinned("…")`, with a PCL0189 warning).
    #[arg(long)]
    pub pin: bool,
    /// With `--pin`: a docker config file with the registries' credentials (its `auths`); never
    /// ~/.docker/config.json.
    #[arg(long, value_name = "FILE", requires = "pin")]
    pub registry_auth: Option<PathBuf>,
    /// CustomResourceDefinition files (or directories of them): custom resources of their kinds become
    /// `resource` items, checked by `app!` against the CRDs (copied into the crate's `crds/` when a crate
    /// is written); without it they are included as they are.
    #[arg(long, value_name = "PATH")]
    pub crds: Vec<PathBuf>,
    /// With `--crate`: depend on the piceli checkout at PATH (default: the published release line,
    /// `piceli = "0.1"`).
    #[arg(long, value_name = "PATH")]
    pub piceli_path: Option<PathBuf>,
}

/// `--secrets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SecretsFlag {
    /// `from_env("…")` with `.env.example`.
    Env,
    /// `external secret NAME;`.
    External,
}

impl From<SecretsFlag> for piceli_import::SecretMode {
    fn from(f: SecretsFlag) -> Self {
        match f {
            SecretsFlag::Env => piceli_import::SecretMode::Env,
            SecretsFlag::External => piceli_import::SecretMode::External,
        }
    }
}

/// Where included objects go, relative to the crate.
const INCLUDE_PATH: &str = "k8s/imported.json";

/// Where the CRD files of `resource` items are copied, relative to the crate.
const CRDS_PATH: &str = "crds/";

/// Run `import`.
pub fn run(output: Output, source: &ImportSource) -> Result<(), Failure> {
    let (sources, out, target, served) = match source {
        ImportSource::Yaml(a) => {
            let sources = piceli_import::read::read_inputs(&a.paths, &mut std::io::stdin().lock())?;
            (sources, &a.out, None, Default::default())
        }
        ImportSource::Live(a) => {
            let ns = a.out.namespace.clone().unwrap_or_else(|| "default".into());
            // Without `--crds`, the cluster's own CRDs of the kinds found, when a crate gets their files.
            let writes_crate = a.out.crate_dir.is_some() || a.out.out.is_some();
            let (sources, served) = live::read(
                &a.kubeconfig,
                &a.context,
                &ns,
                a.out.crds.is_empty() && writes_crate,
            )?;
            let target = (
                "live".to_string(),
                format!(
                    "kubeconfig({:?}, context: {:?}, namespace: {ns:?})",
                    a.kubeconfig.display().to_string(),
                    a.context
                ),
            );
            (sources, &a.out, Some(target), served)
        }
    };
    let app = out.app.clone().or_else(|| {
        out.crate_dir
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| app_name(&n.to_string_lossy()))
    });
    let mut sources = sources;
    let pins = if out.pin {
        let images = piceli_import::pin::unpinned_images(&sources);
        let pins = pin::resolve(&images, out.registry_auth.as_deref())?;
        piceli_import::pin::apply(&mut sources, &pins.pinned);
        pins
    } else {
        pin::Pins::default()
    };
    let (served, unusable) = served;
    let mut crds = piceli_import::crds::read(&out.crds)?;
    crds.extend(served);
    // A crate gets copies of the CRD files it uses in `crds/`; a module printed alone names them as given.
    let crds_path = (out.crate_dir.is_some() || out.out.is_some()).then(|| CRDS_PATH.to_string());
    let options = Options {
        app,
        crds,
        crds_path,
        namespace: out.namespace.clone(),
        target,
        include_path: INCLUDE_PATH.into(),
        secrets: out.secrets.into(),
        pin_failures: pins.failed,
    };
    let mut imported = piceli_import::import(sources, &options);
    imported.warnings.extend(pins.warnings);
    imported.skipped.extend(unusable);
    let mut files = write_output(out, &imported, options.app.as_deref())?;
    files.extend(copy_crds(out, &imported, &options)?);
    report(output, &imported, &files);
    Ok(())
}

/// `My App` → `my-app`: a DNS label for `app NAME;`.
pub fn app_name(s: &str) -> String {
    let mut n: String = s
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    n = n.trim_matches('-').to_string();
    if n.is_empty() || n.starts_with(|c: char| c.is_ascii_digit()) {
        n.insert_str(0, "app-");
    }
    n
}

fn write_output(out: &OutArgs, i: &Imported, app: Option<&str>) -> Result<Vec<PathBuf>, Failure> {
    if let Some(dir) = &out.crate_dir {
        let dep = PiceliDep::from_flag(out.piceli_path.as_deref());
        let name = app.unwrap_or(&i.app);
        return write::write_crate(dir, name, &dep, &[], &i.source, Some(i), INCLUDE_PATH)
            .map_err(Failure::from);
    }
    let Some(file) = &out.out else {
        print!("{}", i.source);
        return Ok(Vec::new());
    };
    write::write_file(file, &i.source)?;
    let mut files = vec![file.clone()];
    for (path, text) in write::extra_files(&crate_root(file), i, INCLUDE_PATH) {
        write::write_file(&path, &text)?;
        files.push(path);
    }
    Ok(files)
}

/// Copy the `--crds` files the module's `resource` items need into the crate's `crds/` (nothing when the
/// module goes to standard output: it names the files as given).
fn copy_crds(out: &OutArgs, i: &Imported, options: &Options) -> Result<Vec<PathBuf>, Failure> {
    let root = match (&out.crate_dir, &out.out) {
        (Some(dir), _) => dir.clone(),
        (None, Some(file)) => crate_root(file),
        (None, None) => return Ok(Vec::new()),
    };
    let mut written = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for &f in &i.crd_files {
        let file = &options.crds[f];
        let base = file
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("crd-{f}.yaml"));
        // Two directories may hold files of one name: the later one gets its index in front.
        let name = if names.insert(base.clone()) {
            base
        } else {
            format!("{f}-{base}")
        };
        let path = root.join(CRDS_PATH).join(name);
        write::write_file(&path, &file.text)?;
        written.push(path);
    }
    Ok(written)
}

/// The crate around `file`: the nearest directory with a Cargo.toml, else the parent of `src/`, else
/// the file's own directory.
fn crate_root(file: &Path) -> PathBuf {
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut d = Some(dir.as_path());
    while let Some(p) = d {
        if p.join("Cargo.toml").is_file() {
            return p.to_path_buf();
        }
        d = p.parent();
    }
    if dir.file_name().is_some_and(|n| n == "src") {
        return dir.parent().map(Path::to_path_buf).unwrap_or_default();
    }
    dir
}

fn report(output: Output, i: &Imported, files: &[PathBuf]) {
    if output == Output::Json {
        let body = serde_json::json!({
            "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            "warnings": i.warnings,
            "skipped": i.skipped,
            "included": i.includes.is_some(),
        });
        if files.is_empty() {
            eprintln!("{body}");
        } else {
            println!("{body}");
        }
        return;
    }
    for w in &i.warnings {
        eprintln!("warning[{}]: {}: {}", w.code, w.object, w.message);
    }
    for s in &i.skipped {
        eprintln!("skipped {s}");
    }
    for f in files {
        eprintln!("wrote {}", f.display());
    }
}
