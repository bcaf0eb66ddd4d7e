//! Admission webhooks: typed handlers ([`Request`] → [`Verdict`] or [`Mutation`]), registered on
//! [`Webhooks`], served over HTTPS by [`serve`] / [`Server`]. See `docs/webhooks.md`.
//!
//! ```
//! use piceli_runtime::webhook::{Request, Verdict, Webhooks};
//! use k8s_openapi::api::apps::v1::Deployment;
//!
//! pub async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
//!     let containers = req.object().spec.as_ref()
//!         .and_then(|s| s.template.spec.as_ref())
//!         .map(|p| p.containers.as_slice())
//!         .unwrap_or_default();
//!     match containers.iter().filter_map(|c| c.image.as_deref()).find(|i| i.ends_with(":latest")) {
//!         Some(image) => Verdict::deny(format!("image {image} uses :latest")),
//!         None => Verdict::allow(),
//!     }
//! }
//! let hooks = Webhooks::new().validate("no-latest-tag", no_latest_tag);
//! ```

mod endpoint;
#[cfg(test)]
mod endpoint_tests;
mod error;
#[cfg(test)]
mod fixtures;
mod handler;
mod metrics;
mod mutation;
mod registry;
mod request;
mod response;
mod server;

pub use endpoint::{FailurePolicy, WebhookOptions};
pub use error::ServeError;
pub use handler::{
    AsyncFn, Erased, Mutate, MutateHandler, Mutator, MutatorChain, SyncFn, TraitImpl, Validate,
    ValidateHandler, Validator, mutator, validator,
};
/// JSON Patch (RFC 6902) types, for [`Mutation::patch`].
pub use json_patch;
pub use kube::core::admission::Operation;
pub use mutation::{IntoMutation, Mutation};
pub use registry::{WebhookKind, Webhooks};
pub use request::{AdmissionObject, MalformedReview, Request};
pub use server::{ServeOptions, Server, serve, shutdown_signal};
pub use verdict::{IntoVerdict, Verdict};

mod verdict;

/// For fuzz targets (`fuzz/fuzz_targets/admission_review.rs`): a webhook path's work on a request body,
/// as the server does it after reading the body. Not a stable API.
#[doc(hidden)]
pub mod fuzzing {
    use super::{MalformedReview, Webhooks};

    /// Runs the first webhook registered on `hooks` on `body`: the AdmissionReview response body the server
    /// would send, or the malformed review it answers with 400. Call it inside a Tokio runtime with time
    /// enabled (the handler's timeout). `None` when `hooks` has no webhook.
    pub async fn answer(hooks: &Webhooks, body: &[u8]) -> Option<Result<Vec<u8>, MalformedReview>> {
        let route = hooks.routes.first()?;
        Some(match route.endpoint.begin(body) {
            Ok(work) => Ok(work.await.body),
            Err(malformed) => Err(malformed),
        })
    }
}
