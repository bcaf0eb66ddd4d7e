//! The log of a review: a handler's failure is one warn line in the review's `admission` span, which
//! carries the webhook's path and the review's UID.

use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt;

use super::http::admit;
use crate::webhook::fixtures::{UID, pod_review};
use crate::webhook::{Mutation, Request, Webhooks};

/// What the subscriber wrote, shared with the test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn no_tier(_: Request<Pod>) -> Result<Mutation, String> {
    Err("no tier for this pod".into())
}

#[tokio::test(flavor = "current_thread")]
async fn a_failing_handler_is_logged_in_the_admission_span_with_path_and_uid() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_writer(move || writer.clone()),
    );
    // This thread only: the current-thread runtime runs the review here.
    let _default = tracing::subscriber::set_default(subscriber);
    let table = Webhooks::new().mutate("tiers", no_tier).into_table();
    let route = table.get("/mutate/tiers").expect("route");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}});
    let response = admit(route, "/mutate/tiers", &pod_review(pod)).await;
    assert_eq!(response.status(), 200);

    let text = String::from_utf8_lossy(&captured.0.lock().expect("log").clone()).into_owned();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let failed = lines
        .iter()
        .find(|l| l["level"] == "WARN")
        .unwrap_or_else(|| panic!("a warn line: {text}"));
    assert_eq!(
        failed["message"], "webhook tiers failed: no tier for this pod",
        "{failed}"
    );
    assert_eq!(failed["failure"], "error", "{failed}");
    assert_eq!(failed["allowed"], false, "{failed}");
    assert_eq!(failed["span"]["name"], "admission", "{failed}");
    assert_eq!(failed["span"]["webhook"], "/mutate/tiers", "{failed}");
    assert_eq!(failed["span"]["uid"], UID, "{failed}");
}
