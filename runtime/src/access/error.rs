//! Why `access` refuses to start, each with its fixed code and a fix.

use piceli_core::{Code, Coded};

/// What stops `access` before it serves anything.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// A local port is taken (or cannot be bound).
    #[error("forward `{name}`: cannot listen on 127.0.0.1:{port}: {reason}")]
    PortInUse {
        /// The forward (Service name).
        name: String,
        /// The local port.
        port: u16,
        /// The system's words.
        reason: String,
    },
    /// `--only` or `--port` names no declared forward.
    #[error("`{name}` is not a declared forward (declared: {declared})")]
    UnknownForward {
        /// The name given.
        name: String,
        /// The declared forwards, comma-separated.
        declared: String,
    },
    /// A `--port` value is not `NAME=LOCAL`, or a local port is out of range.
    #[error("{0}")]
    BadPort(String),
    /// Nothing to serve.
    #[error("app `{0}` declares no forward (`access: forward(local: PORT)` on a Service)")]
    NoForwards(String),
}

impl Coded for AccessError {
    fn code(&self) -> Code {
        match self {
            AccessError::PortInUse { .. } => Code::PortInUse,
            AccessError::UnknownForward { .. } => Code::UnknownForward,
            AccessError::BadPort(_) => Code::BadPortOverride,
            AccessError::NoForwards(_) => Code::NoForwards,
        }
    }

    fn help(&self) -> String {
        match self {
            AccessError::PortInUse { name, port, .. } => format!(
                "stop the program holding port {port} (`ss -ltnp` shows it), serve the other forwards with \
                 `--only NAME`, or move this one with `--port {name}=LOCAL` (0 picks a free port)"
            ),
            _ => self.code().info().explanation.to_string(),
        }
    }
}
