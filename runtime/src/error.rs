//! The runtime's errors, each with its fixed code and a fix.

use piceli_core::{Code, Coded, Diagnostic};

/// What can go wrong at run time.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The app (with run-time values filled in) breaks a rule.
    #[error("{} problem(s) in the app:\n{}", .0.len(), .0.iter().map(|(d, at)| format!("  {}: {} (at {at})\n    help: {}", d.code, d.message, d.help)).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<(Diagnostic, String)>),
    /// An included file does not parse or holds something that is not an object.
    #[error("{message}")]
    Include {
        /// `PCL0035` or `PCL0036`.
        code: Code,
        /// `file:line:column: what`.
        message: String,
    },
    /// `--target` names no declared target.
    #[error("no target named `{name}`")]
    UnknownTarget {
        /// What was asked for.
        name: String,
        /// What the app declares.
        declared: Vec<String>,
    },
    /// An object could not be built or serialized.
    #[error("{0}")]
    Render(String),
    /// The model `app!` embedded cannot be read by this runtime (PCL0118).
    #[error("{0}")]
    EmbeddedModel(String),
    /// A controller or webhook declaration does not fit the app's types (PCL0175, PCL0178).
    #[error("{message}")]
    Controller {
        /// The code.
        code: Code,
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: String,
    },
}

impl Error {
    /// A controller or webhook (`who`: "controller lamp watches `lamp.example.com`") names a custom
    /// resource whose CRD the app's custom resource types do not define (`crds`: the names they do).
    pub(crate) fn unknown_crd(code: Code, who: String, crds: &[&str]) -> Error {
        Error::Controller {
            code,
            message: format!(
                "{who}, but the app's custom resource types define {}",
                if crds.is_empty() {
                    "no CRD".to_string()
                } else {
                    crds.join(", ")
                }
            ),
            help: format!(
                "write the CRD name the type defines (`{}`), or fix the type's `#[kube(group = …)]`",
                crds.first().copied().unwrap_or("plural.group")
            ),
        }
    }
}

impl Coded for Error {
    /// The first problem's code, for [`Error::Invalid`].
    fn code(&self) -> Code {
        match self {
            Error::Invalid(d) => d.first().map(|(d, _)| d.code).unwrap_or(Code::RenderFailed),
            Error::Include { code, .. } => *code,
            Error::UnknownTarget { .. } => Code::UnknownTargetFlag,
            Error::Render(_) => Code::RenderFailed,
            Error::EmbeddedModel(_) => Code::ModelFormat,
            Error::Controller { code, .. } => *code,
        }
    }

    fn help(&self) -> String {
        match self {
            Error::Invalid(_) => {
                "fix the values above (they come from Rust expressions or target overrides)".into()
            }
            Error::Include { .. } => {
                "fix the included file; every document needs apiVersion, kind and metadata.name"
                    .into()
            }
            Error::UnknownTarget { declared, .. } if declared.is_empty() => {
                "the app declares no targets; add `target local = local(namespace: \"NAME\");`"
                    .into()
            }
            Error::UnknownTarget { declared, .. } => {
                format!("pass one of: {}", declared.join(", "))
            }
            Error::Render(_) => "this is a bug in piceli; please report it with the app".into(),
            Error::EmbeddedModel(_) => {
                "build the app against one piceli release: `cargo update -p piceli` \
                 (or pin piceli-macros and piceli-runtime to the same version), then rebuild"
                    .into()
            }
            Error::Controller { help, .. } => help.clone(),
        }
    }
}
