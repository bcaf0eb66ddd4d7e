//! The serving certificate: read from PEM files, and swapped in for new handshakes when the files change
//! (cert-manager rewrites the mounted Secret when it renews).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::webhook::error::ServeError;

/// The one crypto provider the server uses (ring), named explicitly: kube and its TLS stack may compile
/// in another, and rustls then refuses to pick a process default.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(piceli_net::tls::provider())
}

/// The current certificate and key, with the file contents they came from.
#[derive(Debug)]
pub(crate) struct ReloadingCert {
    cert_path: PathBuf,
    key_path: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Arc<CertifiedKey>>,
    /// The bytes of (cert, key) last loaded.
    loaded: Mutex<(Vec<u8>, Vec<u8>)>,
}

impl ReloadingCert {
    /// Loads both files now; fails when they are unreadable, not PEM, or do not match.
    pub fn load(
        cert_path: &Path,
        key_path: &Path,
        provider: Arc<CryptoProvider>,
    ) -> Result<ReloadingCert, ServeError> {
        let (cert, key) = read_pair(cert_path, key_path)?;
        let certified = certified(&cert, &key, cert_path, key_path, &provider)?;
        Ok(ReloadingCert {
            cert_path: cert_path.to_path_buf(),
            key_path: key_path.to_path_buf(),
            provider,
            current: RwLock::new(Arc::new(certified)),
            loaded: Mutex::new((cert, key)),
        })
    }

    /// Reads the files again; when they changed and hold a valid pair, later handshakes use it.
    /// `Ok(false)`: unchanged. An error leaves the current certificate in use (a half-written pair is
    /// picked up at the next call).
    pub fn reload_if_changed(&self) -> Result<bool, ServeError> {
        let (cert, key) = read_pair(&self.cert_path, &self.key_path)?;
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if loaded.0 == cert && loaded.1 == key {
            return Ok(false);
        }
        let certified = certified(&cert, &key, &self.cert_path, &self.key_path, &self.provider)?;
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(certified);
        *loaded = (cert, key);
        Ok(true)
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

fn read_pair(cert_path: &Path, key_path: &Path) -> Result<(Vec<u8>, Vec<u8>), ServeError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| ServeError::Tls {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    };
    Ok((read(cert_path)?, read(key_path)?))
}

fn certified(
    cert: &[u8],
    key: &[u8],
    cert_path: &Path,
    key_path: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, ServeError> {
    let bad = |path: &Path, reason: String| ServeError::Tls {
        path: path.to_path_buf(),
        reason,
    };
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(cert_path, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(bad(cert_path, "holds no CERTIFICATE block".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| bad(key_path, format!("not a PEM private key: {e}")))?;
    CertifiedKey::from_der(chain, key, provider)
        .map_err(|e| bad(key_path, format!("does not go with the certificate: {e}")))
}
