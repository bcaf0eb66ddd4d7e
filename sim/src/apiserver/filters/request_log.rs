//! The request log filter, as kube-apiserver's httplog writes one line per request: a `tracing` event with
//! target `piceli_sim::request` (verb, URI, status, latency to the response head, user agent), and one
//! per admission webhook call the requests make (webhook, URL, HTTP status, outcome, latency;
//! written by `admission/log.rs`, which owns the target both share).
//! Nothing is collected unless a subscriber wants the target; `piceli sim serve` installs one on
//! stderr when `PICELI_SIM_LOG=requests` (the background server of `sim start` writes it to
//! DIR/sim.log).

use std::convert::Infallible;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::future::{BoxFuture, Either};
use http::{Request, header};
use hyper::body::Incoming;
use tower::{Layer, Service};

use crate::apiserver::http::Resp;

pub(crate) use crate::admission::log::{TARGET, enabled};

/// The environment variable that turns the log on for `serve` (`requests`).
pub(crate) const ENV: &str = "PICELI_SIM_LOG";

/// Wraps a service in [`RequestLog`].
#[derive(Clone, Copy)]
pub(crate) struct RequestLogLayer;

impl<S> Layer<S> for RequestLogLayer {
    type Service = RequestLog<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestLog { inner }
    }
}

/// Logs each request with its answer when a subscriber asks for request events (kube-apiserver's
/// `WithHTTPLogging`); otherwise only hands it on.
#[derive(Clone)]
pub(crate) struct RequestLog<S> {
    inner: S,
}

impl<S> Service<Request<Incoming>> for RequestLog<S>
where
    S: Service<Request<Incoming>, Response = Resp, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Resp;
    type Error = Infallible;
    /// The inner future as is, or boxed with what the log line needs when the log is on.
    type Future = Either<S::Future, BoxFuture<'static, Result<Resp, Infallible>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<Incoming>) -> Self::Future {
        if !enabled() {
            return Either::Left(self.inner.call(req));
        }
        let started = Instant::now();
        let verb = req.method().clone();
        let uri = req.uri().clone();
        let agent = req
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let answer = self.inner.call(req);
        Either::Right(Box::pin(async move {
            let resp = answer.await?;
            tracing::info!(
                target: TARGET,
                verb = %verb,
                uri = %uri,
                status = resp.status().as_u16(),
                latency_us = started.elapsed().as_micros() as u64,
                user_agent = %agent,
                "HTTP"
            );
            Ok(resp)
        }))
    }
}

/// Prints request events on stderr when `PICELI_SIM_LOG=requests` (any other value: nothing), for
/// `serve`; a process that already has a global subscriber keeps it.
pub(crate) fn install_from_env() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    if std::env::var(ENV).as_deref() != Ok("requests") {
        return;
    }
    let only_requests =
        tracing_subscriber::filter::Targets::new().with_target(TARGET, tracing::Level::INFO);
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .with(only_requests)
        .try_init();
}
