//! Delivery over the OCI distribution API: push an image's blobs (skipping those the registry has) and its
//! manifest, pull an image back by digest, pull a pinned base image.

pub mod auth;
mod http;

use ::http::{Method, StatusCode, header};
use bytes::Bytes;

use crate::assemble::{BaseImage, Blob, Image};
use crate::digest::Digest;
use crate::error::ImageError;
use crate::reference::{PinnedImage, Repository};
use crate::spec::{
    DOCKER_LIST_MEDIA_TYPE, INDEX_MEDIA_TYPE, ImageConfig, Index, MANIFEST_MEDIA_TYPE, Manifest,
    host_architecture,
};
use auth::{Credentials, DockerConfig};

/// Blobs larger than this go up in chunks of this size (PATCH), smaller ones in one PUT.
pub const CHUNK: usize = 8 * 1024 * 1024;

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// Blobs uploaded.
    pub uploaded: Vec<Digest>,
    /// Blobs the registry already had.
    pub skipped: Vec<Digest>,
    /// Bytes sent in uploads.
    pub bytes: u64,
    /// Whether the manifest was already there (nothing at all was written).
    pub manifest_existed: bool,
}

/// A client for one repository of one registry.
pub struct RegistryClient {
    http: http::Http,
}

impl RegistryClient {
    /// A client for `repository`, with credentials from the named docker config (never an ambient one).
    pub fn new(
        repository: Repository,
        auth: Option<&DockerConfig>,
    ) -> Result<RegistryClient, ImageError> {
        let credentials: Option<Credentials> = auth
            .and_then(|a| a.for_registry(&repository.registry))
            .cloned();
        Ok(RegistryClient {
            http: http::Http::new(repository, credentials)?,
        })
    }

    /// The repository this client talks to.
    pub fn repository(&self) -> &Repository {
        &self.http.repository
    }

    /// Whether the registry has the blob.
    pub async fn has_blob(&self, digest: &Digest) -> Result<bool, ImageError> {
        self.exists(&format!("blobs/{digest}"), &[]).await
    }

    /// Whether the registry has the manifest `digest` (what a kubelet's pull first asks).
    pub async fn has_manifest(&self, digest: &Digest) -> Result<bool, ImageError> {
        self.exists(&format!("manifests/{digest}"), &[(header::ACCEPT, ACCEPT)])
            .await
    }

    async fn exists(
        &self,
        path: &str,
        headers: &[(header::HeaderName, &str)],
    ) -> Result<bool, ImageError> {
        let url = self.http.url(path);
        let r = self
            .http
            .send(Method::HEAD, &url, headers, Bytes::new())
            .await?;
        match r.status {
            StatusCode::OK => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            other => Err(self.http.fail(format!("HEAD {url} answered {other}"))),
        }
    }

    /// Uploads one blob: monolithic up to [`CHUNK`] bytes, chunked above.
    pub async fn upload_blob(&self, digest: &Digest, bytes: &[u8]) -> Result<(), ImageError> {
        let start = self.http.url("blobs/uploads/");
        let r = self
            .http
            .send(Method::POST, &start, &[], Bytes::new())
            .await?;
        let mut location = self.location(&r, StatusCode::ACCEPTED, "POST", &start)?;
        if bytes.len() > CHUNK {
            let mut at = 0;
            for chunk in bytes.chunks(CHUNK) {
                let range = format!("{at}-{}", at + chunk.len() - 1);
                let headers = [
                    (header::CONTENT_TYPE, "application/octet-stream"),
                    (header::CONTENT_RANGE, range.as_str()),
                ];
                let r = self
                    .http
                    .send(
                        Method::PATCH,
                        &location,
                        &headers,
                        Bytes::copy_from_slice(chunk),
                    )
                    .await?;
                location = self.location(&r, StatusCode::ACCEPTED, "PATCH", &location)?;
                at += chunk.len();
            }
            let url = with_digest(&location, digest);
            let r = self.http.send(Method::PUT, &url, &[], Bytes::new()).await?;
            self.expect(&r, StatusCode::CREATED, "PUT", &url)
        } else {
            let url = with_digest(&location, digest);
            let headers = [(header::CONTENT_TYPE, "application/octet-stream")];
            let r = self
                .http
                .send(Method::PUT, &url, &headers, Bytes::copy_from_slice(bytes))
                .await?;
            self.expect(&r, StatusCode::CREATED, "PUT", &url)
        }
    }

    /// Pushes `image`: each blob the registry lacks, then the manifest by digest (and under `tag` when given).
    pub async fn push(&self, image: &Image, tag: Option<&str>) -> Result<PushReport, ImageError> {
        let mut report = PushReport::default();
        if self.has_manifest(&image.digest).await? && tag.is_none() {
            report.manifest_existed = true;
            report.skipped = image
                .blobs
                .iter()
                .map(|b| b.descriptor.digest.clone())
                .collect();
            return Ok(report);
        }
        for blob in &image.blobs {
            let digest = &blob.descriptor.digest;
            if self.has_blob(digest).await? {
                report.skipped.push(digest.clone());
            } else {
                self.upload_blob(digest, &blob.bytes).await?;
                report.uploaded.push(digest.clone());
                report.bytes += blob.bytes.len() as u64;
            }
        }
        let mut references = vec![image.digest.to_string()];
        references.extend(tag.map(str::to_string));
        for reference in references {
            let url = self.http.url(&format!("manifests/{reference}"));
            let headers = [(header::CONTENT_TYPE, MANIFEST_MEDIA_TYPE)];
            let r = self
                .http
                .send(
                    Method::PUT,
                    &url,
                    &headers,
                    Bytes::from(image.manifest_bytes.clone()),
                )
                .await?;
            self.expect(&r, StatusCode::CREATED, "PUT", &url)?;
        }
        Ok(report)
    }

    /// The digest a tag names now: `HEAD manifests/TAG` and its `Docker-Content-Digest` (a registry that
    /// does not send it is asked with `GET`, and the manifest's bytes are hashed). `None`: no such tag.
    pub async fn digest_of(&self, tag: &str) -> Result<Option<Digest>, ImageError> {
        let url = self.http.url(&format!("manifests/{tag}"));
        let r = self
            .http
            .send(
                Method::HEAD,
                &url,
                &[(header::ACCEPT, ACCEPT)],
                Bytes::new(),
            )
            .await?;
        match r.status {
            StatusCode::NOT_FOUND => return Ok(None),
            StatusCode::OK => {}
            other => return Err(self.http.fail(format!("HEAD {url} answered {other}"))),
        }
        if let Some(d) = r.header(header::HeaderName::from_static("docker-content-digest")) {
            return Digest::parse(d).map(Some);
        }
        let (_, bytes) = self.manifest(tag).await?;
        Ok(Some(Digest::of(&bytes)))
    }

    /// The manifest `reference` (a digest or a tag): its media type and bytes, checked when it is a digest.
    pub async fn manifest(&self, reference: &str) -> Result<(String, Vec<u8>), ImageError> {
        let url = self.http.url(&format!("manifests/{reference}"));
        let r = self
            .http
            .send(Method::GET, &url, &[(header::ACCEPT, ACCEPT)], Bytes::new())
            .await?;
        self.expect(&r, StatusCode::OK, "GET", &url)?;
        if let Ok(digest) = Digest::parse(reference) {
            verify(
                &format!("manifest {}", self.http.repository),
                &digest,
                &r.body,
            )?;
        }
        let media_type = r
            .header(header::CONTENT_TYPE)
            .unwrap_or(MANIFEST_MEDIA_TYPE)
            .to_string();
        Ok((media_type, r.body.to_vec()))
    }

    /// The blob `digest`, checked (one redirect followed, as registries with object storage send).
    pub async fn blob(&self, digest: &Digest) -> Result<Vec<u8>, ImageError> {
        let mut url = self.http.url(&format!("blobs/{digest}"));
        let mut r = self.http.send(Method::GET, &url, &[], Bytes::new()).await?;
        if r.status.is_redirection()
            && let Some(next) = r.header(header::LOCATION)
        {
            url = self.http.absolute(next);
            r = self.http.send(Method::GET, &url, &[], Bytes::new()).await?;
        }
        self.expect(&r, StatusCode::OK, "GET", &url)?;
        verify(&format!("blob {}", self.http.repository), digest, &r.body)?;
        Ok(r.body.to_vec())
    }

    /// Pulls the image `digest` back whole: manifest and every blob, each checked against its digest.
    pub async fn pull(&self, digest: &Digest) -> Result<Image, ImageError> {
        let (_, bytes) = self.manifest(digest.as_str()).await?;
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| self.http.fail(format!("the manifest is not valid: {e}")))?;
        let mut blobs = Vec::new();
        for descriptor in std::iter::once(&manifest.config).chain(&manifest.layers) {
            let bytes = self.blob(&descriptor.digest).await?;
            blobs.push(Blob {
                descriptor: descriptor.clone(),
                bytes,
            });
        }
        Ok(Image {
            manifest,
            manifest_bytes: bytes,
            digest: digest.clone(),
            blobs,
        })
    }

    fn expect(
        &self,
        r: &http::Response,
        want: StatusCode,
        method: &str,
        url: &str,
    ) -> Result<(), ImageError> {
        if r.status == want || (want == StatusCode::CREATED && r.status == StatusCode::ACCEPTED) {
            return Ok(());
        }
        let body = String::from_utf8_lossy(&r.body);
        Err(self.http.fail(format!(
            "{method} {url} answered {} {}",
            r.status,
            body.trim()
        )))
    }

    fn location(
        &self,
        r: &http::Response,
        want: StatusCode,
        method: &str,
        url: &str,
    ) -> Result<String, ImageError> {
        self.expect(r, want, method, url)?;
        let location = r.header(header::LOCATION).ok_or_else(|| {
            self.http
                .fail(format!("{method} {url} gave no upload Location"))
        })?;
        Ok(self.http.absolute(location))
    }
}

/// Pulls the pinned base image `reference`: through an index to this host's platform, then the config
/// and the layers.
pub async fn pull_base(
    reference: &PinnedImage,
    auth: Option<&DockerConfig>,
) -> Result<BaseImage, ImageError> {
    let client = RegistryClient::new(reference.repository.clone(), auth)?;
    let (media_type, bytes) = client.manifest(reference.digest.as_str()).await?;
    let bad = |e: serde_json::Error| {
        client
            .http
            .fail(format!("the base's manifest is not valid: {e}"))
    };
    let (digest, manifest) = if media_type.starts_with(INDEX_MEDIA_TYPE)
        || media_type.starts_with(DOCKER_LIST_MEDIA_TYPE)
    {
        let index: Index = serde_json::from_slice(&bytes).map_err(bad)?;
        let arch = host_architecture();
        let entry = index
            .manifests
            .iter()
            .find(|m| {
                m.platform
                    .as_ref()
                    .is_some_and(|p| p.os == "linux" && p.architecture == arch)
            })
            .ok_or_else(|| {
                client
                    .http
                    .fail(format!("the base {reference} has no linux/{arch} image"))
            })?;
        let (_, bytes) = client.manifest(entry.digest.as_str()).await?;
        (
            entry.digest.clone(),
            serde_json::from_slice::<Manifest>(&bytes).map_err(bad)?,
        )
    } else {
        (
            reference.digest.clone(),
            serde_json::from_slice::<Manifest>(&bytes).map_err(bad)?,
        )
    };
    let config_bytes = client.blob(&manifest.config.digest).await?;
    let config: ImageConfig = serde_json::from_slice(&config_bytes).map_err(|e| {
        client
            .http
            .fail(format!("the base's config is not valid: {e}"))
    })?;
    let mut layers = Vec::new();
    for descriptor in &manifest.layers {
        layers.push(Blob {
            descriptor: descriptor.clone(),
            bytes: client.blob(&descriptor.digest).await?,
        });
    }
    Ok(BaseImage {
        reference: reference.to_string(),
        digest,
        config,
        layers,
    })
}

/// Every manifest type we read.
const ACCEPT: &str = "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, \
                      application/vnd.docker.distribution.manifest.v2+json, \
                      application/vnd.docker.distribution.manifest.list.v2+json";

fn with_digest(location: &str, digest: &Digest) -> String {
    let sep = if location.contains('?') { '&' } else { '?' };
    format!(
        "{location}{sep}digest={}",
        digest.as_str().replace(':', "%3A")
    )
}

fn verify(what: &str, expected: &Digest, bytes: &[u8]) -> Result<(), ImageError> {
    let actual = Digest::of(bytes);
    if &actual == expected {
        Ok(())
    } else {
        Err(ImageError::DigestMismatch {
            what: what.to_string(),
            expected: expected.to_string(),
            actual: actual.to_string(),
        })
    }
}
