//! The HTTPS client of webhook calls: hyper's client (HTTP/2 when the webhook's TLS offers it, else
//! HTTP/1.1) over keep-alive TLS connections pooled per webhook (`pool.rs`), verified against the webhook's `caBundle` only, the whole call
//! (connecting, sending, reading the response) bounded by the webhook's timeout. The write pipeline
//! calls it on blocking threads and waits for the call there. Errors are worded like Go's `net/http`
//! client's, which the real API server quotes in its `failed calling webhook` messages.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST, USER_AGENT};
use http_body_util::{BodyExt, Full};
use rustls::pki_types::{CertificateDer, pem::PemObject};

use super::pool::{ConnectError, Pool};

/// Where one call goes.
pub struct Target {
    /// The address to connect to.
    pub addr: SocketAddr,
    /// The name the server certificate must be valid for (a DNS name or an IP address).
    pub server_name: String,
    /// The `Host` header.
    pub host: String,
    /// Path and query of the request.
    pub path: String,
    /// The full URL, for error messages.
    pub url: String,
}

/// A client TLS configuration trusting exactly the PEM certificates of `ca_bundle`, verifying as Go
/// does (`verify.rs`: also a serving certificate that is itself in the bundle). No bundle means no
/// trusted roots (the simulator does not read the system's), so every chain is of an unknown authority.
pub fn tls_config(ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, String> {
    let bundle = CertificateDer::pem_slice_iter(ca_bundle)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("unable to load root certificates: {e}"))?;
    let provider = Arc::new(piceli_net::tls::provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let verifier = super::verify::BundleVerifier::new(bundle)?;
    let mut config = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // As Go's transport in kube-apiserver: HTTP/2 when the webhook offers it, else HTTP/1.1.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// POSTs a JSON body through the webhook's pool; returns the HTTP status and the response body. An
/// idle keep-alive connection to the same address is reused when there is one (hyper retries once on
/// a new connection when a reused one turns out closed before the request went out).
pub fn post(
    pool: &Pool,
    target: &Target,
    body: Vec<u8>,
    deadline: Instant,
) -> Result<(u16, Vec<u8>), String> {
    let fail = |why: String| format!("Post {:?}: {why}", target.url);
    let client = pool.client(&target.server_name).map_err(fail)?;
    let request = http::Request::post(format!("https://{}{}", target.addr, target.path))
        .header(HOST, &target.host)
        .header(USER_AGENT, "kube-apiserver-admission")
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, */*")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| fail(format!("invalid request: {e}")))?;
    let call = async move {
        // The outgoing runtime runs only while a call waits (`outbound.rs`): let it first see what
        // happened to its idle connections meanwhile (a webhook that closed one while idle), so the pool
        // drops a closed connection instead of sending this review down it, as Go's transport does.
        // Two turns: one for the I/O driver to report the close, one for the connection's task to act.
        tokio::task::yield_now().await;
        tokio::task::yield_now().await;
        let response = client
            .request(request)
            .await
            .map_err(|e| request_error(&e))?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| hyper_error(&e))?
            .to_bytes();
        Ok((status, body.to_vec()))
    };
    let deadline = tokio::time::Instant::from_std(deadline);
    let bounded = async move { tokio::time::timeout_at(deadline, call).await };
    match crate::outbound::block_on(bounded).map_err(fail)? {
        Ok(done) => done.map_err(fail),
        Err(_elapsed) => Err(fail("context deadline exceeded".into())),
    }
}

/// A failed request worded as Go's client words it: the connector's own wording for connections
/// that could not be made, `EOF` for a connection closed before a response came.
fn request_error(e: &hyper_util::client::legacy::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(c) = s.downcast_ref::<ConnectError>() {
            return c.0.clone();
        }
        if let Some(h) = s.downcast_ref::<hyper::Error>() {
            return hyper_error(h);
        }
        source = s.source();
    }
    e.to_string()
}

fn hyper_error(e: &hyper::Error) -> String {
    if e.is_incomplete_message() {
        return "EOF".into();
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return super::pool::tls_or_io(io);
        }
        source = s.source();
    }
    e.to_string()
}

/// The default timeout of a webhook call and its bounds.
pub fn timeout_of(seconds: Option<i64>) -> Duration {
    Duration::from_secs(seconds.unwrap_or(10).clamp(1, 30) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_default_to_ten_seconds_within_one_to_thirty() {
        assert_eq!(timeout_of(None), Duration::from_secs(10));
        assert_eq!(timeout_of(Some(0)), Duration::from_secs(1));
        assert_eq!(timeout_of(Some(99)), Duration::from_secs(30));
    }
}
