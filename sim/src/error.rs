//! Errors from starting and running the simulator (as opposed to API errors, see `status`).

use piceli_core::{Code, Coded};
use std::path::{Path, PathBuf};

/// Why the simulator could not start or keep running.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A file or directory could not be read, written or created.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The server could not listen on its port.
    #[error("cannot listen on 127.0.0.1:{port}: {source} (is another process using the port?)")]
    Bind {
        /// The port asked for.
        port: u16,
        /// Why binding failed.
        source: std::io::Error,
    },
    /// A certificate could not be generated.
    #[error("certificate generation failed: {0}")]
    Cert(#[from] rcgen::Error),
    /// The TLS server configuration could not be built.
    #[error("TLS configuration failed: {0}")]
    Tls(rustls::Error),
    /// A PEM file could not be parsed (the message says which and why).
    #[error("PEM parsing failed: {0}")]
    Pem(String),
    /// The state database (SQLite) failed.
    #[error("state database: {0}")]
    Store(#[from] rusqlite::Error),
    /// Stored data could not be decoded (the message says what).
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// A `kube::Client` could not be built from the simulator's kubeconfig.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// Another setup step failed: the listener's address, the Tokio runtime, a built-in install.
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
