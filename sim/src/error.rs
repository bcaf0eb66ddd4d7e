//! Errors from starting and running the simulator (as opposed to API errors, see `status`).

use piceli_core::{Code, Coded, ExitClass};
use std::path::{Path, PathBuf};

/// Why the simulator could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot listen on 127.0.0.1:{port}: {source} (is another process using the port?)")]
    Bind { port: u16, source: std::io::Error },
    #[error("certificate generation failed: {0}")]
    Cert(#[from] rcgen::Error),
    #[error("TLS configuration failed: {0}")]
    Tls(rustls::Error),
    #[error("PEM parsing failed: {0}")]
    Pem(String),
    #[error("state database: {0}")]
    Store(#[from] rusqlite::Error),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    #[error("runtime: {0}")]
    Runtime(String),
}

impl Coded for SimError {
    fn code(&self) -> Code {
        match self {
            SimError::Bind { .. } => Code::SimPortInUse,
            SimError::Store(_) | SimError::Corrupt(_) => Code::SimStateDamaged,
            SimError::Io { .. }
            | SimError::Cert(_)
            | SimError::Tls(_)
            | SimError::Pem(_)
            | SimError::Kubeconfig(_)
            | SimError::Runtime(_) => Code::SimFailed,
        }
    }

    fn exit_class(&self) -> ExitClass {
        match self {
            SimError::Bind { .. } | SimError::Store(_) | SimError::Corrupt(_) => {
                ExitClass::Rejected
            }
            SimError::Io { .. }
            | SimError::Cert(_)
            | SimError::Tls(_)
            | SimError::Pem(_)
            | SimError::Kubeconfig(_)
            | SimError::Runtime(_) => ExitClass::Failed,
        }
    }
}

impl SimError {
    /// An I/O error on a path.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        SimError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
