//! The TLS crypto of every HTTPS client and server of the project (the local cluster, the operator's
//! webhook server, the image registry client, OTLP export): rustls with *ring*, one provider for all.
//!
//! rustls 0.23.48 deprecates `crypto::ring::default_provider` ("no support for post-quantum
//! algorithms"); its post-quantum key exchange lives in the aws-lc-rs provider, whose C build would add
//! a minute to every app's first build. Kubernetes API servers and webhooks negotiate the classical
//! groups ring has (X25519, P-256, P-384), so ring stays, and this is the one place that names it.

use rustls::crypto::CryptoProvider;

/// rustls' provider on *ring*.
#[allow(deprecated)]
pub fn provider() -> CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// Makes [`provider`] the process's default (for clients built without one); a default set earlier stays.
pub fn install_default() {
    let _ = provider().install_default();
}
