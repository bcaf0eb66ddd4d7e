//! The importer's errors (each with a fixed code and a fix) and its warnings about what could not be
//! imported as written.

use piceli_core::{Code, Coded};

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A path cannot be read.
    #[error("cannot read {path}: {message}")]
    Unreadable {
        /// The path as given (`-` for stdin).
        path: String,
        /// The operating system's words.
        message: String,
    },
    /// A document does not parse or is not an object.
    #[error("{origin}: {message}")]
    Malformed {
        /// `file:line:column`.
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// Writing the output failed.
    #[error("cannot write {path}: {message}")]
    Output {
        /// What was being written.
        path: String,
        /// Why it failed.
        message: String,
    },
    /// Reading a live namespace failed.
    #[error("cannot read the namespace: {0}")]
    Live(String),
}

impl Coded for ImportError {
    fn code(&self) -> Code {
        match self {
            ImportError::Unreadable { .. } => Code::ImportUnreadable,
            ImportError::Malformed { .. } => Code::ImportMalformed,
            ImportError::Output { .. } => Code::ImportOutputFailed,
            ImportError::Live(_) => Code::ImportLiveFailed,
        }
    }

    fn help(&self) -> String {
        let help = match self {
            ImportError::Unreadable { .. } => {
                "check the path; directories are read recursively, `-` reads standard input"
            }
            ImportError::Malformed { .. } => {
                "fix the document: each must be a Kubernetes object with apiVersion, kind and metadata.name"
            }
            ImportError::Output { .. } => {
                "choose a writable path; an existing crate (a Cargo.toml) is never overwritten"
            }
            ImportError::Live(_) => {
                "check --kubeconfig, --context and that the cluster answers (`kubectl --kubeconfig F get ns`)"
            }
        };
        help.into()
    }
}

/// Something the importer changed or left out, with its code; also printed as a `// piceli:` comment.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Warning {
    /// `PCL0182` …
    pub code: String,
    /// `Deployment web`, the object it is about.
    pub object: String,
    /// What happened.
    pub message: String,
}

impl Warning {
    /// A warning about one object.
    pub fn new(code: Code, object: impl Into<String>, message: impl Into<String>) -> Warning {
        Warning {
            code: code.as_str().to_string(),
            object: object.into(),
            message: message.into(),
        }
    }

    /// `PCL0183: ConfigMap x: …`, as printed on stderr and in comments.
    pub fn line(&self) -> String {
        format!("{}: {}: {}", self.code, self.object, self.message)
    }
}
