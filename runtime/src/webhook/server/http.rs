//! Routing of one HTTP request: the webhook paths, `/healthz`, `/readyz` and `/metrics`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use tracing::Instrument;

use crate::webhook::metrics::{ServerMetrics, render};
use crate::webhook::registry::Route;

/// What every connection shares.
pub(crate) struct Shared {
    pub routes: HashMap<String, Arc<Route>>,
    pub metrics: ServerMetrics,
    pub max_body_bytes: usize,
    /// False before the listener runs and once shutdown started.
    pub ready: AtomicBool,
}

pub(crate) async fn handle(
    shared: Arc<Shared>,
    req: hyper::Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (head, incoming) = req.into_parts();
    let path = head.uri.path();
    let Some(route) = shared.routes.get(path).cloned() else {
        return Ok(match (&head.method, path) {
            (&Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
            (&Method::GET, "/readyz") => match shared.ready.load(Ordering::Relaxed) {
                true => text(StatusCode::OK, "ready\n"),
                false => text(StatusCode::SERVICE_UNAVAILABLE, "shutting down\n"),
            },
            (&Method::GET, "/metrics") => Response::builder()
                .header(header::CONTENT_TYPE, "text/plain; version=0.0.4")
                .body(Full::new(Bytes::from(render(
                    &shared.metrics,
                    shared.routes.values().map(|r| &**r),
                ))))
                .unwrap_or_default(),
            _ => text(StatusCode::NOT_FOUND, &format!("no webhook at {path}\n")),
        });
    };
    if head.method != Method::POST {
        return Ok(text(
            StatusCode::METHOD_NOT_ALLOWED,
            "webhooks take POST with an AdmissionReview\n",
        ));
    }
    let body = match Limited::new(incoming, shared.max_body_bytes)
        .collect()
        .await
    {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            route.metrics.malformed();
            return Ok(text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "the AdmissionReview is larger than {} bytes\n",
                    shared.max_body_bytes
                ),
            ));
        }
        Err(e) => return Ok(text(StatusCode::BAD_REQUEST, &format!("{e}\n"))),
    };
    Ok(admit(&route, path, &body).await)
}

/// Answers one AdmissionReview `body` for `route` (served at `path`) in its `admission` span: the
/// fields `webhook` (the path) and `uid` (recorded once the review is read, `endpoint::finish`).
pub(crate) async fn admit(route: &Route, path: &str, body: &[u8]) -> Response<Full<Bytes>> {
    let span = tracing::info_span!("admission", webhook = path, uid = tracing::field::Empty);
    review(route, body).instrument(span).await
}

async fn review(route: &Route, body: &[u8]) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let work = match route.endpoint.begin(body) {
        Ok(work) => work,
        Err(malformed) => {
            route.metrics.malformed();
            tracing::debug!(error = %malformed, "a malformed AdmissionReview was answered 400");
            return text(StatusCode::BAD_REQUEST, &format!("{malformed}\n"));
        }
    };
    let decision = work.await;
    route.metrics.answered(
        decision.dry_run,
        decision.allowed,
        decision.failure.as_ref().map(|(kind, _)| *kind),
        started.elapsed(),
    );
    if let Some((kind, message)) = &decision.failure {
        tracing::warn!(
            failure = kind.label(),
            dry_run = decision.dry_run,
            allowed = decision.allowed,
            "{message}"
        );
    }
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(decision.body)))
        .unwrap_or_default()
}

fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap_or_default()
}
