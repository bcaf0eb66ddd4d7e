//! `serve --tls-from-secret NS/NAME`: the serving certificate from a `kubernetes.io/tls` Secret. The pair
//! is written to a private directory (mode 0700, removed on drop) that the webhook server reads and
//! reloads like mounted files, and rewritten whenever a watch on the Secret sees it change.

use std::future::Future;
use std::path::PathBuf;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube::runtime::watcher;

use super::ServeFailure;

/// The Secret's certificate pair on disk, kept current.
pub struct SecretTls {
    api: Api<Secret>,
    name: String,
    shown: String,
    dir: PathBuf,
}

impl SecretTls {
    /// Reads the Secret once (an error when it is missing or incomplete) and writes its pair.
    pub async fn start(
        client: kube::Client,
        namespace: &str,
        name: &str,
    ) -> Result<SecretTls, ServeFailure> {
        let shown = format!("{namespace}/{name}");
        let api: Api<Secret> = Api::namespaced(client, namespace);
        let secret = api.get(name).await.map_err(|e| ServeFailure::Secret {
            secret: shown.clone(),
            reason: e.to_string(),
        })?;
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("piceli-serve-tls-{}-{n}", std::process::id()));
        create_private_dir(&dir).map_err(|e| ServeFailure::Secret {
            secret: shown.clone(),
            reason: format!("cannot create {}: {e}", dir.display()),
        })?;
        let tls = SecretTls {
            api,
            name: name.to_string(),
            shown,
            dir,
        };
        tls.write(&secret)?;
        Ok(tls)
    }

    /// The certificate and key files.
    pub fn files(&self) -> (PathBuf, PathBuf) {
        (self.dir.join("tls.crt"), self.dir.join("tls.key"))
    }

    fn write(&self, secret: &Secret) -> Result<(), ServeFailure> {
        let data = secret.data.as_ref();
        let get = |key: &str| {
            data.and_then(|d| d.get(key))
                .ok_or_else(|| ServeFailure::Secret {
                    secret: self.shown.clone(),
                    reason: format!("has no `{key}`"),
                })
        };
        let (cert, key) = (get("tls.crt")?, get("tls.key")?);
        let (cert_path, key_path) = self.files();
        // Key first, then the certificate the server watches: it never pairs a new cert with an old key
        // for longer than one reload.
        for (path, bytes) in [(key_path, &key.0), (cert_path, &cert.0)] {
            write_private(&path, bytes).map_err(|e| ServeFailure::Secret {
                secret: self.shown.clone(),
                reason: format!("cannot write {}: {e}", path.display()),
            })?;
        }
        Ok(())
    }

    /// Rewrites the pair whenever the Secret changes, until `stop` resolves.
    pub async fn follow(self, stop: impl Future<Output = ()>) {
        let stream = watcher::watch_object(self.api.clone(), &self.name);
        let mut stream = std::pin::pin!(stream);
        let mut stop = std::pin::pin!(stop);
        loop {
            let next = tokio::select! {
                _ = &mut stop => return,
                next = stream.next() => next,
            };
            match next {
                None => return,
                Some(Ok(Some(secret))) => match self.write(&secret) {
                    Ok(()) => {
                        tracing::info!(secret = %self.shown, "wrote the TLS Secret's certificate and key for the server to load")
                    }
                    Err(e) => tracing::warn!(
                        code = %piceli_core::Code::TlsSecretFailed,
                        secret = %self.shown,
                        error = %crate::logging::words(&e),
                        "keeping the last certificate"
                    ),
                },
                Some(Ok(None)) => tracing::warn!(
                    code = %piceli_core::Code::TlsSecretFailed,
                    secret = %self.shown,
                    "the TLS Secret was deleted; serving the last certificate"
                ),
                Some(Err(e)) => {
                    tracing::warn!(
                        code = %piceli_core::Code::TlsSecretFailed,
                        secret = %self.shown,
                        error = %crate::logging::words(&e),
                        "watching the TLS Secret failed; retrying"
                    );
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
            }
        }
    }
}

impl Drop for SecretTls {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    }
    std::fs::rename(&tmp, path)
}
