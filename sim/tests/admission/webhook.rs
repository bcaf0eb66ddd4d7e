//! A real admission webhook server for the tests: HTTPS (tokio + rustls) with a fresh CA and a
//! serving certificate for 127.0.0.1 and the given DNS names, answering AdmissionReview v1 with what
//! a handler decides, optionally after a delay, with a Content-Length or (as Go's `net/http` does for
//! bodies over its 2 KiB buffer) chunked. Every request it receives is kept, every TLS connection it
//! accepts counted.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use http_body_util::{BodyExt, Either, Full, StreamBody};
use hyper::body::Bytes;
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};

/// Decides the `response` (without `uid`) for an AdmissionReview `request`.
pub type Handler = Arc<dyn Fn(&Value) -> Value + Send + Sync>;

pub struct WebhookServer {
    pub addr: SocketAddr,
    /// PEM of the CA that signed the serving certificate.
    pub ca_pem: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
    /// TLS connections accepted so far.
    pub connections: Arc<std::sync::atomic::AtomicUsize>,
    /// Requests received over HTTP/2.
    pub http2_requests: Arc<std::sync::atomic::AtomicUsize>,
    runtime: Option<tokio::runtime::Runtime>,
}

/// A CA certificate (PEM) and its issuer.
pub fn new_ca() -> (String, Issuer<'static, KeyPair>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().expect("ca key");
    let cert = params.self_signed(&key).expect("ca cert");
    (cert.pem(), Issuer::new(params, key))
}

/// How a server answers.
#[derive(Default)]
struct How {
    /// Before each answer.
    delay: Duration,
    /// Chunked bodies instead of a Content-Length.
    chunked: bool,
    /// Close connections idle for this long.
    close_idle_after: Option<Duration>,
    /// Offer only HTTP/2 (ALPN `h2`) and serve it.
    h2: bool,
}

/// A serving certificate for 127.0.0.1 and `dns_names` signed by a fresh CA: the chain, its key and
/// the CA's PEM.
fn issue(
    dns_names: &[&str],
) -> (
    Vec<rustls::pki_types::CertificateDer<'static>>,
    PrivateKeyDer<'static>,
    String,
) {
    let (ca_pem, issuer) = new_ca();
    let names: Vec<String> = dns_names.iter().map(|s| s.to_string()).collect();
    let mut params = CertificateParams::new(names).expect("leaf params");
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::IpAddr::V4(
            std::net::Ipv4Addr::LOCALHOST,
        )));
    let key = KeyPair::generate().expect("leaf key");
    let leaf = params.signed_by(&key, &issuer).expect("leaf cert");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (vec![leaf.der().clone()], key, ca_pem)
}

impl WebhookServer {
    /// Starts a server answering with `handler` after `delay`.
    pub fn start(dns_names: &[&str], delay: Duration, handler: Handler) -> WebhookServer {
        let (chain, key, ca_pem) = issue(dns_names);
        let how = How {
            delay,
            ..How::default()
        };
        Self::serve(chain, key, ca_pem, how, handler)
    }

    /// Starts a server for 127.0.0.1 answering with `handler` in chunked responses (no Content-Length).
    pub fn start_chunked(handler: Handler) -> WebhookServer {
        let (chain, key, ca_pem) = issue(&[]);
        let how = How {
            chunked: true,
            ..How::default()
        };
        Self::serve(chain, key, ca_pem, how, handler)
    }

    /// Starts a server for 127.0.0.1 speaking only HTTP/2 (as Go servers offer it).
    pub fn start_h2(handler: Handler) -> WebhookServer {
        let (chain, key, ca_pem) = issue(&[]);
        let how = How {
            h2: true,
            ..How::default()
        };
        Self::serve(chain, key, ca_pem, how, handler)
    }

    /// Starts a server for 127.0.0.1 that closes a connection idle for `after` (as servers with a
    /// keep-alive timeout do).
    pub fn start_closing_idle(after: Duration, handler: Handler) -> WebhookServer {
        let (chain, key, ca_pem) = issue(&[]);
        let how = How {
            close_idle_after: Some(after),
            ..How::default()
        };
        Self::serve(chain, key, ca_pem, how, handler)
    }

    /// Starts a server with a given certificate and key (PEM), e.g. ones cert-manager issued.
    pub fn start_with_pem(cert_pem: &str, key_pem: &str, handler: Handler) -> WebhookServer {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("key PEM");
        Self::serve(chain, key, String::new(), How::default(), handler)
    }

    fn serve(
        chain: Vec<rustls::pki_types::CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        ca_pem: String,
        how: How,
        handler: Handler,
    ) -> WebhookServer {
        let How {
            delay,
            chunked,
            close_idle_after,
            h2,
        } = how;
        let provider = Arc::new(piceli_net::tls::provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocols")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("server config");
        config.alpn_protocols = vec![if h2 {
            b"h2".to_vec()
        } else {
            b"http/1.1".to_vec()
        }];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let accepted = connections.clone();
        let http2_requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let over_h2 = http2_requests.clone();
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, handler, seen) = (acceptor.clone(), handler.clone(), seen.clone());
                let (accepted, over_h2) = (accepted.clone(), over_h2.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let service = hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (handler, seen) = (handler.clone(), seen.clone());
                        if req.version() == hyper::Version::HTTP_2 {
                            over_h2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        async move {
                            let body = req.into_body().collect().await?.to_bytes();
                            let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                            let request = review.get("request").cloned().unwrap_or(Value::Null);
                            seen.lock().expect("requests").push(request.clone());
                            // Not even a zero sleep: it waits for the timer's next 1 ms tick.
                            if !delay.is_zero() {
                                tokio::time::sleep(delay).await;
                            }
                            let mut response = handler(&request);
                            response["uid"] = request.get("uid").cloned().unwrap_or(Value::Null);
                            let out = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response});
                            let out = Bytes::from(out.to_string());
                            let body = if chunked {
                                let frames = futures_util::stream::iter([Ok::<_, hyper::Error>(Frame::data(out))]);
                                Either::Right(StreamBody::new(frames))
                            } else {
                                Either::Left(Full::new(out))
                            };
                            let mut resp = hyper::Response::new(body);
                            resp.headers_mut().insert(
                                hyper::header::CONTENT_TYPE,
                                hyper::header::HeaderValue::from_static("application/json"),
                            );
                            Ok::<_, hyper::Error>(resp)
                        }
                    });
                    if h2 {
                        let _ = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                            .serve_connection(TokioIo::new(tls), service)
                            .await;
                        return;
                    }
                    let mut builder = hyper::server::conn::http1::Builder::new();
                    if let Some(after) = close_idle_after {
                        // Also bounds the wait for the next request on a kept-alive connection.
                        builder.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(after);
                    }
                    let _ = builder
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        WebhookServer {
            addr,
            ca_pem,
            requests,
            connections,
            http2_requests,
            runtime: Some(runtime),
        }
    }

    /// `caBundle` for this server.
    pub fn ca_bundle(&self) -> String {
        b64(&self.ca_pem)
    }

    /// `https://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The requests received so far.
    pub fn seen(&self) -> Vec<Value> {
        self.requests.lock().expect("requests").clone()
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A JSONPatch response allowing the request.
pub fn patch_response(ops: Value) -> Value {
    json!({"allowed": true, "patchType": "JSONPatch", "patch": b64(&ops.to_string())})
}
