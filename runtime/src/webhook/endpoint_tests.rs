//! Unit tests of the handler styles and of a webhook path's answers, with AdmissionReviews from fixtures.

use std::collections::BTreeMap;
use std::time::Duration;

use base64::Engine;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::fixtures::{UID, deployment, deployment_review, pod, pod_review};
use super::*;

/// The images of a Deployment's pod template.
fn images(d: &Deployment) -> Vec<&str> {
    d.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .map(|p| {
            p.containers
                .iter()
                .filter_map(|c| c.image.as_deref())
                .collect()
        })
        .unwrap_or_default()
}

async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
    match images(req.object())
        .into_iter()
        .find(|i| i.ends_with(":latest"))
    {
        Some(image) => Verdict::deny(format!("image {image} uses :latest")),
        None => Verdict::allow().warn("images are pinned"),
    }
}

fn no_latest_tag_sync(req: Request<Deployment>) -> Verdict {
    futures::executor::block_on(no_latest_tag(req))
}

struct NoLatestTag;
impl Validate for NoLatestTag {
    type Resource = Deployment;
    async fn validate(&self, req: Request<Deployment>) -> Verdict {
        no_latest_tag(req).await
    }
}

fn label(pod: &mut Pod, key: &str, value: &str) {
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(key.into(), value.into());
}

async fn add_team(req: Request<Pod>) -> Mutation {
    let mut pod = req.object().clone();
    label(&mut pod, "team", "shop");
    Mutation::object(pod)
}

/// Sees what `add_team` did: the tier depends on the team.
fn add_tier(req: Request<Pod>) -> Result<Mutation, String> {
    let team = req
        .object()
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("team"));
    let team = team.ok_or("no team label yet")?;
    let mut pod = req.object().clone();
    label(&mut pod, "tier", &format!("{team}-web"));
    Ok(Mutation::object(pod).warn("tier set"))
}

struct Annotate;
impl Mutate for Annotate {
    type Resource = Pod;
    async fn mutate(&self, _req: Request<Pod>) -> Mutation {
        let ops = serde_json::from_value(json!([
            {"op": "add", "path": "/metadata/annotations", "value": {"checked": "yes"}}
        ]))
        .expect("ops");
        Mutation::patch(ops)
    }
}

/// Runs the one webhook of `hooks` on `body`: the response's `response` object.
async fn answer(hooks: Webhooks, body: &[u8]) -> Value {
    let route = hooks.routes.into_iter().next().expect("one webhook");
    let decision = route.endpoint.begin(body).expect("well-formed").await;
    let review: Value = serde_json::from_slice(&decision.body).expect("json");
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], UID, "the uid is echoed");
    review["response"].clone()
}

fn patch_of(response: &Value) -> Value {
    assert_eq!(response["patchType"], "JSONPatch");
    let raw = base64::engine::general_purpose::STANDARD
        .decode(response["patch"].as_str().expect("a patch"))
        .expect("base64");
    serde_json::from_slice(&raw).expect("json patch")
}

fn latest() -> Vec<u8> {
    deployment_review("CREATE", deployment(&["envoy:1.30", "nginx:latest"]))
}

#[tokio::test]
async fn a_handler_is_called_directly_with_a_request_from_a_fixture() {
    let req = Request::<Deployment>::from_review_json(&latest()).expect("fixture");
    let verdict = no_latest_tag(req).await;
    assert_eq!(verdict.message(), Some("image nginx:latest uses :latest"));
    let ok = deployment_review("CREATE", deployment(&["nginx:1.27"]));
    let verdict = no_latest_tag(Request::from_review_json(&ok).expect("fixture")).await;
    assert!(verdict.is_allowed());
    assert_eq!(verdict.warnings(), ["images are pinned"]);
}

#[tokio::test]
async fn async_sync_and_trait_validators_answer_alike() {
    for hooks in [
        Webhooks::new().validate("no-latest-tag", no_latest_tag),
        Webhooks::new().validate("no-latest-tag", no_latest_tag_sync),
        Webhooks::new().validate("no-latest-tag", NoLatestTag),
    ] {
        let r = answer(hooks, &latest()).await;
        assert_eq!(r["allowed"], false);
        assert_eq!(r["status"]["code"], 403);
        assert_eq!(r["status"]["message"], "image nginx:latest uses :latest");
    }
    let ok = deployment_review("UPDATE", deployment(&["nginx:1.27"]));
    let r = answer(Webhooks::new().validate("no-latest-tag", NoLatestTag), &ok).await;
    assert_eq!(
        r,
        json!({"uid": UID, "allowed": true, "warnings": ["images are pinned"]})
    );
}

#[tokio::test]
async fn a_mutator_returning_the_object_gets_the_json_patch_computed() {
    let r = answer(
        Webhooks::new().mutate("inject-label", add_team),
        &pod_review(pod()),
    )
    .await;
    assert_eq!(r["allowed"], true);
    assert_eq!(
        patch_of(&r),
        json!([{"op": "add", "path": "/metadata/labels/team", "value": "shop"}])
    );
    let r = answer(
        Webhooks::new().mutate("annotate", Annotate),
        &pod_review(pod()),
    )
    .await;
    assert_eq!(
        patch_of(&r),
        json!([{"op": "add", "path": "/metadata/annotations", "value": {"checked": "yes"}}])
    );
    let none = |_: Request<Pod>| Mutation::none();
    let r = answer(Webhooks::new().mutate("nothing", none), &pod_review(pod())).await;
    assert_eq!(
        r,
        json!({"uid": UID, "allowed": true}),
        "no change, no patch"
    );
}

#[tokio::test]
async fn a_composite_runs_in_order_and_answers_one_patch() {
    let hooks = Webhooks::new().mutate_all("pod-defaults", (add_team, add_tier, Annotate));
    let r = answer(hooks, &pod_review(pod())).await;
    assert_eq!(r["warnings"], json!(["tier set"]));
    let mut ops = patch_of(&r).as_array().expect("ops").clone();
    ops.sort_by_key(|op| op["path"].as_str().map(String::from));
    assert_eq!(
        ops,
        [
            json!({"op": "add", "path": "/metadata/annotations", "value": {"checked": "yes"}}),
            json!({"op": "add", "path": "/metadata/labels/team", "value": "shop"}),
            json!({"op": "add", "path": "/metadata/labels/tier", "value": "shop-web"}),
        ]
    );
    // The same with a list of erased mutators.
    let hooks = Webhooks::new().mutate_all("pod-defaults", [mutator(add_team), mutator(add_tier)]);
    let r = answer(hooks, &pod_review(pod())).await;
    assert_eq!(patch_of(&r).as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn a_failing_or_denying_mutator_fails_the_request_with_its_message() {
    // `add_tier` first: there is no team label yet.
    let r = answer(
        Webhooks::new().mutate_all("pod-defaults", (add_tier, add_team)),
        &pod_review(pod()),
    )
    .await;
    assert_eq!(r["allowed"], false);
    let message = r["status"]["message"].as_str().expect("message");
    assert!(
        message.starts_with("webhook pod-defaults failed: mutator 1 of 2 (")
            && message.ends_with("add_tier): no team label yet"),
        "{message}"
    );
    assert!(r.get("patch").is_none());
    let deny = |_: Request<Pod>| Mutation::deny("pods need an owner");
    let r = answer(
        Webhooks::new().mutate_all("pod-defaults", (add_team, deny)),
        &pod_review(pod()),
    )
    .await;
    assert_eq!(r["status"]["message"], "pods need an owner");
    assert_eq!(r["status"]["code"], 403);
}

#[tokio::test]
async fn a_panicking_handler_is_denied_with_the_reason() {
    let boom = |_: Request<Deployment>| -> Verdict { panic!("index out of range") };
    let r = answer(Webhooks::new().validate("boom", boom), &latest()).await;
    assert_eq!(r["allowed"], false);
    assert_eq!(r["status"]["code"], 500);
    assert_eq!(
        r["status"]["message"],
        "webhook boom panicked: index out of range"
    );
}

#[tokio::test]
async fn a_slow_handler_times_out_and_the_failure_policy_decides() {
    async fn slow(_: Request<Deployment>) -> Verdict {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Verdict::allow()
    }
    let fail = WebhookOptions {
        timeout: Duration::from_millis(50),
        failure_policy: FailurePolicy::Fail,
    };
    let r = answer(Webhooks::new().validate_with("slow", fail, slow), &latest()).await;
    assert_eq!(r["allowed"], false);
    assert_eq!(
        r["status"]["message"],
        "webhook slow did not answer within 50ms"
    );
    let ignore = WebhookOptions {
        failure_policy: FailurePolicy::Ignore,
        ..fail
    };
    let r = answer(
        Webhooks::new().validate_with("slow", ignore, slow),
        &latest(),
    )
    .await;
    assert_eq!(r["allowed"], true);
    assert_eq!(
        r["warnings"],
        json!([
            "webhook slow did not answer within 50ms; admitted because its failure policy is Ignore"
        ])
    );
}

#[test]
fn malformed_bodies_are_refused_before_the_handler_runs() {
    let hooks = Webhooks::new().validate("no-latest-tag", no_latest_tag);
    let route = &hooks.routes[0];
    let err = route.endpoint.begin(b"[]").err().expect("malformed");
    assert!(
        err.to_string().starts_with("malformed AdmissionReview: "),
        "{err}"
    );
    let pod_as_deployment = pod_review(json!({"metadata": {"name": 5}}));
    assert!(route.endpoint.begin(&pod_as_deployment).is_err());
}

#[test]
fn names_must_be_dns_labels_and_paths_unique() {
    let hooks = Webhooks::new()
        .validate("no-latest-tag", no_latest_tag)
        .validate("no-latest-tag", NoLatestTag)
        .mutate("Inject_Label", add_team)
        .mutate("no-latest-tag", add_team);
    assert_eq!(
        hooks.problems(),
        [
            "/validate/no-latest-tag is registered twice",
            "webhook name \"Inject_Label\" is not a DNS label (lowercase letters, digits and '-', at most 63)",
        ]
    );
}
