//! `render`: print the app's objects as YAML (or a JSON list). Never reads a kubeconfig or a cluster.

use crate::args::{Global, Output, RenderArgs};
use crate::exit::{Failure, REJECTED};
use piceli_core::Code;
use piceli_core::model::App;
use piceli_runtime::render;
use std::io::Write;

/// Run `render`.
pub fn run(app: &App, global: &Global, args: &RenderArgs) -> Result<(), Failure> {
    let opts = render::Options {
        target: global.target.clone(),
        namespace: global.namespace.clone(),
    };
    let rendered = render::render(app, &opts)?;
    let text = match global.output {
        Output::Json => render::to_json(&rendered.objects)?,
        Output::Text | Output::Yaml => render::to_yaml(&rendered.objects)?,
    };
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
    written.map_err(|(to, e)| Failure {
        code: Code::OutputFailed,
        message: format!("cannot write to {to}: {e}"),
        help: "check the path and free space, or pipe stdout somewhere that reads it".into(),
        exit: REJECTED,
    })
}
