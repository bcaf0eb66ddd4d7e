//! Health, metrics and shutdown of running controllers against the local cluster: `/readyz` answers 503
//! until every watch has listed (here: while the cluster is down) and 200 once it has; `/metrics` shows
//! the queue depth (changes seen whose reconcile has not started) growing behind a slow handler with
//! concurrency 1 and draining to 0, beside reconciles, errors, the duration histogram and leader status;
//! a graceful stop lets an in-flight reconcile finish before `run` returns.

use crate::controller_support as support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use piceli_runtime::controller::{Action, Context, ControllerOptions, Controllers, RunOptions};
use piceli_sim::{Sim, SimConfig};
use support::{Log, Operator, health_server, http_get, kubectl_stdin, ok, wait_for};

fn options() -> RunOptions {
    RunOptions {
        operator_namespace: "default".into(),
        identity: "health-test".into(),
        leader: None,
    }
}

/// A level-based controller whose handler logs `start NAME`, sleeps `took`, then logs `done NAME`.
fn slow(log: &Log, took: Duration) -> Controllers {
    let log = log.clone();
    Controllers::new("health").reconcile(
        "slow",
        ControllerOptions::default().concurrency(1),
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let log = log.clone();
            async move {
                log.push(format!("start {}", cm.name_any()));
                tokio::time::sleep(took).await;
                log.push(format!("done {}", cm.name_any()));
                Ok::<_, kube::Error>(Action::await_change())
            }
        },
    )
}

fn series(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
}

fn config_maps(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}}}\n"))
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn readyz_waits_for_the_first_list_and_metrics_show_the_queue_draining() {
    let dir = tempfile::tempdir().expect("cluster dir");
    let config = || SimConfig {
        dir: Some(dir.path().to_path_buf()),
        ..SimConfig::default()
    };
    let sim = Sim::start(config()).expect("the local cluster starts");
    let kc = sim.kubeconfig_path().to_path_buf();
    let log = Log::default();
    let controllers = slow(&log, Duration::from_millis(300));
    sim.stop();
    // The controllers start while the cluster is down: their watches cannot list.
    let kubeconfig = kube::config::Kubeconfig::read_from(&kc).expect("the kubeconfig");
    let client_of = move || {
        let opts = kube::config::KubeConfigOptions {
            context: Some(piceli_sim::kubeconfig::CONTEXT.to_string()),
            ..Default::default()
        };
        let config =
            futures::executor::block_on(kube::Config::from_custom_kubeconfig(kubeconfig, &opts))
                .expect("client config");
        kube::Client::try_from(config).expect("client")
    };
    let operator = Operator::start(controllers, client_of, options());
    let (health, _health_rt) = health_server(operator.metrics.clone());
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(2) {
        assert_eq!(
            http_get(health, "/readyz").0,
            503,
            "not ready before the cache has listed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(http_get(health, "/healthz").0, 200, "alive all the same");

    let sim = Sim::start(config()).expect("the local cluster starts again on its directory");
    wait_for("ready once listed", Duration::from_secs(60), || {
        http_get(health, "/readyz").0 == 200
    });
    let metrics = || http_get(health, "/metrics").1;
    let depth = "piceli_controller_queue_depth{controller=\"slow\"}";
    assert_eq!(series(&metrics(), depth), Some(0.0), "{}", metrics());

    let names = ["q1", "q2", "q3", "q4", "q5", "q6"];
    let (code, out, err) = kubectl_stdin(&kc, &["apply", "-f", "-"], Some(&config_maps(&names)));
    assert_eq!(code, 0, "{out}{err}");
    let mut deepest = 0.0f64;
    wait_for(
        "every ConfigMap reconciled",
        Duration::from_secs(30),
        || {
            deepest = deepest.max(series(&metrics(), depth).unwrap_or(0.0));
            names.iter().all(|n| log.has(&format!("done {n}")))
        },
    );
    assert!(
        deepest >= 2.0,
        "with concurrency 1 and a 300 ms handler, changes wait in the queue: deepest {deepest}"
    );
    wait_for("the queue drained", Duration::from_secs(10), || {
        series(&metrics(), depth) == Some(0.0)
    });
    let text = metrics();
    assert!(
        series(
            &text,
            "piceli_controller_reconciles_total{controller=\"slow\"}"
        )
        .is_some_and(|n| n >= names.len() as f64),
        "{text}"
    );
    assert_eq!(
        series(&text, "piceli_controller_errors_total{controller=\"slow\"}"),
        Some(0.0)
    );
    assert!(
        series(
            &text,
            "piceli_controller_reconcile_duration_seconds_bucket{controller=\"slow\",le=\"1\"}"
        )
        .is_some_and(|n| n >= names.len() as f64),
        "the 300 ms reconciles are in the 1 s bucket: {text}"
    );
    assert_eq!(series(&text, "piceli_controller_leader"), Some(1.0));
    operator.stop();
    drop(sim);
}

#[test]
fn a_graceful_stop_lets_the_in_flight_reconcile_finish() {
    let sim = Sim::start(SimConfig::default()).expect("the local cluster starts");
    let kc = sim.kubeconfig_path().to_path_buf();
    let log = Log::default();
    let operator = Operator::start(
        slow(&log, Duration::from_secs(2)),
        || sim.client().expect("client"),
        options(),
    );
    wait_for("ready", Duration::from_secs(30), || {
        operator.metrics.ready()
    });
    ok(&kc, &["create", "configmap", "busy"]);
    wait_for("the reconcile to start", Duration::from_secs(30), || {
        log.has("start busy")
    });
    assert!(!log.has("done busy"));
    let stopping = Instant::now();
    operator.stop();
    assert!(
        log.has("done busy"),
        "run returned only after the in-flight reconcile finished: {:?}",
        log.lines()
    );
    assert!(
        stopping.elapsed() >= Duration::from_millis(1000),
        "the stop waited for the 2 s handler ({:?})",
        stopping.elapsed()
    );
    ok(&kc, &["create", "configmap", "late"]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(!log.has("start late"), "nothing starts after the stop");
}
