//! Logs: what the runtime reports goes through `tracing` (a span per reconcile with its controller and
//! object, per admission review with its webhook and UID, per apply step), and [`init`] prints it on
//! stderr as text or as JSON lines, filtered by `RUST_LOG` (default: the level the command gives).

mod words;

pub use words::words;

use piceli_core::{Code, Coded};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The environment variable of the log filter.
pub const FILTER_VAR: &str = "RUST_LOG";

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// One human line per event: time, level, spans with their fields, target, message and fields.
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message` and the event's fields at the
    /// top, the innermost span as `span` and every enclosing span in `spans`.
    Json,
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// `RUST_LOG` does not parse (PCL0224).
    #[error("{FILTER_VAR}={value:?} is not a valid log filter: {reason}")]
    InvalidFilter {
        /// The variable's value.
        value: String,
        /// What the parser said.
        reason: String,
    },
}

impl Coded for LoggingError {
    fn code(&self) -> Code {
        match self {
            LoggingError::InvalidFilter { .. } => Code::LogFilterInvalid,
        }
    }

    fn help(&self) -> String {
        match self {
            LoggingError::InvalidFilter { .. } => format!(
                "write directives such as `info`, `piceli_runtime=debug,kube=warn` or `[reconcile{{controller=NAME}}]=debug`, or unset {FILTER_VAR}"
            ),
        }
    }
}

/// The filter: `RUST_LOG` when it is set and not empty, else `default` (a directive list such as `info`).
pub fn filter(default: &str) -> Result<EnvFilter, LoggingError> {
    let from_env = std::env::var(FILTER_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let value = from_env.as_deref().unwrap_or(default);
    EnvFilter::builder()
        .parse(value)
        .map_err(|e| LoggingError::InvalidFilter {
            value: value.to_string(),
            reason: e.to_string(),
        })
}

/// Prints this process's logs on stderr in `format`, filtered by `RUST_LOG` or else `default`. A second
/// call (or a subscriber set by the embedding program) keeps the first.
pub fn init(format: LogFormat, default: &str) -> Result<(), LoggingError> {
    let filter = filter(default)?;
    let registry = tracing_subscriber::registry().with(filter);
    let _ = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_writer(std::io::stderr),
            )
            .try_init(),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_that_does_not_parse_is_refused_with_its_code() {
        let err = EnvFilter::builder()
            .parse("piceli_runtime=loud")
            .map_err(|e| LoggingError::InvalidFilter {
                value: "piceli_runtime=loud".into(),
                reason: e.to_string(),
            })
            .expect_err("not a level");
        assert_eq!(err.code(), Code::LogFilterInvalid);
        assert!(err.to_string().contains("piceli_runtime=loud"), "{err}");
        assert!(filter("info").is_ok() || std::env::var(FILTER_VAR).is_ok());
    }
}
