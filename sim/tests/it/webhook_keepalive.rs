//! Webhook calls reuse keep-alive connections, as kube-apiserver's do: N writes through one validating
//! webhook use one TLS connection — also when the webhook answers chunked (Go's `net/http` does for
//! bodies over its 2 KiB buffer) — and concurrent writers a bounded few. The webhook server (real
//! HTTPS on loopback) counts the TLS connections it accepts; the writes go through the kube client.

use crate::common;
use crate::webhook;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::cm;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use piceli_sim::RunningSim;
use serde_json::{Value, json};
use webhook::WebhookServer;

const WRITES: usize = 30;

fn allow() -> webhook::Handler {
    Arc::new(|_: &Value| json!({"allowed": true, "warnings": ["seen by the keep-alive webhook"]}))
}

/// Registers one validating webhook for ConfigMaps served by `server`.
async fn register(client: &kube::Client, server: &WebhookServer) {
    let config: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "keepalive"},
        "webhooks": [{"name": "keepalive.piceli.dev", "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": server.url("/validate"), "caBundle": server.ca_bundle()},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                       "operations": ["CREATE"]}]}]
    }))
    .expect("configuration");
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &config)
        .await
        .expect("create the webhook configuration");
}

/// The namespace's ConfigMaps, once `server` is their validating webhook.
async fn configmaps_behind(sim: &RunningSim, server: &WebhookServer) -> Api<ConfigMap> {
    let client = sim.client().expect("client");
    register(&client, server).await;
    Api::default_namespaced(client)
}

/// `WRITES` sequential creates: every one calls the webhook, all over one TLS connection.
async fn sequential_writes_use_one_connection(
    sim: &RunningSim,
    server: &WebhookServer,
    prefix: &str,
    what: &str,
) {
    let cms = configmaps_behind(sim, server).await;
    create_sequentially(&cms, prefix, WRITES).await;
    assert_eq!(
        server.seen().len(),
        WRITES,
        "every create called the webhook"
    );
    assert_eq!(
        connections(server),
        1,
        "{WRITES} sequential admission calls{what} and their TLS connections"
    );
}

/// Creates `n` ConfigMaps one after the other, each admitted by the webhook.
async fn create_sequentially(cms: &Api<ConfigMap>, prefix: &str, n: usize) {
    for i in 0..n {
        cms.create(
            &PostParams::default(),
            &cm(&format!("{prefix}-{i}"), json!({"i": i.to_string()})),
        )
        .await
        .expect("create admitted by the webhook");
    }
}

fn connections(server: &WebhookServer) -> usize {
    server.connections.load(Ordering::SeqCst)
}

/// Runs the client side of a test (the webhook server has its own runtime, started outside this one).
fn block_on<F: std::future::Future>(test: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(test)
}

#[test]
fn sequential_writes_through_one_validating_webhook_use_one_connection() {
    let sim = common::sim();
    let server = WebhookServer::start(&[], Duration::ZERO, allow());
    block_on(sequential_writes_use_one_connection(
        &sim, &server, "plain", "",
    ));
}

#[test]
fn chunked_webhook_responses_keep_their_connection() {
    let sim = common::sim();
    let server = WebhookServer::start_chunked(allow());
    block_on(sequential_writes_use_one_connection(
        &sim,
        &server,
        "chunked",
        " answered chunked",
    ));
}

#[test]
fn concurrent_writers_use_a_bounded_few_connections() {
    const WRITERS: usize = 4;
    let sim = common::sim();
    let server = WebhookServer::start(&[], Duration::from_millis(5), allow());
    block_on(async {
        let cms = configmaps_behind(&sim, &server).await;
        let writers = (0..WRITERS).map(|w| {
            let cms = cms.clone();
            tokio::spawn(async move { create_sequentially(&cms, &format!("w{w}"), 10).await })
        });
        for writer in writers.collect::<Vec<_>>() {
            writer.await.expect("writer");
        }
        assert_eq!(
            server.seen().len(),
            WRITERS * 10,
            "every create called the webhook"
        );
        // A call finding no idle connection dials one and takes whichever is ready first (hyper's
        // pool, as Go's transport): a connection may be dialled that a freed one made unneeded.
        let used = connections(&server);
        assert!(
            (1..=2 * WRITERS).contains(&used),
            "{WRITERS} concurrent writers used {used} TLS connections for {} admission calls",
            WRITERS * 10
        );
    });
}

#[test]
fn a_connection_the_webhook_closed_while_idle_is_replaced() {
    let sim = common::sim();
    let server = WebhookServer::start_closing_idle(Duration::from_millis(300), allow());
    block_on(async {
        let cms = configmaps_behind(&sim, &server).await;
        create_sequentially(&cms, "before", 3).await;
        assert_eq!(connections(&server), 1, "three calls, one connection");
        // The server closes the pooled connection; the next call must not fail with its EOF.
        tokio::time::sleep(Duration::from_millis(800)).await;
        create_sequentially(&cms, "after", 3).await;
        assert_eq!(server.seen().len(), 6, "every create called the webhook");
        assert_eq!(
            connections(&server),
            2,
            "a new connection after the idle close"
        );
    });
}

#[test]
fn a_webhook_offering_http2_is_called_over_one_http2_connection() {
    let sim = common::sim();
    let server = WebhookServer::start_h2(allow());
    block_on(async {
        let cms = configmaps_behind(&sim, &server).await;
        create_sequentially(&cms, "h2", 10).await;
        assert_eq!(server.seen().len(), 10, "every create called the webhook");
        assert_eq!(
            server.http2_requests.load(Ordering::SeqCst),
            10,
            "over HTTP/2"
        );
        assert_eq!(connections(&server), 1, "one multiplexed connection");
    });
}
