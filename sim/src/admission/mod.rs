//! Admission: the plugin API (the seam itself is the registry's, `registry/admission.rs`,
//! re-exported here) and the stored Mutating- and ValidatingWebhookConfigurations, honoured where
//! the real API server calls mutating and validating admission: mutating webhooks after the
//! plugins' `mutate`, validating webhooks after the plugins' `validate` (and both on DELETE).

mod client;
mod config;
mod dispatch;
mod first_bytes;
mod go_x509;
pub(crate) mod log;
pub(crate) mod matching;
mod pool;
mod review;
mod seam;
mod target;
mod verify;

pub use crate::registry::admission::{Admission, AdmissionRequest, denied};
pub(crate) use config::Webhooks;
pub(crate) use target::{Reach, pod_port, selected_pod_address};
