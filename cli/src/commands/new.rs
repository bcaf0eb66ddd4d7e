//! `piceli new NAME`: a starter app crate (Cargo.toml with the fast dev profile, the quick start's app in
//! src/main.rs, a README with the two commands), written by piceli-import's crate writer.

use crate::exit::Failure;
use clap::Args;
use piceli_import::write::{self, PiceliDep};
use std::path::PathBuf;

/// `new`.
#[derive(Debug, Clone, Args)]
pub struct NewArgs {
    /// The crate's directory; its last part (made a DNS label) is the app's name.
    pub name: PathBuf,
    /// Depend on the piceli checkout at PATH (default: the one this binary was built from, when present,
    /// else the published version).
    #[arg(long, value_name = "PATH")]
    pub piceli_path: Option<PathBuf>,
}

/// Run `new`.
pub fn run(args: &NewArgs) -> Result<(), Failure> {
    let base = args
        .name
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "app".into());
    let app = super::import::app_name(&base);
    let dep = match &args.piceli_path {
        Some(p) => PiceliDep::Path(p.canonicalize().unwrap_or_else(|_| p.clone())),
        None => PiceliDep::default_for_this_build(),
    };
    let files = write::write_crate(
        &args.name,
        &app,
        &dep,
        &write::starter_source(&app),
        None,
        "",
    )?;
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    eprintln!("next: cd {} && cargo run -- render", args.name.display());
    Ok(())
}
