//! `piceli import`: turns Kubernetes manifests (files, directories, stdin) or a running namespace into a
//! checked `piceli::app!` module, losing no field: reading ([`read`]) → cleaning ([`clean`]) and converting
//! removed API versions ([`convert`]) → lowering
//! ([`lower`]) → printing ([`print`]); [`write`] lays out a crate around it, as `piceli new` does.

pub mod clean;
pub mod convert;
pub mod crds;
pub mod dsl;
pub mod error;
pub mod lower;
pub mod pin;
pub mod print;
pub mod read;
pub mod write;

pub use error::{ImportError, Warning};
pub use lower::{Lowered, Options, SecretMode};

/// What one import produced.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The app's name (`--app`, else what the manifests call it, else the namespace).
    pub app: String,
    /// The `src/main.rs` text.
    pub source: String,
    /// `.env.example`: the variables the Secrets read, or empty when there are none.
    pub env_example: String,
    /// The included objects as a JSON `List`, when some kinds have no first-class item.
    pub includes: Option<String>,
    /// What was changed or left out.
    pub warnings: Vec<Warning>,
    /// Cluster-made objects skipped.
    pub skipped: Vec<String>,
    /// The `--crds` files (indices into [`Options::crds`]) whose kinds became `resource` items: a crate
    /// written with them gets copies in `crds/`.
    pub crd_files: Vec<usize>,
}

/// Lower and print objects already read.
pub fn import(sources: Vec<read::Source>, options: &Options) -> Imported {
    let mut lowered = lower::lower(sources, options);
    lowered.module.header = vec![
        format!(
            "The `{}` app, imported by `piceli import`.",
            lowered.module.app
        ),
        String::new(),
        "`cargo run -- render` prints its objects; `// piceli:` comments mark what was changed."
            .into(),
    ];
    let source = print::module(&lowered.module);
    let env_example = lowered
        .env
        .iter()
        .map(|(var, what)| format!("# {what}\n{var}=\n"))
        .collect::<String>();
    let includes = (!lowered.includes.is_empty()).then(|| {
        let list =
            serde_json::json!({"apiVersion": "v1", "kind": "List", "items": lowered.includes});
        let mut s = serde_json::to_string_pretty(&list).unwrap_or_default();
        s.push('\n');
        s
    });
    Imported {
        app: lowered.module.app.clone(),
        source,
        env_example,
        includes,
        warnings: lowered.warnings,
        skipped: lowered.skipped,
        crd_files: lowered.crd_files,
    }
}
