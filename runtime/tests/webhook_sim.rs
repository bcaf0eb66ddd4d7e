//! The webhook server as the admission webhook of the cluster (the local one, or the real kube-apiserver
//! of `PICELI_REAL_KUBECONFIG`, calling it by `url:` with a caBundle), driven by the real kubectl: a `:latest` Deployment is denied with the handler's message, a Pod gains the labels of a
//! single mutator and of a composite one, and the composite is called once.

#[path = "webhook/support.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use piceli_runtime::webhook::{Mutation, Request, Verdict, Webhooks};
use piceli_sim::SimConfig;
use piceli_test_support::Cluster;
use serde_json::Value;
use support::{Certs, Http1, Running, metric};

mod policy {
    use super::*;

    pub async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
        let spec = req.object().spec.as_ref();
        let pod = spec.and_then(|s| s.template.spec.as_ref());
        for c in pod.map(|p| p.containers.as_slice()).unwrap_or_default() {
            let image = c.image.as_deref().unwrap_or_default();
            if image.ends_with(":latest") {
                return Verdict::deny(format!("image {image} uses :latest"));
            }
        }
        Verdict::allow()
    }

    fn with_label(req: &Request<Pod>, key: &str, value: &str) -> Pod {
        let mut pod = req.object().clone();
        pod.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        pod
    }

    pub async fn inject_label(req: Request<Pod>) -> Mutation {
        Mutation::object(with_label(&req, "injected", "true"))
    }

    pub fn add_team(req: Request<Pod>) -> Mutation {
        Mutation::object(with_label(&req, "team", "shop"))
    }

    pub async fn add_tier(req: Request<Pod>) -> Mutation {
        let team = req
            .object()
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("team"));
        let tier = format!("{}-web", team.map(String::as_str).unwrap_or("none"));
        Mutation::object(with_label(&req, "tier", &tier))
    }
}

/// The real kubectl against the simulator: `--kubeconfig` to its file, KUBECONFIG cleared, and a fresh
/// KUBECACHEDIR for every run.
fn kubectl(cluster: &Cluster, work: &Path, args: &[&str]) -> (i32, String, String) {
    let cache = tempfile::tempdir().expect("cache dir");
    let out = cluster
        .kubectl()
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .current_dir(work)
        .output()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn webhook_config(kind: &str, name: &str, url: &str, ca: &str, rule: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: {kind}
metadata:
  name: {name}
webhooks:
  - name: {name}.guard.piceli.dev
    clientConfig:
      url: {url}
      caBundle: {ca}
    rules:
      - {rule}
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    timeoutSeconds: 10
"
    )
}

const DEPLOYMENTS: &str = "{apiGroups: [apps], apiVersions: [v1], resources: [deployments], operations: [CREATE, UPDATE]}";
const PODS: &str = "{apiGroups: [''], apiVersions: [v1], resources: [pods], operations: [CREATE]}";

const LATEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: 'nginx:latest'}]
";

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers: [{name: web, image: 'nginx:1.27'}]
";

#[test]
fn the_cluster_calls_the_served_webhooks_through_kubectl() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let certs = Certs::new();
    let hooks = Webhooks::new()
        .validate("no-latest-tag", policy::no_latest_tag)
        .mutate("inject-label", policy::inject_label)
        .mutate_all("pod-defaults", (policy::add_team, policy::add_tier));
    let server = rt.block_on(Running::start(hooks, &certs));
    let base = format!("https://{}", server.addr);
    let ca = base64::engine::general_purpose::STANDARD.encode(&certs.ca_pem);

    let mut config = SimConfig::default();
    config.controllers.enabled = false;
    let sim = Cluster::start_with(config);
    let work = tempfile::tempdir().expect("work dir");
    let file = |name: &str, body: &str| {
        std::fs::write(work.path().join(name), body).expect("write manifest");
        name.to_string()
    };
    let run = |args: &[&str]| kubectl(&sim, work.path(), args);
    let ok = |args: &[&str]| {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 0, "kubectl {args:?}: {stdout}{stderr}");
        stdout
    };

    let configs = [
        webhook_config(
            "ValidatingWebhookConfiguration",
            "no-latest-tag",
            &format!("{base}/validate/no-latest-tag"),
            &ca,
            DEPLOYMENTS,
        ),
        webhook_config(
            "MutatingWebhookConfiguration",
            "inject-label",
            &format!("{base}/mutate/inject-label"),
            &ca,
            PODS,
        ),
        webhook_config(
            "MutatingWebhookConfiguration",
            "pod-defaults",
            &format!("{base}/mutate/pod-defaults"),
            &ca,
            PODS,
        ),
    ];
    for (i, c) in configs.iter().enumerate() {
        ok(&["apply", "-f", &file(&format!("config-{i}.yaml"), c)]);
    }

    let (code, _, stderr) = run(&["apply", "-f", &file("latest.yaml", LATEST)]);
    assert_ne!(code, 0, "a :latest Deployment must be denied");
    assert!(
        stderr.contains(
            "admission webhook \"no-latest-tag.guard.piceli.dev\" denied the request: image nginx:latest uses :latest"
        ),
        "{stderr}"
    );
    assert_ne!(
        run(&["get", "deployment", "web"]).0,
        0,
        "nothing was stored"
    );

    ok(&["apply", "-f", &file("pod.yaml", POD)]);
    let pod: Value = serde_json::from_str(&ok(&["get", "pod", "web", "-o", "json"])).expect("json");
    let labels = &pod["metadata"]["labels"];
    assert_eq!(labels["app"], "web");
    assert_eq!(labels["injected"], "true");
    assert_eq!(labels["team"], "shop");
    assert_eq!(labels["tier"], "shop-web", "add_tier saw add_team's label");

    let metrics = rt.block_on(async {
        let mut c = Http1::connect(server.addr, &certs).await;
        c.get("/metrics").await.text()
    });
    let requests = |hook: &str, kind: &str| {
        metric(
            &metrics,
            &format!(
                "piceli_webhook_requests_total{{webhook=\"{hook}\",type=\"{kind}\",dry_run=\"false\"}}"
            ),
        )
    };
    assert_eq!(
        requests("pod-defaults", "mutate"),
        1.0,
        "both labels in one call"
    );
    assert_eq!(requests("inject-label", "mutate"), 1.0);
    assert_eq!(requests("no-latest-tag", "validate"), 1.0);
    assert_eq!(
        metric(
            &metrics,
            "piceli_webhook_denials_total{webhook=\"no-latest-tag\",type=\"validate\",dry_run=\"false\"}"
        ),
        1.0
    );
    rt.block_on(server.stop());
    sim.stop();
}
