//! OpenTelemetry export of a Piceli app's spans over OTLP/HTTP (protobuf), the `otlp` feature of the
//! `piceli` crate: [`install`] registers the exporter with the runtime's logging, and every subscriber the
//! app installs (`serve`) then sends its spans — a `reconcile` per reconcile with its controller and
//! object, an `admission` per review with its webhook and UID, an `apply_step` per engine step — to the
//! collector the standard variables name:
//!
//! - `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the whole URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces`
//!   is added); nothing is exported when neither is set;
//! - `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT` (as the OpenTelemetry SDK reads them);
//! - `OTEL_EXPORTER_OTLP_CERTIFICATE` (or `…_TRACES_CERTIFICATE`): a PEM file of CA certificates an
//!   `https://` collector is trusted by, beside the system's roots;
//! - `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`; the service name defaults to the binary's name.
//!
//! `RUST_LOG` filters what is exported as it filters what is printed. A collector that cannot be reached
//! costs the app nothing but the SDK's warnings: spans are batched on a thread of their own and dropped
//! when its queue is full.

mod client;

use std::sync::Mutex;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use piceli_runtime::logging::{self, BoxedLayer, Exporter};

/// Registers the OTLP exporter with the runtime's logging (once per process; later calls do nothing).
/// Returns whether this call registered it.
pub fn install() -> bool {
    logging::set_exporter(Box::new(Otlp::default()))
}

/// The exporter: builds the SDK's tracer provider when a subscriber is installed and the environment names
/// a collector, and flushes it when the logging guard drops.
#[derive(Default)]
struct Otlp {
    provider: Mutex<Option<SdkTracerProvider>>,
}

impl Exporter for Otlp {
    fn layer(&self) -> Result<Option<BoxedLayer>, String> {
        if !logging::otlp_configured() {
            return Ok(None);
        }
        let provider = provider()?;
        let tracer = provider.tracer("piceli");
        if let Ok(mut slot) = self.provider.lock() {
            *slot = Some(provider);
        }
        Ok(Some(Box::new(
            tracing_opentelemetry::layer().with_tracer(tracer),
        )))
    }

    fn flush(&self) {
        let provider = self.provider.lock().ok().and_then(|mut p| p.take());
        if let Some(provider) = provider {
            // Shutting down exports what is still queued, then stops the batch thread.
            if let Err(e) = provider.shutdown() {
                tracing::warn!(error = %e, "the last spans could not be exported");
            }
        }
    }
}

/// The tracer provider: a batch of spans exported over OTLP/HTTP with protobuf bodies.
fn provider() -> Result<SdkTracerProvider, String> {
    let client = client::from_env()?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .with_http_client(client)
        .build()
        .map_err(|e| format!("the OTLP exporter: {e}"))?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource())
        .build())
}

/// The service's resource: `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` when set (the SDK's
/// detectors), else the binary's name as `service.name`.
fn resource() -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|n| !n.trim().is_empty());
    let builder = Resource::builder();
    if named {
        return builder.build();
    }
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "piceli-app".into());
    builder.with_service_name(binary).build()
}
