//! The request log's line for each admission webhook call (webhook, URL, HTTP status, outcome,
//! latency), under the target the API server's request log writes its lines to
//! (`apiserver/filters/request_log.rs`); nothing is collected unless a subscriber wants it.

use std::time::Duration;

/// The target of request events (the request log's, which re-exports it).
pub(crate) const TARGET: &str = "piceli_sim::request";

/// Whether a subscriber asks for request events.
pub(crate) fn enabled() -> bool {
    tracing::enabled!(target: TARGET, tracing::Level::INFO)
}

/// One admission webhook call of a request.
pub(crate) struct WebhookCall<'a> {
    /// The webhook's name (`webhooks[].name`).
    pub webhook: &'a str,
    /// A mutating webhook (else validating).
    pub mutating: bool,
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'a str,
    /// The plural of the admitted resource.
    pub resource: &'a str,
    /// Where the call went, as configured.
    pub url: &'a str,
    /// The HTTP status of the webhook's response, if one came.
    pub status: Option<u16>,
    /// `allowed`, `patched`, `denied`, `failed`, or `ignored` (failed under `failurePolicy: Ignore`).
    pub outcome: &'a str,
    /// Why the call failed.
    pub error: Option<&'a str>,
    /// From sending the AdmissionReview to having the verdict.
    pub latency: Duration,
}

/// Logs one webhook call (the caller checks [`enabled`] first); `status` and `error` are left out when
/// there is none.
pub(crate) fn webhook_call(call: &WebhookCall<'_>) {
    tracing::info!(
        target: TARGET,
        webhook = %call.webhook,
        kind = %if call.mutating { "mutating" } else { "validating" },
        operation = %call.operation,
        resource = %call.resource,
        url = %call.url,
        status = call.status,
        outcome = %call.outcome,
        error = call.error,
        latency_us = call.latency.as_micros() as u64,
        "admission webhook"
    );
}
