//! Keep-alive connections to webhooks: idle TLS connections kept per webhook endpoint (address,
//! server name and TLS configuration, so a changed `caBundle` never reuses a connection verified
//! against the old one), at most [`MAX_IDLE_PER_ENDPOINT`] each, dropped after [`IDLE_FOR`], as Go's
//! `http.Transport` does for kube-apiserver's webhook clients.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A TLS connection to a webhook.
pub type Stream = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// Idle connections kept per endpoint.
const MAX_IDLE_PER_ENDPOINT: usize = 8;

/// How long an idle connection is kept (Go's default `IdleConnTimeout` is 90 s; servers often close
/// sooner, so less).
const IDLE_FOR: Duration = Duration::from_secs(30);

/// Where a pooled connection goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    addr: SocketAddr,
    server_name: String,
    tls: usize,
}

impl Endpoint {
    pub fn new(addr: SocketAddr, server_name: &str, tls: &Arc<rustls::ClientConfig>) -> Endpoint {
        Endpoint {
            addr,
            server_name: server_name.to_string(),
            tls: Arc::as_ptr(tls) as usize,
        }
    }
}

type Idle = HashMap<Endpoint, Vec<(Instant, Stream)>>;

fn idle() -> &'static Mutex<Idle> {
    static IDLE: OnceLock<Mutex<Idle>> = OnceLock::new();
    IDLE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// An idle connection to `endpoint`, the most recently used first.
pub fn take(endpoint: &Endpoint) -> Option<Stream> {
    let mut all = idle().lock().ok()?;
    let list = all.get_mut(endpoint)?;
    let now = Instant::now();
    list.retain(|(at, _)| now.duration_since(*at) < IDLE_FOR);
    list.pop().map(|(_, s)| s)
}

/// Keeps a connection whose last response was complete and did not ask to close.
pub fn put(endpoint: Endpoint, stream: Stream) {
    let Ok(mut all) = idle().lock() else {
        return;
    };
    let list = all.entry(endpoint).or_default();
    if list.len() >= MAX_IDLE_PER_ENDPOINT {
        list.remove(0);
    }
    list.push((Instant::now(), stream));
}
