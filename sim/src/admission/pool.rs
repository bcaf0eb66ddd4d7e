//! Keep-alive connections to webhooks: one hyper client per webhook and server name, whose pool keeps
//! idle TLS connections per dialled address, at most [`MAX_IDLE_PER_ADDRESS`] each, dropped after
//! [`IDLE_FOR`] (checked when a call looks for one: the client's runtime runs only while a call waits,
//! `client.rs`), as Go's `http.Transport` does for kube-apiserver's webhook clients. A webhook's pool
//! lives in the parsed configuration (`config.rs`), so a changed `caBundle` never reuses a connection
//! verified against the old one.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::Uri;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;

use super::first_bytes::FirstBytes;

/// Idle connections kept per dialled address.
const MAX_IDLE_PER_ADDRESS: usize = 8;

/// How long an idle connection is kept (Go's default `IdleConnTimeout` is 90 s; servers often close
/// sooner, so less).
const IDLE_FOR: Duration = Duration::from_secs(30);

/// The HTTP client of one webhook and server name.
pub type HttpClient = Client<Connector, Full<Bytes>>;

/// The connections of one webhook: its TLS configuration (trusting only its `caBundle`) and a
/// client per server name the calls verify (one in practice: the URL's host or `NAME.NAMESPACE.svc`).
pub struct Pool {
    tls: tokio_rustls::TlsConnector,
    clients: Mutex<HashMap<String, HttpClient>>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").finish_non_exhaustive()
    }
}

impl Pool {
    /// A pool for a webhook trusting what `tls` trusts.
    pub fn new(tls: Arc<rustls::ClientConfig>) -> Pool {
        Pool {
            tls: tokio_rustls::TlsConnector::from(tls),
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client whose connections verify `server_name` (a DNS name or an IP address).
    pub fn client(&self, server_name: &str) -> Result<HttpClient, String> {
        let mut clients = self
            .clients
            .lock()
            .map_err(|_| "webhook connection pool lock poisoned".to_string())?;
        if let Some(c) = clients.get(server_name) {
            return Ok(c.clone());
        }
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("invalid server name: {e}"))?;
        let connector = Connector {
            tls: self.tls.clone(),
            server_name: name,
        };
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE_FOR)
            .pool_max_idle_per_host(MAX_IDLE_PER_ADDRESS)
            .pool_timer(TokioTimer::new())
            .build(connector);
        clients.insert(server_name.to_string(), client.clone());
        Ok(client)
    }
}

/// Dials the address that is the authority of the request URI (resolved beforehand by `target.rs`)
/// and verifies the webhook's server name over TLS.
#[derive(Clone)]
pub struct Connector {
    tls: tokio_rustls::TlsConnector,
    server_name: ServerName<'static>,
}

/// Why a connection could not be made, worded as Go's `net/http` words it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConnectError(pub String);

impl tower_service::Service<Uri> for Connector {
    type Response = TlsConnection;
    type Error = ConnectError;
    type Future = Pin<Box<dyn Future<Output = Result<TlsConnection, ConnectError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), ConnectError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (tls, name) = (self.tls.clone(), self.server_name.clone());
        Box::pin(async move {
            let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
            let addr: SocketAddr = authority
                .parse()
                .map_err(|_| ConnectError(format!("invalid webhook address {authority:?}")))?;
            let tcp = TcpStream::connect(addr)
                .await
                .map_err(|e| ConnectError(format!("dial tcp {addr}: connect: {}", go_io(&e))))?;
            let _ = tcp.set_nodelay(true);
            let stream = tls
                .connect(name, FirstBytes::new(tcp))
                .into_fallible()
                .await
                .map_err(|(e, tcp)| {
                    ConnectError(tcp.not_tls().map_or_else(|| tls_or_io(&e), String::from))
                })?;
            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            Ok(TlsConnection {
                io: TokioIo::new(stream),
                h2,
            })
        })
    }
}

/// A TLS connection to a webhook, as hyper reads and writes it (not vectored: hyper gathers a request's
/// head and body into one buffer, which goes out as one TLS record).
pub struct TlsConnection {
    io: TokioIo<tokio_rustls::client::TlsStream<FirstBytes<TcpStream>>>,
    /// The server chose HTTP/2 (ALPN `h2`).
    h2: bool,
}

impl Connection for TlsConnection {
    fn connected(&self) -> Connected {
        if self.h2 {
            Connected::new().negotiated_h2()
        } else {
            Connected::new()
        }
    }
}

impl hyper::rt::Read for TlsConnection {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for TlsConnection {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Go's wording of common socket errors.
fn go_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::ConnectionReset => "connection reset by peer".into(),
        _ => e.to_string(),
    }
}

/// A TLS failure worded like Go's `crypto/tls`, or a socket error.
pub fn tls_or_io(e: &io::Error) -> String {
    let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
        return go_io(e);
    };
    use rustls::CertificateError as C;
    let x509 = match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            // Worded by the verifier, as Go's crypto/x509 (`go_x509.rs`).
            C::Other(o) if o.0.downcast_ref::<super::go_x509::GoX509>().is_some() => o.to_string(),
            C::UnknownIssuer | C::BadSignature => {
                "x509: certificate signed by unknown authority".into()
            }
            C::Expired | C::NotValidYet => {
                "x509: certificate has expired or is not yet valid".into()
            }
            other => format!("x509: {other:?}"),
        },
        other => return format!("remote error: tls: {other}"),
    };
    format!("tls: failed to verify certificate: {x509}")
}
