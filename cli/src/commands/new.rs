//! `piceli new NAME [--operator]`: a starter app crate (Cargo.toml with the fast dev profile and a dependency
//! on the published piceli, the quick start's app in src/main.rs — or with `--operator` a custom resource, a
//! controller and a validating webhook in src/main.rs and src/greeting.rs, and a thin-LTO release profile
//! for its image — and a README), written by piceli-import's crate writer.

use crate::exit::Failure;
use clap::Args;
use piceli_import::write::{self, PiceliDep};
use std::path::PathBuf;

/// `new`.
#[derive(Debug, Clone, Args)]
pub struct NewArgs {
    /// The crate's directory; its last part (made a DNS label) is the app's name.
    pub name: PathBuf,
    /// Depend on the piceli checkout at PATH (default: the published release line, `piceli = "0.1"`).
    #[arg(long, value_name = "PATH")]
    pub piceli_path: Option<PathBuf>,
    /// Write an operator: a `Greeting` custom resource, its controller and a validating webhook, served
    /// by the app's `serve`.
    #[arg(long)]
    pub operator: bool,
}

/// Run `new`.
pub fn run(args: &NewArgs) -> Result<(), Failure> {
    let base = args
        .name
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "app".into());
    let app = super::import::app_name(&base);
    let dep = PiceliDep::from_flag(args.piceli_path.as_deref());
    let (main, extra) = if args.operator {
        let (main, greeting) = write::operator_sources(&app);
        (main, Some(greeting))
    } else {
        (write::starter_source(&app), None)
    };
    // The operator half (controllers, webhooks, `serve`) is piceli's `operator` feature.
    let features: &[&str] = if args.operator { &["operator"] } else { &[] };
    let mut files = write::write_crate(&args.name, &app, &dep, features, &main, None, "")?;
    if let Some(greeting) = extra {
        let path = args.name.join("src/greeting.rs");
        write::write_file(&path, &greeting)?;
        files.push(path);
    }
    for f in files {
        eprintln!("wrote {}", f.display());
    }
    eprintln!("next: cd {} && cargo run -- render", args.name.display());
    Ok(())
}
