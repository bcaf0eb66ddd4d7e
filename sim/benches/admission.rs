//! Admission overhead per write: server-side apply of a ConfigMap (every apply changes it) against a
//! release `piceli-sim serve --dir` process, sequentially (concurrency 1) — with no webhook, with a
//! validating webhook registered for another resource (the configuration cache only), and with one
//! validating webhook for ConfigMaps that allows everything (a real HTTPS call per write to a webhook
//! server in this process, on loopback). The overhead is measured in alternating rounds once that
//! webhook is registered: its `objectSelector` picks the labelled ConfigMap, so a round of writes to an
//! unlabelled one (not called) and a round to the labelled one (called) run under the same machine
//! load; the median of the rounds' differences is the figure. The TLS connections the webhook server
//! accepted show whether calls reuse them.
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
/// Alternating rounds, and writes per round, of the overhead measurement.
const ROUNDS: usize = 5;
const ROUND_WRITES: usize = 400;

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

/// `writes` sequential server-side applies, the ConfigMap labelled `admitted: "true"` when `admitted`;
/// returns writes/s and mean latency in ms.
async fn applies(api: &Api<ConfigMap>, name: &str, writes: usize, admitted: bool) -> (f64, f64) {
    let pp = PatchParams::apply("bench");
    let labels = if admitted {
        json!({"admitted": "true"})
    } else {
        json!({})
    };
    let started = Instant::now();
    for i in 0..writes {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name, "labels": labels},
                        "data": {"generation": i.to_string(), "a": "alpha", "b": "bravo"}});
        api.patch(name, &pp, &Patch::Apply(&cm))
            .await
            .expect("apply");
    }
    let secs = started.elapsed().as_secs_f64();
    (writes as f64 / secs, secs * 1000.0 / writes as f64)
}

fn webhook_config(
    name: &str,
    resource: &str,
    hook: &webhook::WebhookServer,
) -> ValidatingWebhookConfiguration {
    let selector = json!({"matchLabels": {"admitted": "true"}});
    serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{"name": format!("{name}.piceli.dev"), "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": hook.url("/validate"), "caBundle": hook.ca_bundle()},
            "objectSelector": selector,
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
        applies(&cms, "warm-up", WRITES, false).await;
        let (none, none_ms) = applies(&cms, "plain", WRITES, false).await;
        println!("no webhook:                      {none:>7.0} writes/s, mean {none_ms:.3} ms");
        hooks
            .create(
                &PostParams::default(),
                &webhook_config("secrets", "secrets", &hook),
            )
            .await
            .expect("create configuration");
        let (other, other_ms) = applies(&cms, "other", WRITES, true).await;
        println!("webhook for another resource:    {other:>7.0} writes/s, mean {other_ms:.3} ms");
        hooks
            .create(
                &PostParams::default(),
                &webhook_config("configmaps", "configmaps", &hook),
            )
            .await
            .expect("create configuration");
        applies(&cms, "admitted", WRITES / 10, true).await;
        let mut added = Vec::new();
        let (mut admitted_secs, mut admitted_writes) = (0.0, 0);
        for round in 1..=ROUNDS {
            let (_, skipped_ms) = applies(&cms, "not-selected", ROUND_WRITES, false).await;
            let (_, called_ms) = applies(&cms, "admitted", ROUND_WRITES, true).await;
            println!(
                "round {round}: not selected mean {skipped_ms:.3} ms, one validating webhook mean {called_ms:.3} ms: +{:.3} ms",
                called_ms - skipped_ms
            );
            added.push(called_ms - skipped_ms);
            admitted_secs += called_ms * ROUND_WRITES as f64 / 1000.0;
            admitted_writes += ROUND_WRITES;
        }
        added.sort_by(f64::total_cmp);
        let one = admitted_writes as f64 / admitted_secs;
        let one_ms = admitted_secs * 1000.0 / admitted_writes as f64;
        println!("one validating webhook:          {one:>7.0} writes/s, mean {one_ms:.3} ms");
        println!(
            "admission overhead per write:    {:.3} ms (median of {ROUNDS} rounds; webhook calls received: {} over {} TLS connections)",
            added[ROUNDS / 2],
            hook.seen().len(),
            hook.connections.load(std::sync::atomic::Ordering::SeqCst)
        );
    });
}
