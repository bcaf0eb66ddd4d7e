//! One webhook path's work on a request body: read the review, run the handler (bounded in time, its
//! panics caught), and answer — the same for validating, mutating and composite mutating webhooks.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;

use super::handler::{BoxFuture, Mutator, Validator};
use super::mutation::diff;
use super::request::{AdmissionObject, MalformedReview, Request};
use super::response::{Answer, ReplyTo};

/// What the server does when a handler panics, times out or returns an error — the same choice as the
/// webhook configuration's `failurePolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Deny the request with the reason (the default, as in Kubernetes).
    #[default]
    Fail,
    /// Admit the request unchanged, with a warning carrying the reason.
    Ignore,
}

/// Per-webhook settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebhookOptions {
    /// How long the handler may take before the request is answered as failed. Keep it below the
    /// configuration's `timeoutSeconds` (default 10 s) so the API server gets the reason: default 9 s.
    pub timeout: Duration,
    /// What a failed handler's answer is.
    pub failure_policy: FailurePolicy,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        WebhookOptions {
            timeout: Duration::from_secs(9),
            failure_policy: FailurePolicy::Fail,
        }
    }
}

/// How a handler failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    Panic,
    Timeout,
    Error,
}

impl FailureKind {
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::Panic => "panic",
            FailureKind::Timeout => "timeout",
            FailureKind::Error => "error",
        }
    }
}

/// The outcome of one request, for the response and the metrics.
#[derive(Debug)]
pub(crate) struct Decision {
    pub body: Vec<u8>,
    pub allowed: bool,
    pub dry_run: bool,
    /// How the handler failed, with the reason.
    pub failure: Option<(FailureKind, String)>,
}

/// A webhook path's handler, erased over the resource type.
pub(crate) trait Endpoint: Send + Sync {
    /// Reads the review; the returned future runs the handler and never fails.
    fn begin(&self, body: &[u8]) -> Result<BoxFuture<Decision>, MalformedReview>;
}

pub(crate) struct ValidateEndpoint<T: kube::Resource> {
    pub name: Arc<str>,
    pub options: WebhookOptions,
    pub validator: Validator<T>,
}

pub(crate) struct MutateEndpoint<T: kube::Resource> {
    pub name: Arc<str>,
    pub options: WebhookOptions,
    pub mutators: Arc<[Mutator<T>]>,
}

impl<T: AdmissionObject> Endpoint for ValidateEndpoint<T> {
    fn begin(&self, body: &[u8]) -> Result<BoxFuture<Decision>, MalformedReview> {
        let (req, to, dry_run) = read::<T>(body)?;
        // Called inside the future, so that a sync handler's panic is caught with the rest.
        let call = self.validator.call.clone();
        let work = async move {
            call(req).await.map(|v| match v.allowed {
                true => Answer::allowed(v.warnings),
                false => Answer::denied(v.message.unwrap_or_default(), v.warnings),
            })
        };
        Ok(finish(self.name.clone(), self.options, to, dry_run, work))
    }
}

impl<T: AdmissionObject> Endpoint for MutateEndpoint<T> {
    fn begin(&self, body: &[u8]) -> Result<BoxFuture<Decision>, MalformedReview> {
        let (req, to, dry_run) = read::<T>(body)?;
        let work = run_chain(req, self.mutators.clone());
        Ok(finish(self.name.clone(), self.options, to, dry_run, work))
    }
}

fn read<T: AdmissionObject>(body: &[u8]) -> Result<(Request<T>, ReplyTo, bool), MalformedReview> {
    let req = Request::<T>::from_review_json(body)?;
    let to = ReplyTo {
        api_version: req.admission_request().types.api_version.clone(),
        uid: req.uid().to_string(),
    };
    let dry_run = req.dry_run();
    Ok((req, to, dry_run))
}

/// Runs the mutators in order, each on the object as the previous one left it; one JSON Patch from the
/// request's object to the last one's.
async fn run_chain<T: AdmissionObject>(
    req: Request<T>,
    mutators: Arc<[Mutator<T>]>,
) -> Result<Answer, String> {
    let original: Value = serde_json::to_value(req.object())
        .map_err(|e| format!("cannot serialize the request's object: {e}"))?;
    let has_object = req.admission_request().object.is_some();
    let mut current = original.clone();
    let mut warnings = Vec::new();
    let mut template = Some(req.into_inner());
    let count = mutators.len();
    for (i, m) in mutators.iter().enumerate() {
        let mut this = match i + 1 == count {
            true => template.take(),
            false => template.clone(),
        }
        .ok_or("no request left for a mutator")?;
        if i > 0 && has_object {
            this.object = Some(serde_json::from_value(current.clone()).map_err(|e| {
                format!(
                    "the object after mutator {i} no longer reads as {}: {e}",
                    std::any::type_name::<T>()
                )
            })?);
        }
        let request = Request::try_from(this).map_err(|e| e.to_string())?;
        let step = |e: String| match count {
            1 => e,
            _ => format!("mutator {} of {count} ({}): {e}", i + 1, m.label),
        };
        let mutation = (m.call)(request).await.map_err(step)?;
        warnings.extend(mutation.warnings.iter().cloned());
        if let Some(message) = mutation.apply_to(&mut current).map_err(step)? {
            return Ok(Answer::denied(message, warnings));
        }
    }
    Ok(Answer::patched(diff(&original, &current), warnings))
}

/// Bounds the handler in time, catches its panic, and turns its outcome into the response.
fn finish(
    name: Arc<str>,
    options: WebhookOptions,
    to: ReplyTo,
    dry_run: bool,
    work: impl Future<Output = Result<Answer, String>> + Send + 'static,
) -> BoxFuture<Decision> {
    // `begin` runs in the request's `admission` span (`server/http.rs`), which gets the UID here.
    tracing::Span::current().record("uid", to.uid.as_str());
    Box::pin(async move {
        // Most handlers answer on their first poll: the timer is armed only for one that does not (a
        // timer per request costs the timer wheel's lock twice), with the deadline counted from now.
        let deadline = tokio::time::Instant::now() + options.timeout;
        let mut work = std::pin::pin!(AssertUnwindSafe(work).catch_unwind());
        let caught = match futures::poll!(work.as_mut()) {
            std::task::Poll::Ready(caught) => Ok(caught),
            std::task::Poll::Pending => tokio::time::timeout_at(deadline, work).await,
        };
        let outcome = caught
            .map_err(|_| {
                (
                    FailureKind::Timeout,
                    format!("did not answer within {:?}", options.timeout),
                )
            })
            .and_then(|caught| caught.map_err(|panic| (FailureKind::Panic, panic_message(&*panic))))
            .and_then(|out| out.map_err(|e| (FailureKind::Error, e)));
        let (answer, failure) = match outcome {
            Ok(answer) => (answer, None),
            Err((kind, reason)) => {
                let message = match kind {
                    FailureKind::Panic => format!("webhook {name} panicked: {reason}"),
                    FailureKind::Timeout => format!("webhook {name} {reason}"),
                    FailureKind::Error => format!("webhook {name} failed: {reason}"),
                };
                let answer = match options.failure_policy {
                    FailurePolicy::Fail => Answer::failed(message.clone(), Vec::new()),
                    FailurePolicy::Ignore => Answer::allowed(vec![format!(
                        "{message}; admitted because its failure policy is Ignore"
                    )]),
                };
                (answer, Some((kind, message)))
            }
        };
        Decision {
            body: answer.encode(&to),
            allowed: answer.allowed,
            dry_run,
            failure,
        }
    })
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
