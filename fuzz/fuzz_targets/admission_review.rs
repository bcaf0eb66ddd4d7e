//! The webhook server's work on a request body: AdmissionReview decoding (typed as a Deployment for a
//! validating webhook, as a Pod for a composite mutating one) and, for a mutation, the JSON Patch from the
//! request's object to the mutated one. The answer must be a well-formed AdmissionReview echoing the uid,
//! and its patch must apply to the object the API server sent. No panic allowed.
#![no_main]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use base64::Engine;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use libfuzzer_sys::fuzz_target;
use piceli_runtime::webhook::json_patch::Patch;
use piceli_runtime::webhook::{Mutation, Request, Verdict, Webhooks, fuzzing};
use serde_json::Value;

/// The annotation whose value the second mutator applies as its own JSON Patch.
const PATCH_ANNOTATION: &str = "fuzz.piceli.dev/patch";

fn deny_latest(req: Request<Deployment>) -> Verdict {
    let name = req.object().metadata.name.clone().unwrap_or_default();
    match name.ends_with("latest") {
        true => Verdict::deny(format!("{name} ends with latest")),
        false => Verdict::allow().warn(format!("{:?}", req.operation())),
    }
}

/// Returns the whole object, labelled (the runtime computes the patch).
fn label(req: Request<Pod>) -> Mutation {
    let mut pod = req.object().clone();
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert("team".into(), req.name().to_string());
    Mutation::object(pod)
}

/// Returns a JSON Patch of its own, taken from the object's annotation.
fn annotated_patch(req: Request<Pod>) -> Result<Mutation, String> {
    let annotations = req.object().metadata.annotations.as_ref();
    let Some(text) = annotations.and_then(|a| a.get(PATCH_ANNOTATION)) else {
        return Ok(Mutation::none());
    };
    let ops: Patch = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(Mutation::patch(ops))
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    validate: Webhooks,
    mutate: Webhooks,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| Fixture {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime"),
        validate: Webhooks::new().validate("no-latest", deny_latest),
        mutate: Webhooks::new().mutate_all("pod-defaults", (label, annotated_patch)),
    })
}

/// The answer is an AdmissionReview echoing the request's uid (as the server read it: a JSON text that
/// reads into the typed review is not always a valid `serde_json::Value`, since skipped fields are not
/// checked for bad escapes).
fn check_answer(uid: &str, answer: &[u8]) -> Value {
    let review: Value = serde_json::from_slice(answer).expect("the answer is JSON");
    assert_eq!(review["kind"], "AdmissionReview", "{review}");
    assert_eq!(review["response"]["uid"], uid, "the uid is echoed");
    review
}

fuzz_target!(|data: &[u8]| {
    let f = fixture();
    if let Some(Ok(answer)) = f.runtime.block_on(fuzzing::answer(&f.validate, data)) {
        let req = Request::<Deployment>::from_review_json(data).expect("it read once");
        check_answer(req.uid(), &answer);
    }
    let Some(Ok(answer)) = f.runtime.block_on(fuzzing::answer(&f.mutate, data)) else {
        return;
    };
    let req = Request::<Pod>::from_review_json(data).expect("it read once");
    let review = check_answer(req.uid(), &answer);
    let Some(patch) = review["response"]["patch"].as_str() else {
        return;
    };
    assert_eq!(review["response"]["patchType"], "JSONPatch");
    let raw = base64::engine::general_purpose::STANDARD
        .decode(patch)
        .expect("the patch is base64");
    let ops: Patch = serde_json::from_slice(&raw).expect("the patch is a JSON Patch");
    // The object the API server holds: the one the handlers were given, as the server re-encodes it.
    let mut object = serde_json::to_value(req.object()).expect("a pod encodes");
    if let Err(e) = json_patch::patch(&mut object, &ops) {
        panic!("the answer's patch does not apply to the request's object: {e}\npatch: {ops:?}");
    }
});
