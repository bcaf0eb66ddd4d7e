//! Admission webhooks: configurations stored in the simulator are honoured on every matching write,
//! calling real HTTPS webhook servers (started by each test on loopback) with AdmissionReview v1,
//! driven through the real kubectl.

use crate::common;
use crate::webhook;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Kubectl, json_of, live_sim, sim};
use serde_json::{Value, json};
use webhook::{WebhookServer, patch_response};

fn allow() -> Value {
    json!({"allowed": true})
}

/// A webhook configuration manifest with one webhook (`extra` is YAML merged into the webhook,
/// indented by four spaces).
fn config(kind: &str, name: &str, client: &str, ca: &str, rules: &str, extra: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: {kind}
metadata:
  name: {name}
webhooks:
  - name: {name}.piceli.dev
    clientConfig:
      {client}
      caBundle: {ca}
    rules:
      - {rules}
    admissionReviewVersions: [v1]
    sideEffects: None
{extra}"
    )
}

const DEPLOYMENTS: &str = "{apiGroups: [apps], apiVersions: [v1], resources: [deployments], operations: [CREATE, UPDATE]}";
const CONFIGMAPS: &str =
    "{apiGroups: [''], apiVersions: [v1], resources: [configmaps], operations: ['*']}";

fn url_client(server: &WebhookServer, path: &str) -> String {
    format!("url: {}", server.url(path))
}

fn apply(k: &Kubectl, file: &str, body: &str) -> common::Out {
    let f = k.file(file, body);
    k.run(&["apply", "-f", &f])
}

fn deployment(image: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: '{image}'}}]
"
    )
}

fn configmap(name: &str, ns: &str, extra_meta: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}{extra_meta}}}\ndata: {{k: v}}\n"
    )
}

/// Denies images tagged `latest` (or untagged), warns about the rest.
fn image_policy(request: &Value) -> Value {
    let images: Vec<String> = request
        .pointer("/object/spec/template/spec/containers")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c.get("image").and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default();
    match images
        .iter()
        .find(|i| i.ends_with(":latest") || !i.contains(':'))
    {
        Some(bad) => json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden",
            "message": format!("image {bad} must be pinned, not latest")}}),
        None => json!({"allowed": true, "warnings": ["images are pinned; remember to bump them"]}),
    }
}

#[test]
fn validating_webhook_denies_latest_images_and_passes_warnings() {
    let server = WebhookServer::start(&[], Duration::ZERO, Arc::new(image_policy));
    let sim = sim();
    let k = Kubectl::new(&sim);
    let cfg = config(
        "ValidatingWebhookConfiguration",
        "images",
        &url_client(&server, "/validate"),
        &server.ca_bundle(),
        DEPLOYMENTS,
        "",
    );
    k.ok(&["apply", "-f", &k.file("cfg.yaml", &cfg)]);

    let out = apply(&k, "latest.yaml", &deployment("nginx:latest"));
    assert_ne!(out.code, 0, "a latest image must be denied: {out:?}");
    assert!(
        out.stderr.contains(
            "admission webhook \"images.piceli.dev\" denied the request: image nginx:latest must be pinned, not latest"
        ),
        "{}",
        out.stderr
    );
    assert!(
        k.run(&["get", "deployment", "web"]).code != 0,
        "nothing stored"
    );

    let out = apply(&k, "pinned.yaml", &deployment("nginx:1.27"));
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("Warning: images are pinned; remember to bump them"),
        "warnings reach kubectl: {}",
        out.stderr
    );

    let seen = server.seen();
    let last = seen.last().expect("the webhook was called");
    assert_eq!(last["operation"], "CREATE");
    assert_eq!(
        last["kind"],
        json!({"group": "apps", "version": "v1", "kind": "Deployment"})
    );
    assert_eq!(
        last["resource"],
        json!({"group": "apps", "version": "v1", "resource": "deployments"})
    );
    assert_eq!(last["requestKind"], last["kind"]);
    assert_eq!(last["name"], "web");
    assert_eq!(last["namespace"], "default");
    assert_eq!(last["dryRun"], false);
    assert_eq!(last["userInfo"]["username"], "piceli-sim-admin");
    assert_eq!(last["options"]["kind"], "CreateOptions");
    assert_eq!(last["options"]["fieldManager"], "kubectl-client-side-apply");
    assert_eq!(last["oldObject"], Value::Null);
    assert_eq!(last["object"]["metadata"]["name"], "web");
    assert!(last["uid"].as_str().is_some_and(|u| u.len() == 36));

    // An update is admitted too, with the old object.
    let out = apply(&k, "pinned.yaml", &deployment("nginx:1.28"));
    assert_eq!(out.code, 0, "{out:?}");
    let seen = server.seen();
    let last = seen.last().expect("called on update");
    assert_eq!(last["operation"], "UPDATE");
    assert_eq!(last["options"]["kind"], "UpdateOptions");
    assert_eq!(
        last["oldObject"]["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    let out = apply(&k, "pinned.yaml", &deployment("nginx"));
    assert_ne!(out.code, 0, "an untagged image is denied on update");
}

#[test]
fn mutating_webhook_patches_and_reinvokes_if_needed() {
    // "a-observer" runs first (configurations are ordered by name) and is reinvoked because
    // "b-labeller" changed the object after it.
    let observer = WebhookServer::start(&[], Duration::ZERO, Arc::new(|_: &Value| allow()));
    let labeller = WebhookServer::start(
        &[],
        Duration::ZERO,
        Arc::new(|r: &Value| {
            if r.pointer("/object/metadata/labels/injected").is_some() {
                return json!({"allowed": true});
            }
            patch_response(json!([
                {"op": "add", "path": "/metadata/labels/injected", "value": "by-webhook"}
            ]))
        }),
    );
    let sim = sim();
    let k = Kubectl::new(&sim);
    let first = config(
        "MutatingWebhookConfiguration",
        "a-observer",
        &url_client(&observer, "/"),
        &observer.ca_bundle(),
        CONFIGMAPS,
        "    reinvocationPolicy: IfNeeded\n",
    );
    let second = config(
        "MutatingWebhookConfiguration",
        "b-labeller",
        &url_client(&labeller, "/mutate"),
        &labeller.ca_bundle(),
        CONFIGMAPS,
        "",
    );
    k.ok(&["apply", "-f", &k.file("a.yaml", &first)]);
    k.ok(&["apply", "-f", &k.file("b.yaml", &second)]);
    let out = apply(
        &k,
        "cm.yaml",
        &configmap("settings", "default", ", labels: {app: shop}"),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let got = json_of(&k.ok(&["get", "configmap", "settings", "-o", "json"]));
    assert_eq!(got["metadata"]["labels"]["injected"], "by-webhook");
    assert_eq!(got["metadata"]["labels"]["app"], "shop");
    let observed = observer.seen();
    assert_eq!(observed.len(), 2, "the IfNeeded webhook ran again");
    assert!(observed[0]["object"]["metadata"]["labels"]["injected"].is_null());
    assert_eq!(
        observed[1]["object"]["metadata"]["labels"]["injected"],
        "by-webhook"
    );
    assert_eq!(labeller.seen().len(), 1, "reinvoked only if IfNeeded");
}

#[test]
fn failure_policy_decides_when_the_webhook_is_down() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let (ca, _) = webhook::new_ca();
    let sim = sim();
    let k = Kubectl::new(&sim);
    let down = |policy: &str| {
        config(
            "ValidatingWebhookConfiguration",
            "down",
            &format!("url: https://127.0.0.1:{port}/validate"),
            &webhook::b64(&ca),
            CONFIGMAPS,
            &format!("    failurePolicy: {policy}\n"),
        )
    };
    k.ok(&["apply", "-f", &k.file("fail.yaml", &down("Fail"))]);
    let out = apply(&k, "cm.yaml", &configmap("one", "default", ""));
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(&format!(
            "Internal error occurred: failed calling webhook \"down.piceli.dev\": failed to call webhook: Post \"https://127.0.0.1:{port}/validate?timeout=10s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )),
        "{}",
        out.stderr
    );
    // The changed configuration is honoured at once.
    k.ok(&["apply", "-f", &k.file("ignore.yaml", &down("Ignore"))]);
    let out = apply(&k, "cm.yaml", &configmap("one", "default", ""));
    assert_eq!(out.code, 0, "{out:?}");
    // Removing the configuration stops the calls.
    k.ok(&["apply", "-f", &k.file("fail.yaml", &down("Fail"))]);
    k.ok(&["delete", "validatingwebhookconfiguration", "down"]);
    assert_eq!(
        apply(&k, "cm2.yaml", &configmap("two", "default", "")).code,
        0
    );
}

#[test]
fn slow_webhooks_time_out() {
    let server = WebhookServer::start(&[], Duration::from_secs(5), Arc::new(|_: &Value| allow()));
    let sim = sim();
    let k = Kubectl::new(&sim);
    let slow = |policy: &str| {
        config(
            "ValidatingWebhookConfiguration",
            "slow",
            &url_client(&server, "/"),
            &server.ca_bundle(),
            CONFIGMAPS,
            &format!("    timeoutSeconds: 1\n    failurePolicy: {policy}\n"),
        )
    };
    k.ok(&["apply", "-f", &k.file("fail.yaml", &slow("Fail"))]);
    let started = Instant::now();
    let out = apply(&k, "cm.yaml", &configmap("one", "default", ""));
    let took = started.elapsed();
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(&format!(
            "Internal error occurred: failed calling webhook \"slow.piceli.dev\": failed to call webhook: Post \"{}?timeout=1s\": context deadline exceeded\n",
            server.url("/")
        )),
        "{}",
        out.stderr
    );
    assert!(took < Duration::from_millis(3500), "took {took:?}");
    k.ok(&["apply", "-f", &k.file("ignore.yaml", &slow("Ignore"))]);
    let started = Instant::now();
    let out = apply(&k, "cm.yaml", &configmap("one", "default", ""));
    let took = started.elapsed();
    assert_eq!(out.code, 0, "{out:?}");
    assert!(took < Duration::from_millis(3500), "took {took:?}");
}

#[test]
fn dry_runs_need_webhooks_without_side_effects() {
    let server = WebhookServer::start(&[], Duration::ZERO, Arc::new(|_: &Value| allow()));
    let sim = sim();
    let k = Kubectl::new(&sim);
    let with = |effects: &str| {
        config(
            "ValidatingWebhookConfiguration",
            "effects",
            &url_client(&server, "/"),
            &server.ca_bundle(),
            CONFIGMAPS,
            "",
        )
        .replace("sideEffects: None", &format!("sideEffects: {effects}"))
    };
    k.ok(&["apply", "-f", &k.file("none.yaml", &with("None"))]);
    let cm = k.file("cm.yaml", &configmap("dry", "default", ""));
    let out = k.run(&["apply", "--dry-run=server", "-f", &cm]);
    assert_eq!(out.code, 0, "{out:?}");
    let seen = server.seen();
    assert_eq!(seen.last().expect("called")["dryRun"], true);
    assert_eq!(
        seen.last().expect("called")["options"]["dryRun"],
        json!(["All"])
    );
    assert_ne!(
        k.run(&["get", "configmap", "dry"]).code,
        0,
        "a dry run stores nothing"
    );

    k.ok(&["apply", "-f", &k.file("some.yaml", &with("Some"))]);
    let calls = server.seen().len();
    let out = k.run(&["apply", "--dry-run=server", "-f", &cm]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("admission webhook \"effects.piceli.dev\" does not support dry run"),
        "{}",
        out.stderr
    );
    assert_eq!(server.seen().len(), calls, "not called on a dry run");
    assert_eq!(k.run(&["apply", "-f", &cm]).code, 0, "real writes still go");
}

#[test]
fn selectors_and_rules_choose_the_requests() {
    let server = WebhookServer::start(
        &[],
        Duration::ZERO,
        Arc::new(|_: &Value| json!({"allowed": false, "status": {"message": "guarded"}})),
    );
    let sim = sim();
    let k = Kubectl::new(&sim);
    let extra = "    namespaceSelector: {matchLabels: {guard: 'on'}}
    objectSelector: {matchExpressions: [{key: exempt, operator: DoesNotExist}]}
";
    let cfg = config(
        "ValidatingWebhookConfiguration",
        "guard",
        &url_client(&server, "/"),
        &server.ca_bundle(),
        CONFIGMAPS,
        extra,
    );
    k.ok(&["apply", "-f", &k.file("cfg.yaml", &cfg)]);
    k.ok(&["create", "namespace", "guarded"]);
    k.ok(&["label", "namespace", "guarded", "guard=on"]);
    k.ok(&["create", "namespace", "free"]);
    assert_eq!(
        apply(&k, "a.yaml", &configmap("a", "free", "")).code,
        0,
        "namespace not selected"
    );
    let out = apply(&k, "b.yaml", &configmap("b", "guarded", ""));
    assert!(
        out.stderr
            .contains("admission webhook \"guard.piceli.dev\" denied the request: guarded"),
        "{out:?}"
    );
    assert_eq!(
        apply(
            &k,
            "c.yaml",
            &configmap("c", "guarded", ", labels: {exempt: 'yes'}")
        )
        .code,
        0,
        "object not selected"
    );
    assert_eq!(
        k.run(&["create", "secret", "generic", "s", "-n", "guarded"])
            .code,
        0,
        "resource not in the rules"
    );
    assert_eq!(server.seen().len(), 1);
    // Removing the exemption is an update the webhook sees (the new object matches): denied.
    let out = k.run(&["label", "configmap", "c", "-n", "guarded", "exempt-"]);
    assert_ne!(out.code, 0, "{out:?}");
    // DELETE is admitted as well: once its namespace is guarded, "a" may not be deleted.
    k.ok(&["label", "namespace", "free", "guard=on"]);
    let out = k.run(&["delete", "configmap", "a", "-n", "free"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr.contains("denied the request: guarded"),
        "{out:?}"
    );
    let seen = server.seen();
    let last = seen.last().expect("called on delete");
    assert_eq!(last["operation"], "DELETE");
    assert_eq!(last["object"], Value::Null);
    assert_eq!(last["oldObject"]["metadata"]["name"], "a");
    k.ok(&["get", "configmap", "a", "-n", "free"]);
    assert_eq!(last["options"]["kind"], "DeleteOptions");
}

#[test]
fn a_wrong_ca_bundle_is_a_call_failure() {
    let server = WebhookServer::start(&[], Duration::ZERO, Arc::new(|_: &Value| allow()));
    let (other_ca, _) = webhook::new_ca();
    let sim = sim();
    let k = Kubectl::new(&sim);
    let cfg = config(
        "ValidatingWebhookConfiguration",
        "untrusted",
        &url_client(&server, "/"),
        &webhook::b64(&other_ca),
        CONFIGMAPS,
        "",
    );
    k.ok(&["apply", "-f", &k.file("cfg.yaml", &cfg)]);
    let out = apply(&k, "cm.yaml", &configmap("one", "default", ""));
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("failed calling webhook \"untrusted.piceli.dev\"")
            && out
                .stderr
                .contains("x509: certificate signed by unknown authority"),
        "{}",
        out.stderr
    );
    assert!(server.seen().is_empty());
}

#[test]
fn service_webhooks_reach_a_mapped_pod_port() {
    let server = WebhookServer::start(
        &["hook.webhooks.svc"],
        Duration::ZERO,
        Arc::new(|r: &Value| {
            if r.pointer("/object/data/forbidden").is_some() {
                json!({"allowed": false, "status": {"code": 422, "message": "forbidden key"}})
            } else {
                json!({"allowed": true})
            }
        }),
    );
    let sim = live_sim();
    let k = Kubectl::new(&sim);
    let backend = "apiVersion: v1
kind: Namespace
metadata: {name: webhooks}
---
apiVersion: v1
kind: Service
metadata: {name: hook, namespace: webhooks}
spec:
  selector: {app: hook}
  ports: [{port: 443, targetPort: https}]
---
apiVersion: v1
kind: Pod
metadata: {name: hook, namespace: webhooks, labels: {app: hook}}
spec:
  containers: [{name: hook, image: 'hook:1.0', ports: [{name: https, containerPort: 8443}]}]
";
    k.ok(&["apply", "-f", &k.file("backend.yaml", backend)]);
    sim.map_port("webhooks", "app=hook", 8443, server.addr)
        .expect("map port");
    let cfg = config(
        "ValidatingWebhookConfiguration",
        "svc",
        "service: {namespace: webhooks, name: hook, path: /check}",
        &server.ca_bundle(),
        CONFIGMAPS,
        "",
    );
    k.ok(&["apply", "-f", &k.file("cfg.yaml", &cfg)]);
    let ok = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fine}\ndata: {k: v}\n";
    let out = apply(&k, "ok.yaml", ok);
    assert_eq!(out.code, 0, "{out:?}");
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {forbidden: x}\n";
    let out = apply(&k, "bad.yaml", bad);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("admission webhook \"svc.piceli.dev\" denied the request: forbidden key"),
        "{}",
        out.stderr
    );
    assert!(!server.seen().is_empty());
    // Without a mapped pod port the service has no reachable endpoint: a call failure.
    sim.unmap_port("webhooks", 8443);
    let out = apply(&k, "ok2.yaml", &ok.replace("fine", "fine2"));
    assert!(
        out.stderr
            .contains("Internal error occurred: failed calling webhook \"svc.piceli.dev\": failed to call webhook: Post \"https://hook.webhooks.svc:443/check?timeout=10s\": no endpoints available for service \"hook\"\n"),
        "{out:?}"
    );
    // Without the Service at all, as the apiserver's resolver says it when the client dials.
    k.ok(&["delete", "service", "hook", "-n", "webhooks"]);
    let out = apply(&k, "ok3.yaml", &ok.replace("fine", "fine3"));
    assert!(
        out.stderr.contains(
            "failed to call webhook: Post \"https://hook.webhooks.svc:443/check?timeout=10s\": service \"hook\" not found\n"
        ),
        "{out:?}"
    );
}

#[test]
fn webhook_calls_reuse_keep_alive_connections() {
    let sim = sim();
    let k = Kubectl::new(&sim);
    let server = WebhookServer::start(&[], Duration::ZERO, Arc::new(|_: &Value| allow()));
    let cfg = config(
        "ValidatingWebhookConfiguration",
        "keepalive",
        &url_client(&server, "/validate"),
        &server.ca_bundle(),
        CONFIGMAPS,
        "",
    );
    assert_eq!(apply(&k, "cfg.yaml", &cfg).code, 0);
    for i in 0..10 {
        k.ok(&["create", "configmap", &format!("c{i}")]);
    }
    assert!(server.seen().len() >= 10, "every create was admitted");
    let connections = server.connections.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        connections <= 2,
        "10 sequential admission calls used {connections} TLS connections"
    );
}
