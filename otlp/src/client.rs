//! The exporter's HTTP client: opentelemetry-http's hyper client driven by a runtime of its own (the SDK
//! exports from its batch thread, outside the app's runtime), over rustls with the ring provider, the
//! system's roots and the CA file of `OTEL_EXPORTER_OTLP_CERTIFICATE`.

use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use hyper_util::client::legacy::connect::HttpConnector;
use opentelemetry_http::hyper::HyperClient;
use opentelemetry_http::{HttpClient, HttpError};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// The variables naming a CA file for an `https://` collector, the traces' own first.
const CERTIFICATE_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
];

/// The variables of the export timeout in milliseconds, the traces' own first (the SDK's default: 10 s).
const TIMEOUT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
];
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

type Connector = hyper_rustls::HttpsConnector<HttpConnector>;

/// A hyper client with the current-thread runtime that drives it.
#[derive(Debug)]
pub struct Client {
    runtime: tokio::runtime::Runtime,
    inner: HyperClient<Connector>,
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        // The batch thread polls this future with a plain executor: the hyper future runs to its end on
        // the client's own runtime.
        self.runtime.block_on(self.inner.send_bytes(request))
    }
}

/// The client from the environment.
pub fn from_env() -> Result<Client, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = first_var(&CERTIFICATE_VARS) {
        let certificates: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&path)
            .map_err(|e| format!("{path}: {e}"))?
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{path}: not PEM certificates: {e}"))?;
        if certificates.is_empty() {
            return Err(format!("{path}: no PEM certificate in it"));
        }
        for certificate in certificates {
            roots.add(certificate).map_err(|e| format!("{path}: {e}"))?;
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        piceli_net::tls::provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| format!("TLS: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    let timeout = match first_var(&TIMEOUT_VARS) {
        None => DEFAULT_TIMEOUT,
        Some(ms) => Duration::from_millis(ms.trim().parse().map_err(|_| {
            format!("OTEL_EXPORTER_OTLP_TIMEOUT={ms:?} is not a number of milliseconds")
        })?),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("the exporter's runtime: {e}"))?;
    // hyper's pool spawns its connection tasks: make the client inside the runtime it will run on.
    let inner = {
        let _entered = runtime.enter();
        HyperClient::new(connector, timeout, None)
    };
    Ok(Client { runtime, inner })
}

fn first_var(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|p| !p.trim().is_empty()))
}
