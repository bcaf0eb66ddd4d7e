//! Server certificate verification of webhook calls as Go's `crypto/x509` does it for the apiserver:
//! a chain to a certificate of the `caBundle` (rustls' WebPKI verifier), and also a serving
//! certificate that is itself in the bundle — the usual `openssl req -x509` recipe, a self-signed
//! certificate with `CA:TRUE` used as its own caBundle, which WebPKI refuses as a CA used as an end
//! entity but Go accepts — when it is valid now and names the host.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct};

/// WebPKI, plus Go's acceptance of a serving certificate found in the bundle itself.
#[derive(Debug)]
pub struct BundleVerifier {
    inner: Arc<WebPkiServerVerifier>,
    bundle: Vec<CertificateDer<'static>>,
}

impl BundleVerifier {
    /// A verifier trusting `bundle` (which must not be empty).
    pub fn new(bundle: Vec<CertificateDer<'static>>) -> Result<BundleVerifier, String> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in &bundle {
            // A certificate WebPKI cannot use as an anchor may still be a serving certificate.
            let _ = roots.add(cert.clone());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| format!("unable to load root certificates: {e}"))?;
        Ok(BundleVerifier { inner, bundle })
    }
}

/// Why a certificate is not valid at `now` for `server_name` (a DNS name or IP SAN), if it is not.
fn check(der: &[u8], server_name: &ServerName<'_>, now: UnixTime) -> Result<(), CertificateError> {
    let (_, cert) =
        x509_parser::parse_x509_certificate(der).map_err(|_| CertificateError::BadEncoding)?;
    let at = x509_parser::time::ASN1Time::from_timestamp(now.as_secs() as i64)
        .map_err(|_| CertificateError::BadEncoding)?;
    if !cert.validity().is_valid_at(at) {
        return Err(CertificateError::Expired);
    }
    let Ok(Some(san)) = cert.subject_alternative_name() else {
        return Err(CertificateError::NotValidForName);
    };
    use x509_parser::extensions::GeneralName;
    let named = san
        .value
        .general_names
        .iter()
        .any(|n| match (n, server_name) {
            (GeneralName::DNSName(d), ServerName::DnsName(want)) => {
                d.eq_ignore_ascii_case(want.as_ref())
            }
            (GeneralName::IPAddress(bytes), ServerName::IpAddress(ip)) => {
                let ip: std::net::IpAddr = (*ip).into();
                match ip {
                    std::net::IpAddr::V4(v4) => *bytes == v4.octets().as_slice(),
                    std::net::IpAddr::V6(v6) => *bytes == v6.octets().as_slice(),
                }
            }
            _ => false,
        });
    if named {
        Ok(())
    } else {
        Err(CertificateError::NotValidForName)
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
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(v) => Ok(v),
            Err(_)
                if self
                    .bundle
                    .iter()
                    .any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                check(end_entity.as_ref(), server_name, now)
                    .map(|()| ServerCertVerified::assertion())
                    .map_err(rustls::Error::InvalidCertificate)
            }
            Err(e) => Err(e),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}
