//! A generic mutating webhook — one handler taking `Request<DynamicObject>` on `[configmaps, secrets,
//! "*.example.com"]` — as the admission webhook of the cluster (the local one, or the real kube-apiserver
//! of `PICELI_REAL_KUBECONFIG`, calling it by `url:` with a caBundle), with the configuration `render`
//! derives for it: through the real kubectl, a ConfigMap, a Secret and an object of a custom resource of
//! the wildcard's group are labelled by the one handler (a JSON Patch), a Pod (not listed) is not.

use crate::webhook_support as support;

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use kube::core::DynamicObject;
use piceli_core::model::{App, Operator, Target, Webhook, WebhookKind, WebhookResource};
use piceli_core::spanned::Spanned;
use piceli_runtime::render::{Options, render};
use piceli_runtime::webhook::{Mutation, Request, Webhooks};
use piceli_sim::SimConfig;
use piceli_test_support::Cluster;
use serde_json::{Value, json};
use support::{Certs, Http1, Running, metric};

/// Labels whatever it is given with `labelled-by: add-label` and the kind it saw.
fn add_label(req: Request<DynamicObject>) -> Mutation {
    let mut obj = req.object().clone();
    let kind = req.kind().kind.to_ascii_lowercase();
    let labels = obj.metadata.labels.get_or_insert_with(Default::default);
    labels.insert("labelled-by".into(), "add-label".into());
    labels.insert("seen-as".into(), kind);
    Mutation::object(obj)
}

fn s(v: &str) -> Spanned<String> {
    Spanned::bare(v.to_string())
}

/// The app's model as `app!` lowers `mutate add-label on [configmaps, secrets, "*.example.com"]
/// (CREATE, UPDATE) => add_label;`.
fn app() -> App {
    App {
        name: s("guard"),
        targets: vec![Target {
            name: s("test"),
            namespace: s("guard-system"),
            ..Target::default()
        }],
        operator: Some(Operator {
            name: s("guard"),
            image: s(
                "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
            ),
            replicas: Spanned::bare(1),
            ..Operator::default()
        }),
        webhooks: vec![Webhook {
            kind: WebhookKind::Mutate,
            name: s("add-label"),
            resources: ["configmaps", "secrets", "*.example.com"]
                .into_iter()
                .map(|r| WebhookResource::new(s(r)))
                .collect(),
            generic: true,
            operations: vec![s("CREATE"), s("UPDATE")],
            handlers: vec![s("add_label")],
            ..Webhook::default()
        }],
        ..App::default()
    }
}

/// The rendered MutatingWebhookConfiguration, calling `url` with `ca` instead of the operator's Service
/// (this test serves on loopback, without cert-manager).
fn configuration(url: &str, ca: &str) -> Value {
    let rendered = render(&app(), &Options::default()).expect("renders");
    let mut config = rendered
        .objects
        .into_iter()
        .find(|o| o["kind"] == "MutatingWebhookConfiguration")
        .expect("the mutating configuration");
    if let Some(meta) = config["metadata"].as_object_mut() {
        meta.remove("annotations");
    }
    config["webhooks"][0]["clientConfig"] = json!({ "url": url, "caBundle": ca });
    config
}

const WIDGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
";

const OBJECTS: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {a: b}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: shop}
stringData: {t: x}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: web, image: 'nginx:1.27'}]
";

const WIDGET: &str = "apiVersion: example.com/v1
kind: Widget
metadata: {name: knob, namespace: shop}
spec: {size: 3}
";

fn kubectl(cluster: &Cluster, work: &Path, args: &[&str]) -> (i32, String, String) {
    let out = cluster
        .kubectl()
        .args(args)
        .current_dir(work)
        .output()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_generic_webhook_labels_configmaps_secrets_and_a_groups_custom_resources_through_kubectl() {
    let rendered = configuration("https://127.0.0.1:1/mutate/add-label", "");
    assert_eq!(
        rendered["webhooks"][0]["rules"][2],
        json!({"apiGroups": ["example.com"], "apiVersions": ["*"], "resources": ["*"],
               "operations": ["CREATE", "UPDATE"], "scope": "*"})
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let certs = Certs::new();
    let hooks = Webhooks::new().mutate("add-label", add_label);
    let server = rt.block_on(Running::start(hooks, &certs));
    let ca = base64::engine::general_purpose::STANDARD.encode(&certs.ca_pem);
    let url = format!("https://{}/mutate/add-label", server.addr);

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

    ok(&["apply", "-f", &file("crd.yaml", WIDGET_CRD)]);
    ok(&[
        "wait",
        "--for=condition=established",
        "--timeout=60s",
        "crd/widgets.example.com",
    ]);
    ok(&["create", "namespace", "shop"]);
    let config = configuration(&url, &ca);
    ok(&["apply", "-f", &file("config.json", &config.to_string())]);

    // The API server reads webhook configurations from a cache: the first labelled object shows it is in.
    let labels = |kind: &str, name: &str| -> Value {
        let (code, stdout, _) = run(&["-n", "shop", "get", kind, name, "-o", "json"]);
        if code != 0 {
            return Value::Null;
        }
        serde_json::from_str::<Value>(&stdout).unwrap_or(Value::Null)["metadata"]["labels"].clone()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        ok(&["apply", "-f", &file("objects.yaml", OBJECTS)]);
        if labels("configmap", "settings")["labelled-by"] == "add-label" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook never labelled the ConfigMap"
        );
        ok(&["-n", "shop", "delete", "configmap,secret", "--all"]);
        std::thread::sleep(Duration::from_millis(300));
    }
    ok(&["apply", "-f", &file("widget.yaml", WIDGET)]);

    for (kind, name, seen) in [
        ("configmap", "settings", "configmap"),
        ("secret", "token", "secret"),
        ("widgets.example.com", "knob", "widget"),
    ] {
        let l = labels(kind, name);
        assert_eq!(l["labelled-by"], "add-label", "{kind}/{name}: {l}");
        assert_eq!(l["seen-as"], seen, "{kind}/{name}: {l}");
    }
    assert_eq!(
        labels("pod", "web")["labelled-by"],
        Value::Null,
        "pods are not in the webhook's rules"
    );
    let widget: Value =
        serde_json::from_str(&ok(&["-n", "shop", "get", "widget", "knob", "-o", "json"]))
            .expect("widget JSON");
    assert_eq!(widget["spec"]["size"], 3, "the patch changes labels only");

    let metrics = rt.block_on(async {
        let mut c = Http1::connect(server.addr, &certs).await;
        c.get("/metrics").await.text()
    });
    assert!(
        metric(
            &metrics,
            "piceli_webhook_requests_total{webhook=\"add-label\",type=\"mutate\",dry_run=\"false\"}"
        ) >= 3.0,
        "{metrics}"
    );
    rt.block_on(server.stop());
    cluster.stop();
}
