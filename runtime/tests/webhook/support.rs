//! Shared by the webhook server tests: certificates written to files, a server on loopback, and a real
//! HTTPS client (tokio-rustls + hyper's HTTP/1.1 and HTTP/2 client connections).

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use piceli_runtime::webhook::{ServeOptions, Server, Webhooks};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// A CA that signs serving certificates for 127.0.0.1 into `dir/tls.crt` and `dir/tls.key`.
pub struct Certs {
    pub dir: tempfile::TempDir,
    pub ca_pem: String,
    pub ca_der: CertificateDer<'static>,
    issuer: Issuer<'static, KeyPair>,
}

impl Certs {
    pub fn new() -> Certs {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let key = KeyPair::generate().expect("ca key");
        let ca = params.self_signed(&key).expect("ca cert");
        let certs = Certs {
            dir: tempfile::tempdir().expect("cert dir"),
            ca_pem: ca.pem(),
            ca_der: ca.der().clone(),
            issuer: Issuer::new(params, key),
        };
        certs.issue();
        certs
    }

    /// Writes a new serving certificate and key (as cert-manager does on renewal); returns the
    /// certificate's DER.
    pub fn issue(&self) -> Vec<u8> {
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
        params
            .subject_alt_names
            .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
        let key = KeyPair::generate().expect("key");
        let leaf = params.signed_by(&key, &self.issuer).expect("leaf");
        std::fs::write(self.cert(), leaf.pem()).expect("write cert");
        std::fs::write(self.key(), key.serialize_pem()).expect("write key");
        leaf.der().to_vec()
    }

    pub fn cert(&self) -> PathBuf {
        self.dir.path().join("tls.crt")
    }

    pub fn key(&self) -> PathBuf {
        self.dir.path().join("tls.key")
    }

    /// A client configuration trusting this CA, offering `alpn`.
    pub fn connector(&self, alpn: &[&[u8]]) -> TlsConnector {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca_der.clone()).expect("root");
        let provider = Arc::new(piceli_net::tls::provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        TlsConnector::from(Arc::new(config))
    }
}

/// A server running on a loopback port until dropped (or [`Running::stop`]).
pub struct Running {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Serves `hooks` with `certs`, reloading the files every 50 ms.
    pub async fn start(hooks: Webhooks, certs: &Certs) -> Running {
        Running::start_with(hooks, options(certs)).await
    }

    pub async fn start_with(hooks: Webhooks, options: ServeOptions) -> Running {
        let server = Server::bind(hooks, options).await.expect("server binds");
        let addr = server.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server
                .run(async {
                    let _ = stopped.await;
                })
                .await
                .expect("server runs");
        });
        Running {
            addr,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Signals shutdown and waits for the server to return.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(10), task)
                .await
                .expect("the server stops within 10 s")
                .expect("server task");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

pub fn options(certs: &Certs) -> ServeOptions {
    ServeOptions {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        tls_cert: certs.cert(),
        tls_key: certs.key(),
        reload_interval: Duration::from_millis(50),
        shutdown_grace: Duration::from_secs(5),
        ..ServeOptions::default()
    }
}

/// A TLS connection to `addr`; `alpn` is what the client offers.
pub async fn tls(addr: SocketAddr, certs: &Certs, alpn: &[&[u8]]) -> TlsStream<TcpStream> {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    certs
        .connector(alpn)
        .connect(ServerName::IpAddress(addr.ip().into()), tcp)
        .await
        .expect("TLS handshake")
}

/// The certificate the server presented on a connection.
pub fn served_cert(stream: &TlsStream<TcpStream>) -> Vec<u8> {
    let (_, conn) = stream.get_ref();
    conn.peer_certificates().expect("peer certificates")[0].to_vec()
}

/// An answered request: status and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn request(method: &str, path: &str, body: Vec<u8>) -> hyper::Request<Full<Bytes>> {
    hyper::Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("request")
}

/// An HTTP/1.1 keep-alive connection.
pub struct Http1 {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    pub cert: Vec<u8>,
}

impl Http1 {
    pub async fn connect(addr: SocketAddr, certs: &Certs) -> Http1 {
        Http1::connect_offering(addr, certs, &[b"http/1.1"]).await
    }

    /// A connection whose client offers `alpn` (none: the server detects the protocol).
    pub async fn connect_offering(addr: SocketAddr, certs: &Certs, alpn: &[&[u8]]) -> Http1 {
        let stream = tls(addr, certs, alpn).await;
        let cert = served_cert(&stream);
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("http1 handshake");
        tokio::spawn(conn);
        Http1 { sender, cert }
    }

    pub async fn send(&mut self, method: &str, path: &str, body: Vec<u8>) -> Reply {
        self.sender.ready().await.expect("connection ready");
        let resp = self
            .sender
            .send_request(request(method, path, body))
            .await
            .expect("response");
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        Reply { status, body }
    }

    pub async fn post(&mut self, path: &str, body: Vec<u8>) -> Reply {
        self.send("POST", path, body).await
    }

    /// Whether the server closed the connection.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    pub async fn get(&mut self, path: &str) -> Reply {
        self.send("GET", path, Vec::new()).await
    }
}

/// An HTTP/2 connection (ALPN h2); requests on it may run concurrently.
#[derive(Clone)]
pub struct Http2 {
    sender: hyper::client::conn::http2::SendRequest<Full<Bytes>>,
}

impl Http2 {
    pub async fn connect(addr: SocketAddr, certs: &Certs) -> (Http2, Option<Vec<u8>>) {
        let stream = tls(addr, certs, &[b"h2"]).await;
        let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        let (sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await
                .expect("h2 handshake");
        tokio::spawn(conn);
        (Http2 { sender }, alpn)
    }

    pub async fn post(&self, path: &str, body: Vec<u8>) -> Reply {
        let mut sender = self.sender.clone();
        sender.ready().await.expect("ready");
        let resp = sender
            .send_request(request("POST", path, body))
            .await
            .expect("response");
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        Reply { status, body }
    }
}

/// One value of a Prometheus text line starting with `series` (name and labels, exactly).
pub fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no metric {series} in:\n{text}"))
}

/// An AdmissionReview for an `apps/v1` Deployment with these images.
pub fn deployment_review(uid: &str, images: &[&str], dry_run: bool) -> Vec<u8> {
    let containers: Vec<Value> = images
        .iter()
        .enumerate()
        .map(|(i, image)| json!({"name": format!("c{i}"), "image": image}))
        .collect();
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "web", "namespace": "shop", "operation": "CREATE",
            "userInfo": {"username": "alice"}, "dryRun": dry_run,
            "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                       "spec": {"selector": {"matchLabels": {"app": "web"}},
                                "template": {"metadata": {"labels": {"app": "web"}},
                                             "spec": {"containers": containers}}}}
        }
    })
    .to_string()
    .into_bytes()
}

/// Reads the file at `path` as text (for messages).
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}
