//! The request log, as kube-apiserver's httplog writes one line per request: a `tracing` event with
//! target `piceli_sim::request` (verb, URI, status, latency to the response head, user agent).
//! Nothing is collected unless a subscriber wants the target; `piceli sim serve` installs one on
//! stderr when `PICELI_SIM_LOG=requests` (the background server of `sim start` writes it to
//! DIR/sim.log).

use std::sync::Arc;
use std::time::Instant;

use http::{Request, header};
use hyper::body::Incoming;

use crate::apiserver::handlers::handle;
use crate::apiserver::http::Resp;
use crate::app::App;

/// The target of request events.
pub(crate) const TARGET: &str = "piceli_sim::request";

/// The environment variable that turns the log on for `serve` (`requests`).
pub(crate) const ENV: &str = "PICELI_SIM_LOG";

/// Handles a request, logging it when a subscriber asks for request events.
pub(crate) async fn logged(app: Arc<App>, req: Request<Incoming>) -> Resp {
    if !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
        return handle(app, req).await;
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
    let resp = handle(app, req).await;
    tracing::info!(
        target: TARGET,
        verb = %verb,
        uri = %uri,
        status = resp.status().as_u16(),
        latency_us = started.elapsed().as_micros() as u64,
        user_agent = %agent,
        "HTTP"
    );
    resp
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
