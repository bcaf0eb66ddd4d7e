//! `render`: print the app's objects as YAML (or a JSON list). Never reads a kubeconfig or a cluster.

use crate::prelude::*;
use clap::Args;
use piceli_core::Code;
use piceli_core::model::App;
use piceli_runtime::render;
use std::io::Write;

#[path = "render_dir.rs"]
pub mod dir;

/// The arguments of `render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Write to this file instead of stdout; to a directory (one that exists, or a path ending in `/`):
    /// one `NN-kind-name.yaml` file per object in apply order and a `kustomization.yaml` listing them.
    #[arg(long, value_name = "PATH")]
    pub out: Option<std::path::PathBuf>,
    /// Print the Containerfile that builds this app's binary and runs `serve` (instead of the objects).
    #[arg(long)]
    pub containerfile: bool,
}

impl Command for RenderArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "none",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        let Invocation { app, global, .. } = invocation;
        let result = run(&app, &global, self);
        // The process ends right after: skip freeing the model piece by piece.
        std::mem::forget(app);
        result
    }
}

/// Run `render`.
pub fn run(app: &App, global: &Global, args: &RenderArgs) -> Result<(), Failure> {
    if let Some(namespace) = &global.namespace {
        piceli_runtime::engine::flags::namespace_flag(namespace)?;
    }
    let opts = render::Options {
        target: global.target.clone(),
        namespace: global.namespace.clone(),
    };
    // Images built from the workspace: the last delivered digest, or their placeholder with a note.
    let resolved;
    let app = if app.builds.is_empty() {
        app
    } else {
        let notes;
        (resolved, notes) = piceli_runtime::images::delivered(
            app.clone(),
            global.target.as_deref(),
            global.state_dir.as_deref(),
        );
        for note in notes {
            eprintln!("{note}");
        }
        &resolved
    };
    if let Some(out) = args
        .out
        .as_deref()
        .filter(|o| !args.containerfile && dir::is_dir(o))
    {
        let objects = render::render(app, &opts)?.objects;
        let files = dir::write(&objects, out)?;
        let summary = match global.output {
            Output::Json => serde_json::json!({ "out": out, "files": files, "kustomization": dir::KUSTOMIZATION })
                .to_string(),
            Output::Text | Output::Yaml => format!(
                "{} objects written to {} (and {})",
                files.len(),
                out.display(),
                dir::KUSTOMIZATION
            ),
        };
        println!("{summary}");
        return Ok(());
    }
    let text = if args.containerfile {
        // The binary's own file name is the Cargo `[[bin]]` name the Containerfile builds.
        let binary = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| app.name.v.clone());
        render::containerfile(app, &binary)
    } else {
        objects(app, global, &opts)?
    };
    let written = write(&text, args);
    // The process ends right after: freeing thousands of objects one by one would only cost time.
    std::mem::forget(text);
    written
}

fn objects(app: &App, global: &Global, opts: &render::Options) -> Result<String, Failure> {
    Ok(match global.output {
        Output::Json => render::to_json(&render::render(app, opts)?.objects)?,
        Output::Text | Output::Yaml => {
            // Each object is written as soon as it is rendered: memory stays at the size of the text.
            let mut sink = render::YamlSink::default();
            render::render_into(app, opts, &mut sink)?;
            sink.text
        }
    })
}

fn write(text: &str, args: &RenderArgs) -> Result<(), Failure> {
    let written = match &args.out {
        Some(path) => {
            std::fs::write(path, text.as_bytes()).map_err(|e| (path.display().to_string(), e))
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|e| ("stdout".to_string(), e))
        }
    };
    written.map_err(|(to, e)| {
        Failure::new(
            Code::OutputFailed,
            format!("cannot write to {to}: {e}"),
            "check the path and free space, or pipe stdout somewhere that reads it".into(),
        )
    })
}
