//! Admission overhead per write: server-side apply of a ConfigMap (every apply changes it) against a
//! release `piceli-sim serve --dir` process, sequentially (concurrency 1) — with no webhook, with a
//! validating webhook registered for another resource (the configuration cache only), and with one
//! validating webhook for ConfigMaps that allows everything (a real HTTPS call per write to a webhook
//! server in this process, on loopback).
//!
//! Run: `cargo bench -p piceli-sim --bench admission`

#[path = "../tests/admission/webhook.rs"]
mod webhook;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const WRITES: usize = 1000;

struct Server {
    child: Child,
    dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let child = Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
        .args(["serve", "--no-controllers", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start piceli-sim serve");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.path().join("sim.pid").exists() {
        assert!(Instant::now() < deadline, "server did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Server { child, dir }
}

async fn client(server: &Server) -> kube::Client {
    let yaml = std::fs::read_to_string(server.dir.path().join("kubeconfig")).expect("kubeconfig");
    let kc = kube::config::Kubeconfig::from_yaml(&yaml).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

/// Sequential server-side applies; returns writes/s and mean latency in ms.
async fn applies(api: &Api<ConfigMap>, name: &str) -> (f64, f64) {
    let pp = PatchParams::apply("bench");
    let started = Instant::now();
    for i in 0..WRITES {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                        "data": {"generation": i.to_string(), "a": "alpha", "b": "bravo"}});
        api.patch(name, &pp, &Patch::Apply(&cm))
            .await
            .expect("apply");
    }
    let secs = started.elapsed().as_secs_f64();
    (WRITES as f64 / secs, secs * 1000.0 / WRITES as f64)
}

fn webhook_config(
    name: &str,
    resource: &str,
    hook: &webhook::WebhookServer,
) -> ValidatingWebhookConfiguration {
    serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{"name": format!("{name}.piceli.dev"), "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": hook.url("/validate"), "caBundle": hook.ca_bundle()},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": [resource], "operations": ["*"]}]}]
    }))
    .expect("configuration")
}

fn main() {
    let hook = webhook::WebhookServer::start(
        &[],
        Duration::ZERO,
        Arc::new(|_: &Value| json!({"allowed": true})),
    );
    let server = start_server();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let client = client(&server).await;
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let hooks: Api<ValidatingWebhookConfiguration> = Api::all(client);
        // Warm-up (connections, caches, SQLite pages).
        applies(&cms, "warm-up").await;
        let (none, none_ms) = applies(&cms, "plain").await;
        println!("no webhook:                      {none:>7.0} writes/s, mean {none_ms:.3} ms");
        hooks
            .create(
                &PostParams::default(),
                &webhook_config("secrets", "secrets", &hook),
            )
            .await
            .expect("create configuration");
        let (other, other_ms) = applies(&cms, "other").await;
        println!("webhook for another resource:    {other:>7.0} writes/s, mean {other_ms:.3} ms");
        hooks
            .create(
                &PostParams::default(),
                &webhook_config("configmaps", "configmaps", &hook),
            )
            .await
            .expect("create configuration");
        let (one, one_ms) = applies(&cms, "admitted").await;
        println!("one validating webhook:          {one:>7.0} writes/s, mean {one_ms:.3} ms");
        println!(
            "admission overhead per write:    {:.3} ms (webhook calls received: {})",
            one_ms - none_ms,
            hook.seen().len()
        );
    });
}
