//! The simulator's PKI: a CA (kept in the cluster directory when there is one) and a fresh serving
//! certificate for 127.0.0.1/localhost signed by it, plus the bearer token.

use std::path::Path;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::error::SimError;

/// The CA and token a cluster is reached with.
pub struct Credentials {
    /// The cluster CA certificate (PEM).
    pub ca_cert_pem: String,
    /// The CA's private key (PEM, PKCS#8).
    pub ca_key_pem: String,
    /// The bearer token clients authenticate with.
    pub token: String,
}

/// Loads `ca.crt`, `ca.key` and `token` from `dir`, or creates (and, with a directory, saves) them.
pub fn load_or_create(dir: Option<&Path>) -> Result<Credentials, SimError> {
    if let Some(dir) = dir {
        let (crt, key, tok) = (dir.join("ca.crt"), dir.join("ca.key"), dir.join("token"));
        if crt.exists() && key.exists() && tok.exists() {
            let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| SimError::io(p, e));
            return Ok(Credentials {
                ca_cert_pem: read(&crt)?,
                ca_key_pem: read(&key)?,
                token: read(&tok)?.trim().to_string(),
            });
        }
        let creds = generate()?;
        write_private(&crt, &creds.ca_cert_pem)?;
        write_private(&key, &creds.ca_key_pem)?;
        write_private(&tok, &creds.token)?;
        return Ok(creds);
    }
    generate()
}

/// Writes a file readable only by its owner.
pub fn write_private(path: &Path, contents: &str) -> Result<(), SimError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| SimError::io(path, e))?;
    f.write_all(contents.as_bytes())
        .map_err(|e| SimError::io(path, e))
}

fn ca_params() -> Result<CertificateParams, SimError> {
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(DnType::CommonName, "piceli-sim-ca");
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

fn generate() -> Result<Credentials, SimError> {
    let key = KeyPair::generate()?;
    let mut params = ca_params()?;
    let now = std::time::SystemTime::now();
    params.not_before = now
        .checked_sub(std::time::Duration::from_secs(3600))
        .unwrap_or(now)
        .into();
    params.not_after = (now + std::time::Duration::from_secs(10 * 365 * 86_400)).into();
    let cert = params.self_signed(&key)?;
    let bytes: [u8; 32] = crate::registry::object::random::bytes();
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Credentials {
        ca_cert_pem: cert.pem(),
        ca_key_pem: key.serialize_pem(),
        token,
    })
}

/// A rustls server configuration (ring provider, HTTP/1.1) with a new serving certificate signed by the CA.
pub fn server_config(creds: &Credentials) -> Result<Arc<rustls::ServerConfig>, SimError> {
    let ca_key = KeyPair::from_pem(&creds.ca_key_pem)?;
    // Same key and subject as the stored CA certificate, so the chain verifies against it.
    let issuer = Issuer::new(ca_params()?, ca_key);
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    params
        .distinguished_name
        .push(DnType::CommonName, "piceli-sim");
    let leaf_key = KeyPair::generate()?;
    let leaf = params.signed_by(&leaf_key, &issuer)?;
    let chain = vec![
        leaf.der().clone(),
        CertificateDer::from(pem_to_der(&creds.ca_cert_pem)?),
    ];
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let provider = Arc::new(piceli_net::tls::provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(SimError::Tls)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(SimError::Tls)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn pem_to_der(pem: &str) -> Result<Vec<u8>, SimError> {
    use rustls_pki_types::pem::PemObject;
    CertificateDer::from_pem_slice(pem.as_bytes())
        .map(|c| c.to_vec())
        .map_err(|e| SimError::Pem(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_persist_in_a_directory() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create(Some(dir.path())).expect("create");
        let second = load_or_create(Some(dir.path())).expect("load");
        assert_eq!(first.token, second.token);
        assert_eq!(first.ca_cert_pem, second.ca_cert_pem);
        assert_eq!(first.token.len(), 64);
        server_config(&second).expect("serving certificate");
    }
}
