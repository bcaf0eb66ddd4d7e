//! The HTTP side of the registry client: requests to one registry, with token or basic auth on a 401.

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::{BodyExt as _, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio::sync::Mutex;

use crate::error::ImageError;
use crate::reference::Repository;
use crate::registry::auth::Credentials;

/// A TLS configuration trusting exactly the certificates of `pem` (a registry's own CA).
fn trusting(pem: &[u8]) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| format!("the CA file is not PEM certificates: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("the CA file holds a certificate rustls refuses: {e}"))?;
    }
    if roots.is_empty() {
        return Err("the CA file holds no certificate".into());
    }
    rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(piceli_net::tls::provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
}

/// A response, read whole.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Response {
    pub fn header(&self, name: header::HeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Talks to one repository of one registry.
pub(crate) struct Http {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    pub repository: Repository,
    base: String,
    credentials: Option<Credentials>,
    authorization: Mutex<Option<String>>,
}

impl Http {
    /// A client of `repository`: over HTTPS trusting the system's roots (plain HTTP on loopback), or,
    /// with `ca_pem`, over HTTPS trusting exactly the certificates in it (loopback included).
    pub fn new(
        repository: Repository,
        credentials: Option<Credentials>,
        ca_pem: Option<&[u8]>,
    ) -> Result<Http, ImageError> {
        let tls_error = |e: &dyn std::fmt::Display| ImageError::Registry {
            registry: repository.registry.clone(),
            detail: format!("cannot set up TLS: {e}"),
        };
        let builder = hyper_rustls::HttpsConnectorBuilder::new();
        let builder = match ca_pem {
            None => builder
                .with_provider_and_native_roots(piceli_net::tls::provider())
                .map_err(|e| tls_error(&e))?,
            Some(pem) => builder.with_tls_config(trusting(pem).map_err(|e| tls_error(&e))?),
        };
        let connector = builder.https_or_http().enable_http1().build();
        let client = Client::builder(TokioExecutor::new()).build(connector);
        let scheme = if repository.is_loopback() && ca_pem.is_none() {
            "http"
        } else {
            "https"
        };
        let base = format!("{scheme}://{}", repository.api_host());
        Ok(Http {
            client,
            repository,
            base,
            credentials,
            authorization: Mutex::new(None),
        })
    }

    /// `https://HOST/v2/NAME/` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/v2/{}/{path}", self.base, self.repository.name)
    }

    /// A `Location` header made absolute.
    pub fn absolute(&self, location: &str) -> String {
        if location.starts_with("http://") || location.starts_with("https://") {
            location.to_string()
        } else {
            format!("{}{location}", self.base)
        }
    }

    pub fn fail(&self, detail: impl std::fmt::Display) -> ImageError {
        ImageError::Registry {
            registry: self.repository.registry.clone(),
            detail: detail.to_string(),
        }
    }

    /// Sends a request; on a 401 gets a token (or uses basic auth) as the challenge says, and sends it again.
    pub async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(header::HeaderName, &str)],
        body: Bytes,
    ) -> Result<Response, ImageError> {
        let first = self
            .once(method.clone(), url, headers, body.clone())
            .await?;
        if first.status != StatusCode::UNAUTHORIZED {
            return Ok(first);
        }
        let challenge = first
            .header(header::WWW_AUTHENTICATE)
            .unwrap_or_default()
            .to_string();
        let authorization = self.authorize(&challenge).await?;
        *self.authorization.lock().await = Some(authorization);
        let second = self.once(method, url, headers, body).await?;
        if second.status == StatusCode::UNAUTHORIZED {
            return Err(ImageError::Auth {
                registry: self.repository.registry.clone(),
                detail: format!("{url} still answers 401 with the credentials given"),
            });
        }
        Ok(second)
    }

    async fn once(
        &self,
        method: Method,
        url: &str,
        headers: &[(header::HeaderName, &str)],
        body: Bytes,
    ) -> Result<Response, ImageError> {
        let mut request = Request::builder().method(method.clone()).uri(url);
        for (name, value) in headers {
            request = request.header(name, *value);
        }
        if let Some(auth) = self.authorization.lock().await.as_deref()
            && url.starts_with(&self.base)
        {
            request = request.header(header::AUTHORIZATION, auth);
        }
        let request = request
            .header(header::CONTENT_LENGTH, body.len())
            .body(Full::new(body))
            .map_err(|e| self.fail(format!("cannot make the request {method} {url}: {e}")))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| self.fail(format!("{method} {url}: {e}")))?;
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| self.fail(format!("{method} {url}: reading the answer: {e}")))?
            .to_bytes();
        Ok(Response {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// The `Authorization` value that answers `challenge` (`Bearer realm=…,service=…,scope=…` or `Basic …`).
    async fn authorize(&self, challenge: &str) -> Result<String, ImageError> {
        let auth_fail = |detail: String| ImageError::Auth {
            registry: self.repository.registry.clone(),
            detail,
        };
        let (scheme, params) = challenge.split_once(' ').unwrap_or((challenge, ""));
        if scheme.eq_ignore_ascii_case("basic") {
            return self
                .credentials
                .as_ref()
                .map(Credentials::basic)
                .ok_or_else(|| {
                    auth_fail("the registry asks for credentials; name a docker config file".into())
                });
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(auth_fail(format!("unsupported challenge `{challenge}`")));
        }
        let params = challenge_params(params);
        let get = |k: &str| {
            params
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let realm =
            get("realm").ok_or_else(|| auth_fail("the Bearer challenge names no realm".into()))?;
        let mut url = format!("{realm}?");
        for key in ["service", "scope"] {
            if let Some(v) = get(key) {
                url.push_str(&format!("{key}={}&", encode(v)));
            }
        }
        let mut request = Request::builder()
            .method(Method::GET)
            .uri(url.trim_end_matches(['&', '?']));
        if let Some(creds) = &self.credentials {
            request = request.header(header::AUTHORIZATION, creds.basic());
        }
        let request = request
            .body(Full::new(Bytes::new()))
            .map_err(|e| auth_fail(e.to_string()))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| auth_fail(format!("token request: {e}")))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| auth_fail(e.to_string()))?
            .to_bytes();
        if !status.is_success() {
            return Err(auth_fail(format!("the token service answered {status}")));
        }
        let token: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| auth_fail(format!("the token answer is not JSON: {e}")))?;
        let token = token["token"]
            .as_str()
            .or_else(|| token["access_token"].as_str())
            .ok_or_else(|| auth_fail("the token answer has no token".into()))?;
        Ok(format!("Bearer {token}"))
    }
}

/// `realm="https://…",service="x",scope="a,b"` → pairs (quoted values may hold commas).
fn challenge_params(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim().trim_start_matches(',').trim().to_string();
        let (value, next) = match after.strip_prefix('"') {
            Some(q) => match q.split_once('"') {
                Some((v, n)) => (v.to_string(), n),
                None => (q.to_string(), ""),
            },
            None => match after.split_once(',') {
                Some((v, n)) => (v.to_string(), n),
                None => (after.to_string(), ""),
            },
        };
        out.push((key, value));
        rest = next.trim_start_matches(',').trim();
    }
    out
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_parse() {
        let p = challenge_params(
            r#"realm="https://auth.io/token",service="registry.io",scope="repository:a/b:pull,push""#,
        );
        assert_eq!(p[0], ("realm".into(), "https://auth.io/token".into()));
        assert_eq!(p[2], ("scope".into(), "repository:a/b:pull,push".into()));
        assert_eq!(
            encode("repository:a/b:pull,push"),
            "repository%3Aa%2Fb%3Apull%2Cpush"
        );
    }
}
