//! Logs: what the runtime reports goes through `tracing` (a span per reconcile with its controller and
//! object, per admission review with its webhook and UID, per apply step), and [`init`] prints it on
//! stderr as text or as JSON lines, filtered by `RUST_LOG` (default: the level the command gives). A build
//! can add an exporter ([`set_exporter`]: the `piceli` crate's `otlp` feature sends the spans over OTLP),
//! which sees what the same filter lets through and is flushed when the [`LogGuard`] drops.

mod words;

pub use words::words;

use std::sync::OnceLock;

use piceli_core::{Code, Coded};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

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

/// A layer boxed to sit on the bare registry (below the filter and the printer).
pub type BoxedLayer = Box<dyn Layer<Registry> + Send + Sync>;

/// Something that exports spans beside the printed logs (e.g. to an OpenTelemetry collector).
pub trait Exporter: Send + Sync {
    /// The layer that exports, `None` when this process is not configured to export (e.g. no endpoint in
    /// its environment), or why the configuration cannot be used (logged as PCL0232; the process goes on
    /// without export). Called once per [`init`].
    fn layer(&self) -> Result<Option<BoxedLayer>, String>;
    /// Sends what is still buffered; called when the [`LogGuard`] of [`init`] drops.
    fn flush(&self);
}

static EXPORTER: OnceLock<Box<dyn Exporter>> = OnceLock::new();

/// Adds `exporter` to every subscriber [`init`] installs from now on. The first call wins (`false` after).
pub fn set_exporter(exporter: Box<dyn Exporter>) -> bool {
    EXPORTER.set(exporter).is_ok()
}

/// Keeps the exporter's buffer until dropped; dropping it flushes (end of `serve`, of a command).
#[must_use = "dropping the guard flushes the exporter: keep it for as long as the process logs"]
pub struct LogGuard {
    exporting: bool,
}

impl LogGuard {
    /// Whether spans are exported beside the printed logs.
    pub fn exporting(&self) -> bool {
        self.exporting
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        if self.exporting
            && let Some(exporter) = EXPORTER.get()
        {
            exporter.flush();
        }
    }
}

/// Prints this process's logs on stderr in `format`, filtered by `RUST_LOG` or else `default`, and hands
/// the spans the filter lets through to the exporter of [`set_exporter`] (if any, and if it is configured).
/// A second call (or a subscriber set by the embedding program) keeps the first.
pub fn init(format: LogFormat, default: &str) -> Result<LogGuard, LoggingError> {
    let filter = filter(default)?;
    let (export, unusable) = match EXPORTER.get().map(|e| e.layer()) {
        None | Some(Ok(None)) => (None, None),
        Some(Ok(Some(layer))) => (Some(layer), None),
        Some(Err(why)) => (None, Some(why)),
    };
    let exporting = export.is_some();
    let registry = tracing_subscriber::registry().with(export).with(filter);
    let installed = match format {
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
    if let Some(why) = unusable {
        tracing::warn!(
            code = %Code::OtlpExportUnavailable,
            error = %why,
            "the OTLP exporter cannot be set up from the environment: spans are not exported"
        );
    }
    if installed.is_ok() && EXPORTER.get().is_none() && otlp_configured() {
        tracing::warn!(
            "OTEL_EXPORTER_OTLP_ENDPOINT is set, but this binary was built without the `otlp` feature of the `piceli` crate: no spans are exported"
        );
    }
    Ok(LogGuard {
        exporting: exporting && installed.is_ok(),
    })
}

/// Whether the environment asks for OTLP export of traces.
pub fn otlp_configured() -> bool {
    [
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ]
    .iter()
    .any(|v| std::env::var(v).is_ok_and(|v| !v.trim().is_empty()))
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
