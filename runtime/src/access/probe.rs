//! The health probe of a forward: an HTTP/1.1 GET of its `health` path through a fresh forward to a ready
//! pod (the request `http` checks send), every few seconds; only changes are reported.

use super::Context;
use super::event::Event;
use super::spec::Spec;
use crate::checks::http;
use crate::forward;
use std::time::Duration;

/// How often a forward is probed.
pub const INTERVAL: Duration = Duration::from_secs(5);
/// How long one probe may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// One probe: `(status, what came back or why not)`. The request is the one `http` checks send.
async fn probe_once(cx: &Context, spec: &Spec, path: &str) -> (Option<u16>, String) {
    let attempt = async {
        let fwd = forward::connect(
            &cx.client,
            &cx.app,
            &cx.namespace,
            &spec.name,
            spec.port.as_ref(),
        )
        .await
        .map_err(|e| e.to_string())?;
        let host = format!("{}.{}", spec.name, cx.namespace);
        let response = http::request(fwd.stream, "GET", path, &host).await;
        fwd.forwarder.abort();
        response
    };
    match tokio::time::timeout(TIMEOUT, attempt).await {
        Ok(Ok(r)) => (Some(r.status), format!("HTTP {}", r.status)),
        Ok(Err(e)) => (None, e),
        Err(_) => (None, format!("no answer in {}s", TIMEOUT.as_secs())),
    }
}

/// Probe forever (until aborted), reporting each change of result.
pub async fn run(cx: Context, spec: Spec, path: String, emit: super::Emit) {
    let mut last: Option<(bool, Option<u16>)> = None;
    loop {
        let (status, message) = probe_once(&cx, &spec, &path).await;
        let healthy = status.is_some_and(|s| (200..400).contains(&s));
        if last != Some((healthy, status)) {
            last = Some((healthy, status));
            emit(Event::Health {
                name: spec.name.clone(),
                path: path.clone(),
                healthy,
                status,
                message,
            });
        }
        tokio::time::sleep(INTERVAL).await;
    }
}
