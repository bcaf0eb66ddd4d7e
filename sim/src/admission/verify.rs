//! Server certificate verification of webhook calls as Go's `crypto/x509` does it for the apiserver,
//! in its order (`go_x509.rs`): the serving certificate's validity period, then its names, then a
//! chain to a certificate of the `caBundle` (rustls' WebPKI verifier) — or the serving certificate
//! itself in the bundle: the usual `openssl req -x509` recipe, a self-signed certificate with
//! `CA:TRUE` used as its own caBundle, which WebPKI refuses as a CA used as an end entity but Go
//! accepts. Failures are worded as Go words them.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct};

use super::go_x509::{self, GoX509};

/// Go's checks and wording around WebPKI's chain building.
#[derive(Debug)]
pub struct BundleVerifier {
    /// WebPKI over the bundle; `None` for an empty bundle (nothing to chain to).
    inner: Option<Arc<WebPkiServerVerifier>>,
    bundle: Vec<CertificateDer<'static>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl BundleVerifier {
    /// A verifier trusting `bundle` (none when it is empty: the simulator does not read the
    /// system's roots, so every chain is then of an unknown authority).
    pub fn new(bundle: Vec<CertificateDer<'static>>) -> Result<BundleVerifier, String> {
        let provider = Arc::new(piceli_net::tls::provider());
        let algorithms = provider.signature_verification_algorithms;
        let mut roots = rustls::RootCertStore::empty();
        for cert in &bundle {
            // A certificate WebPKI cannot use as an anchor may still be a serving certificate.
            let _ = roots.add(cert.clone());
        }
        let inner = if roots.is_empty() {
            None
        } else {
            Some(
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| format!("unable to load root certificates: {e}"))?,
            )
        };
        Ok(BundleVerifier {
            inner,
            bundle,
            algorithms,
        })
    }

    /// Go's `UnknownAuthorityError` for `leaf` against this bundle.
    fn unknown_authority(&self, leaf: &x509_parser::certificate::X509Certificate<'_>) -> GoX509 {
        let parsed: Vec<_> = self
            .bundle
            .iter()
            .filter_map(|c| x509_parser::parse_x509_certificate(c.as_ref()).ok())
            .map(|(_, c)| c)
            .collect();
        go_x509::unknown_authority(leaf, &parsed)
    }
}

impl ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let (_, leaf) = x509_parser::parse_x509_certificate(end_entity.as_ref())
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        go_x509::check_leaf(&leaf, server_name, now).map_err(GoX509::into_rustls)?;
        if self
            .bundle
            .iter()
            .any(|c| c.as_ref() == end_entity.as_ref())
        {
            return Ok(ServerCertVerified::assertion());
        }
        let Some(inner) = &self.inner else {
            return Err(self.unknown_authority(&leaf).into_rustls());
        };
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Ok(v) => Ok(v),
            Err(rustls::Error::InvalidCertificate(e)) => Err(match e {
                // No chain to the bundle (a CA serving itself, not in the bundle, has none either).
                CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                    self.unknown_authority(&leaf).into_rustls()
                }
                CertificateError::Other(ref o)
                    if format!("{o:?}").contains("CaUsedAsEndEntity") =>
                {
                    self.unknown_authority(&leaf).into_rustls()
                }
                // The leaf's period passed: an issuer's is out.
                CertificateError::ExpiredContext { time, not_after } => GoX509(
                    go_x509::expired_at(time_of(time), i64::MIN, time_of(not_after))
                        .unwrap_or_default(),
                )
                .into_rustls(),
                CertificateError::NotValidYetContext { time, not_before } => GoX509(
                    go_x509::expired_at(time_of(time), time_of(not_before), i64::MAX)
                        .unwrap_or_default(),
                )
                .into_rustls(),
                CertificateError::InvalidPurpose => {
                    GoX509("x509: certificate specifies an incompatible key usage".into())
                        .into_rustls()
                }
                other => rustls::Error::InvalidCertificate(other),
            }),
            Err(e) => Err(e),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

fn time_of(t: UnixTime) -> i64 {
    i64::try_from(t.as_secs()).unwrap_or(i64::MAX)
}
