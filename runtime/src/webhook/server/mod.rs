//! The webhook server: HTTPS (rustls) with HTTP/1.1 keep-alive and HTTP/2 (hyper), handshakes in their
//! own tasks, certificate files reloaded when they change, bounded bodies, handshake, header and idle
//! timeouts (an idle keep-alive connection stays open longer than the API server's pool keeps it), and a
//! graceful shutdown that finishes in-flight requests.

mod http;
#[cfg(test)]
mod log_tests;
mod tls;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use piceli_net::conn_timeouts::{Answering, Limits, Phases, Watched};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use self::http::{Shared, handle};
use self::tls::ReloadingCert;
use super::error::ServeError;
use super::registry::Webhooks;

/// Where the server listens and how it guards itself.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Default `0.0.0.0:8443`.
    pub listen: SocketAddr,
    /// PEM certificate chain; default `/etc/piceli/tls/tls.crt` (where the operator's Deployment mounts
    /// its TLS Secret).
    pub tls_cert: PathBuf,
    /// PEM private key; default `/etc/piceli/tls/tls.key`.
    pub tls_key: PathBuf,
    /// Larger AdmissionReview bodies get 413; default 8 MiB (an object and its old version).
    pub max_body_bytes: usize,
    /// A client must send a request's headers within this, counted from its first byte; default 10 s.
    pub header_timeout: Duration,
    /// An HTTP/1.1 keep-alive connection may wait this long for its next request; default 120 s, longer
    /// than the 90 s kube-apiserver keeps an idle webhook connection in its pool, so the client is the one
    /// that closes it (a server closing first races the client's next request on it).
    pub idle_timeout: Duration,
    /// A TLS handshake must finish within this; default 10 s.
    pub handshake_timeout: Duration,
    /// How often the certificate files are checked for a change; default 2 s.
    pub reload_interval: Duration,
    /// How long shutdown waits for in-flight requests; default 25 s (within Kubernetes' 30 s grace).
    pub shutdown_grace: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([0, 0, 0, 0], 8443)),
            tls_cert: PathBuf::from("/etc/piceli/tls/tls.crt"),
            tls_key: PathBuf::from("/etc/piceli/tls/tls.key"),
            max_body_bytes: 8 << 20,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            handshake_timeout: Duration::from_secs(10),
            reload_interval: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(25),
        }
    }
}

/// A bound webhook server; [`Server::run`] serves until the shutdown future completes.
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
    certificate: Arc<ReloadingCert>,
    acceptor: TlsAcceptor,
    options: ServeOptions,
}

impl Server {
    /// Checks the webhooks, loads the certificate and binds the address.
    pub async fn bind(webhooks: Webhooks, options: ServeOptions) -> Result<Server, ServeError> {
        let problems = webhooks.problems();
        if !problems.is_empty() {
            return Err(ServeError::Webhooks(problems));
        }
        let provider = tls::provider();
        let certificate = Arc::new(ReloadingCert::load(
            &options.tls_cert,
            &options.tls_key,
            provider.clone(),
        )?);
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ServeError::Tls {
                path: options.tls_cert.clone(),
                reason: e.to_string(),
            })?
            .with_no_client_auth()
            .with_cert_resolver(certificate.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let listener =
            TcpListener::bind(options.listen)
                .await
                .map_err(|source| ServeError::Bind {
                    addr: options.listen,
                    source,
                })?;
        let shared = Arc::new(Shared {
            routes: webhooks.into_table(),
            metrics: Default::default(),
            max_body_bytes: options.max_body_bytes,
            ready: false.into(),
        });
        Ok(Server {
            listener,
            shared,
            certificate,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            options,
        })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.options.listen)
    }

    /// Serves until `shutdown` completes, then stops accepting, lets in-flight requests finish (up to
    /// [`ServeOptions::shutdown_grace`]) and returns.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ServeError> {
        let Server {
            listener,
            shared,
            certificate,
            acceptor,
            options,
        } = self;
        let reloader = tokio::spawn(reload_loop(
            certificate,
            shared.clone(),
            options.reload_interval,
        ));
        let builder = Arc::new(Protocols::new());
        let limits = Limits {
            header: options.header_timeout,
            idle: options.idle_timeout,
        };
        let graceful = GracefulShutdown::new();
        // Handshakes still running at shutdown are dropped rather than waited for.
        let (stopping, handshakes_stop) = tokio::sync::watch::channel(false);
        shared.ready.store(true, Ordering::Relaxed);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((tcp, _)) => {
                        shared.metrics.connections.fetch_add(1, Ordering::Relaxed);
                        tokio::spawn(connection(
                            tcp,
                            acceptor.clone(),
                            builder.clone(),
                            shared.clone(),
                            graceful.watcher(),
                            handshakes_stop.clone(),
                            options.handshake_timeout,
                            limits,
                        ));
                    }
                    // Out of file descriptors and the like: wait a little instead of spinning.
                    Err(e) => {
                        tracing::warn!(error = %e, "webhook server: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
        }
        shared.ready.store(false, Ordering::Relaxed);
        drop(listener);
        let _ = stopping.send(true);
        if tokio::time::timeout(options.shutdown_grace, graceful.shutdown())
            .await
            .is_err()
        {
            tracing::warn!(
                grace_ms = u64::try_from(options.shutdown_grace.as_millis()).unwrap_or(u64::MAX),
                "webhook server: requests still in flight after the shutdown grace; stopping anyway"
            );
        }
        reloader.abort();
        Ok(())
    }
}

/// Binds and serves `webhooks` until SIGTERM or Ctrl-C.
pub async fn serve(webhooks: Webhooks, options: ServeOptions) -> Result<(), ServeError> {
    let server = Server::bind(webhooks, options).await?;
    tracing::info!(
        webhooks = server.shared.routes.len(),
        address = %server.local_addr(),
        "serving webhooks over HTTPS"
    );
    server.run(shutdown_signal()).await
}

/// Completes on SIGTERM (what the kubelet sends) or Ctrl-C.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The HTTP connection builders: by the protocol ALPN agreed on, or detected from the first bytes when
/// the client offered none.
struct Protocols {
    detect: auto::Builder<TokioExecutor>,
    http1: auto::Builder<TokioExecutor>,
    http2: auto::Builder<TokioExecutor>,
}

impl Protocols {
    fn new() -> Protocols {
        let mut detect = auto::Builder::new(TokioExecutor::new());
        // hyper's header timeout runs from the end of the previous response, so it would also close idle
        // keep-alive connections: off, and `Phases` times heads and idleness instead.
        detect
            .http1()
            .timer(TokioTimer::new())
            .header_read_timeout(None)
            .keep_alive(true);
        detect.http2().timer(TokioTimer::new());
        Protocols {
            http1: detect.clone().http1_only(),
            http2: detect.clone().http2_only(),
            detect,
        }
    }

    fn for_alpn(&self, alpn: Option<&[u8]>) -> &auto::Builder<TokioExecutor> {
        match alpn {
            Some(b"h2") => &self.http2,
            Some(_) => &self.http1,
            None => &self.detect,
        }
    }
}

/// One client: the TLS handshake (bounded in time, off the accept loop), then HTTP/1.1 or HTTP/2. An
/// HTTP/1.1 connection is closed once it passes its limits (a head too slow, idle too long); an HTTP/2
/// one (pings are not requests) lives until the client closes it. At shutdown each connection finishes
/// its in-flight requests; `watcher`, held until then, is what the server waits for.
#[allow(clippy::too_many_arguments)]
async fn connection(
    tcp: TcpStream,
    acceptor: TlsAcceptor,
    builder: Arc<Protocols>,
    shared: Arc<Shared>,
    watcher: Watcher,
    mut stopping: tokio::sync::watch::Receiver<bool>,
    handshake_timeout: Duration,
    limits: Limits,
) {
    let _ = tcp.set_nodelay(true);
    let handshake = tokio::time::timeout(handshake_timeout, acceptor.accept(tcp));
    let tls = tokio::select! {
        done = handshake => done,
        _ = stopping.wait_for(|stop| *stop) => return,
    };
    let tls = match tls {
        Ok(Ok(tls)) => tls,
        _ => {
            shared
                .metrics
                .handshake_failures
                .fetch_add(1, Ordering::Relaxed);
            return;
        }
    };
    let http2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    let builder = builder.for_alpn(tls.get_ref().1.alpn_protocol());
    let phases = Phases::new();
    let requests = phases.clone();
    let service = service_fn(move |req| {
        let answering = requests.request();
        let response = handle(shared.clone(), req);
        async move { Ok::<_, Infallible>(response.await?.map(|b| Answering::new(b, answering))) }
    });
    let conn = builder.serve_connection(TokioIo::new(Watched::new(tls, phases.clone())), service);
    let mut conn = std::pin::pin!(conn);
    let expired = async {
        match http2 {
            true => std::future::pending().await,
            false => phases.expired(limits).await,
        }
    };
    let past_a_limit = tokio::select! {
        _ = conn.as_mut() => return drop(watcher),
        () = expired => true,
        _ = stopping.wait_for(|stop| *stop) => false,
    };
    // An idle HTTP/1.1 connection closes at once. At shutdown, one with requests in flight closes after
    // answering them (the server's shutdown grace bounds that); past a limit, one in the middle of a head
    // after at most a second. An HTTP/2 connection gets a GOAWAY; hyper then waits for the client's
    // answer to a PING before it closes, which a client that polls its pooled connections only while it
    // makes a call (the local cluster's) never sends: once its requests are answered and it stayed
    // quiet for [`H2_LINGER`], the server closes it.
    conn.as_mut().graceful_shutdown();
    match (past_a_limit, http2) {
        (true, _) => drop(tokio::time::timeout(Duration::from_secs(1), conn).await),
        (false, true) => {
            tokio::select! {
                _ = conn.as_mut() => tracing::debug!("webhook server: the client closed its HTTP/2 connection after the GOAWAY"),
                () = phases.quiet(H2_LINGER) => tracing::debug!("webhook server: closing an idle HTTP/2 connection the client left open after the GOAWAY"),
            }
        }
        (false, false) => drop(conn.await),
    }
    drop(watcher);
}

/// How long an HTTP/2 connection with nothing in flight is kept at shutdown after its GOAWAY: time to
/// flush the last responses and for a client that answers to close it itself.
const H2_LINGER: Duration = Duration::from_millis(250);

async fn reload_loop(certificate: Arc<ReloadingCert>, shared: Arc<Shared>, every: Duration) {
    let mut failing = false;
    loop {
        tokio::time::sleep(every).await;
        match certificate.reload_if_changed() {
            Ok(true) => {
                failing = false;
                shared
                    .metrics
                    .certificate_reloads
                    .fetch_add(1, Ordering::Relaxed);
                tracing::info!("webhook server: certificate reloaded");
            }
            Ok(false) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "webhook server: keeping the current certificate");
            }
            Err(_) => {}
        }
    }
}
