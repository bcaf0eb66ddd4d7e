//! The webhook server as the admission webhook of the cluster (the local one, or the real kube-apiserver
//! of `PICELI_REAL_KUBECONFIG`, calling it by `url:` with a caBundle), driven by the real kubectl: a `:latest` Deployment is denied with the handler's message, a Pod gains the labels of a
//! single mutator and of a composite one, and the composite is called once.

use crate::webhook_support as support;

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

/// The real kubectl against the cluster, run in `work`.
fn kubectl(cluster: &Cluster, work: &Path, args: &[&str]) -> (i32, String, String) {
    piceli_test_support::kubectl::run(cluster.kubeconfig_path(), Some(work), args, None).parts()
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

mod slow {
    use super::*;

    /// Allows after 3 s: longer than the 1 s timeout the configuration gives the API server.
    pub async fn allow_late(_req: Request<Pod>) -> Verdict {
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        Verdict::allow()
    }
}

fn webhook_config_with(name: &str, url: &str, ca: &str, policy: &str, timeout: u32) -> String {
    webhook_config("ValidatingWebhookConfiguration", name, url, ca, PODS)
        .replace("failurePolicy: Fail", &format!("failurePolicy: {policy}"))
        .replace("timeoutSeconds: 10", &format!("timeoutSeconds: {timeout}"))
}

fn pod_named(name: &str) -> String {
    POD.replace("name: web,", &format!("name: {name},"))
}

/// failurePolicy and timeouts as the API server applies them (the local one, or kube-apiserver): a webhook
/// that does not answer in time, or cannot be reached, refuses the write under `Fail` and lets it through
/// under `Ignore`; a server-side dry run reaches the mutating webhook with `dryRun` (the labels show in the
/// answer, nothing is stored, the served metric counts it as a dry run).
#[test]
fn failure_policy_timeouts_and_dry_runs_as_the_api_server_applies_them() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let certs = Certs::new();
    let hooks = Webhooks::new()
        .validate("allow-late", slow::allow_late)
        .mutate("inject-label", policy::inject_label);
    let server = rt.block_on(Running::start(hooks, &certs));
    let base = format!("https://{}", server.addr);
    let ca = base64::engine::general_purpose::STANDARD.encode(&certs.ca_pem);
    // A port nothing listens on: bound, then closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");

    let mut config = SimConfig::default();
    config.controllers.enabled = false;
    let cluster = Cluster::start_with(config);
    let work = tempfile::tempdir().expect("work dir");
    let file = |name: &str, body: &str| {
        std::fs::write(work.path().join(name), body).expect("write manifest");
        name.to_string()
    };
    let run = |args: &[&str]| kubectl(&cluster, work.path(), args);
    let ok = |args: &[&str]| {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 0, "kubectl {args:?}: {stdout}{stderr}");
        stdout
    };
    let configure = |name: &str, url: &str, policy: &str, timeout: u32| {
        let body = webhook_config_with(name, url, &ca, policy, timeout);
        ok(&["apply", "-f", &file(&format!("{name}.yaml"), &body)]);
    };
    // The API server reads webhook configurations from a cache: a change shows after a moment.
    let until = |what: &str, mut done: Box<dyn FnMut() -> bool + '_>| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !done() {
            assert!(std::time::Instant::now() < deadline, "timed out: {what}");
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    };

    // Too slow, Fail: refused, with the timeout named.
    configure("late", &format!("{base}/validate/allow-late"), "Fail", 1);
    let mut refusal = String::new();
    let mut i = 0;
    until(
        "a write refused for the slow webhook",
        Box::new(|| {
            i += 1;
            let (code, _, stderr) = run(&[
                "apply",
                "-f",
                &file("p.yaml", &pod_named(&format!("late-{i}"))),
            ]);
            refusal = stderr;
            code != 0
        }),
    );
    assert!(
        refusal.contains("failed calling webhook") && refusal.contains("late.guard.piceli.dev"),
        "{refusal}"
    );
    assert!(
        refusal.contains("deadline") || refusal.contains("timeout") || refusal.contains("Timeout"),
        "the refusal names the timeout: {refusal}"
    );

    // Too slow, Ignore: let through.
    configure("late", &format!("{base}/validate/allow-late"), "Ignore", 1);
    let mut j = 0;
    until(
        "a write let through under Ignore",
        Box::new(|| {
            j += 1;
            run(&[
                "apply",
                "-f",
                &file("q.yaml", &pod_named(&format!("ignored-{j}"))),
            ])
            .0 == 0
        }),
    );
    ok(&["delete", "validatingwebhookconfiguration", "late"]);

    // Unreachable: Fail refuses, Ignore lets through.
    configure(
        "gone",
        &format!("https://{closed}/validate/allow-late"),
        "Fail",
        5,
    );
    let mut k = 0;
    let mut unreachable = String::new();
    until(
        "a write refused for the unreachable webhook",
        Box::new(|| {
            k += 1;
            let (code, _, stderr) = run(&[
                "apply",
                "-f",
                &file("r.yaml", &pod_named(&format!("gone-{k}"))),
            ]);
            unreachable = stderr;
            code != 0
        }),
    );
    assert!(
        unreachable.contains("failed calling webhook")
            && unreachable.contains("gone.guard.piceli.dev"),
        "{unreachable}"
    );
    configure(
        "gone",
        &format!("https://{closed}/validate/allow-late"),
        "Ignore",
        5,
    );
    let mut m = 0;
    until(
        "a write let through under Ignore",
        Box::new(|| {
            m += 1;
            run(&[
                "apply",
                "-f",
                &file("s.yaml", &pod_named(&format!("through-{m}"))),
            ])
            .0 == 0
        }),
    );
    ok(&["delete", "validatingwebhookconfiguration", "gone"]);

    // A server-side dry run is mutated and not stored.
    let mutating = webhook_config(
        "MutatingWebhookConfiguration",
        "inject-label",
        &format!("{base}/mutate/inject-label"),
        &ca,
        PODS,
    );
    ok(&["apply", "-f", &file("mutating.yaml", &mutating)]);
    let mut answer = Value::Null;
    until(
        "the dry run mutated",
        Box::new(|| {
            let (code, stdout, _) = run(&[
                "apply",
                "--dry-run=server",
                "-o",
                "json",
                "-f",
                &file("dry.yaml", &pod_named("dry")),
            ]);
            answer = serde_json::from_str(&stdout).unwrap_or(Value::Null);
            code == 0 && answer["metadata"]["labels"]["injected"] == "true"
        }),
    );
    assert_ne!(run(&["get", "pod", "dry"]).0, 0, "a dry run stores nothing");
    let metrics = rt.block_on(async {
        let mut c = Http1::connect(server.addr, &certs).await;
        c.get("/metrics").await.text()
    });
    assert!(
        metric(
            &metrics,
            "piceli_webhook_requests_total{webhook=\"inject-label\",type=\"mutate\",dry_run=\"true\"}"
        ) >= 1.0,
        "{metrics}"
    );
    rt.block_on(server.stop());
    cluster.stop();
}
