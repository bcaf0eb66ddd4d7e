//! `serve --listen ADDR` for controllers: `/healthz` (the process runs), `/readyz` (caches synced, or a
//! standby) and `/metrics` (Prometheus text) over plain HTTP/1.1.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use super::metrics::Metrics;
use crate::webhook::ServeError;

/// The health and metrics listener, bound.
pub struct HealthServer {
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
}

impl HealthServer {
    /// Binds `addr` (port 0 picks a free one).
    pub async fn bind(addr: SocketAddr, metrics: Arc<Metrics>) -> Result<HealthServer, ServeError> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        Ok(HealthServer { listener, metrics })
    }

    /// The bound address.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `shutdown` resolves.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                _ = &mut shutdown => return,
                accepted = self.listener.accept() => accepted,
            };
            let Ok((stream, _)) = accepted else { continue };
            let metrics = self.metrics.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let metrics = metrics.clone();
                    async move { Ok::<_, Infallible>(answer(&metrics, &req)) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response
}

fn answer(metrics: &Metrics, req: &hyper::Request<Incoming>) -> Response<Full<Bytes>> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
        (&Method::GET, "/readyz") if metrics.ready() => text(StatusCode::OK, "ready\n"),
        (&Method::GET, "/readyz") => text(StatusCode::SERVICE_UNAVAILABLE, "caches not synced\n"),
        (&Method::GET, "/metrics") => {
            let mut response = text(StatusCode::OK, &metrics.render());
            if let Ok(v) = header::HeaderValue::from_str("text/plain; version=0.0.4") {
                response.headers_mut().insert(header::CONTENT_TYPE, v);
            }
            response
        }
        (_, path) => text(StatusCode::NOT_FOUND, &format!("nothing at {path}\n")),
    }
}
