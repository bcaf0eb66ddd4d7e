//! Why the webhook server cannot start, each with a fix.

use piceli_core::{Code, Coded};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The webhook server could not start (or its listener failed).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The certificate or key file cannot be read or does not hold what it should.
    #[error("TLS file {}: {reason}", path.display())]
    Tls {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The listen address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// `--listen`.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// The webhooks cannot be served as registered.
    #[error("the webhooks cannot be served: {}", .0.join("; "))]
    Webhooks(Vec<String>),
}

impl Coded for ServeError {
    fn code(&self) -> Code {
        Code::ServeFailed
    }

    fn help(&self) -> String {
        match self {
            ServeError::Tls { .. } => "pass --tls-cert and --tls-key: PEM files holding the serving \
                certificate chain and its private key (cert-manager's Secret mounts tls.crt and tls.key)"
                .into(),
            ServeError::Bind { .. } => {
                "pass a free address with --listen (the default is 0.0.0.0:8443)".into()
            }
            ServeError::Webhooks(_) => {
                "give every webhook a distinct DNS-label name (lowercase letters, digits, '-')".into()
            }
        }
    }
}
