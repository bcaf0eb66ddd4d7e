//! A controller's own functions besides its handler, registered as the code `app!` generates registers
//! them (`reconcile_all_on`, `backoff_fn`), against the test's cluster (local or real): one item of the
//! app's stream reconciles every object within a second (the handler never asks for a requeue, so nothing
//! else would), and a failing object is retried at the pace the app's backoff function gives for each
//! attempt, which it is called with, with the handler's error.

use crate::controller_support as support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::stream;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use piceli_runtime::controller::{
    Action, Context, ControllerOptions, Controllers, HandlerError, RunOptions, backoff_fn,
    reconcile_all_on,
};
use piceli_test_support::Cluster;
use support::{Operator, kubectl_stdin, ok, wait_for};

/// Each reconcile: the object's name and when it ran.
#[derive(Clone, Default)]
struct Runs(Arc<Mutex<Vec<(String, Instant)>>>);

impl Runs {
    fn push(&self, name: String) {
        self.0.lock().expect("runs").push((name, Instant::now()));
    }

    fn of(&self, name: &str) -> Vec<Instant> {
        let runs = self.0.lock().expect("runs");
        runs.iter()
            .filter(|(n, _)| n == name)
            .map(|(_, t)| *t)
            .collect()
    }

    fn names_after(&self, since: Instant) -> Vec<String> {
        let runs = self.0.lock().expect("runs");
        let mut names: Vec<String> = runs
            .iter()
            .filter(|(_, t)| *t > since)
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

fn run_options(ns: &str) -> RunOptions {
    RunOptions {
        operator_namespace: ns.into(),
        identity: "test-operator".into(),
        leader: None,
    }
}

fn apply(kc: &std::path::Path, yaml: &str) {
    let (code, _, err) = kubectl_stdin(kc, &["apply", "-f", "-"], Some(yaml));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn an_item_of_the_apps_stream_reconciles_every_object_within_a_second() {
    const NS: &str = "all-on";
    let cluster = Cluster::start();
    let kc = cluster.kubeconfig_path().to_path_buf();
    ok(&kc, &["create", "namespace", NS]);
    for name in ["a", "b", "c"] {
        apply(
            &kc,
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {NS}, labels: {{gen: \"yes\"}}}}\n"
            ),
        );
    }

    // The app's function: each call gives a new stream of the signals sent after it.
    let (signal, _) = tokio::sync::broadcast::channel::<()>(4);
    let subscribe = signal.clone();
    let config_changes = move || {
        stream::unfold(subscribe.subscribe(), |mut rx| async move {
            rx.recv().await.ok().map(|()| ((), rx))
        })
    };
    let runs = Runs::default();
    let handler_runs = runs.clone();
    // Its own ConfigMaps only (the namespace also holds kube-root-ca.crt).
    let options = reconcile_all_on(
        ControllerOptions::default().labels("gen=yes"),
        config_changes,
    );
    let controllers = Controllers::new("gen").reconcile(
        "gen",
        options,
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let runs = handler_runs.clone();
            async move {
                runs.push(cm.name_any());
                Ok::<_, kube::Error>(Action::await_change())
            }
        },
    );
    let operator = Operator::start(
        controllers,
        || cluster.client().expect("client"),
        run_options(NS),
    );
    wait_for("the first reconciles", Duration::from_secs(15), || {
        ["a", "b", "c"].iter().all(|n| !runs.of(n).is_empty())
    });
    // Nothing else reconciles them: no change, no requeue.
    std::thread::sleep(Duration::from_millis(1500));
    let quiet = Instant::now();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        runs.names_after(quiet).is_empty(),
        "nothing but the signal reconciles"
    );

    for round in 0..2 {
        let sent = Instant::now();
        signal.send(()).expect("the controller's stream listens");
        wait_for("every object reconciled", Duration::from_secs(5), || {
            runs.names_after(sent) == ["a", "b", "c"]
        });
        let took = ["a", "b", "c"]
            .iter()
            .map(|n| {
                runs.of(n)
                    .into_iter()
                    .find(|t| *t > sent)
                    .map(|t| t.duration_since(sent))
                    .unwrap_or_default()
            })
            .max()
            .unwrap_or_default();
        println!("round {round}: every object reconciled {took:?} after the stream's item");
        assert!(
            took < Duration::from_secs(1),
            "round {round}: the last object reconciled {took:?} after the signal"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
    operator.stop();
}

/// The app's backoff: 700 ms after a conflict, whatever the attempt (the default would be 200, 400,
/// 800 ms); every call logged.
type Calls = Arc<Mutex<Vec<(u32, String)>>>;

#[test]
fn a_failing_object_is_retried_at_the_pace_of_the_apps_backoff_function() {
    const NS: &str = "backoff-fn";
    const DELAY: Duration = Duration::from_millis(700);
    let cluster = Cluster::start();
    let kc = cluster.kubeconfig_path().to_path_buf();
    ok(&kc, &["create", "namespace", NS]);

    let calls: Calls = Arc::default();
    let logged = calls.clone();
    let my_backoff = move |error: &HandlerError, attempt: u32| -> Duration {
        logged
            .lock()
            .expect("calls")
            .push((attempt, error.to_string()));
        if error.0.contains("conflict") {
            DELAY
        } else {
            Duration::from_secs(60)
        }
    };
    let runs = Runs::default();
    let handler_runs = runs.clone();
    let options = backoff_fn(ControllerOptions::default(), my_backoff);
    let controllers = Controllers::new("gen").reconcile(
        "gen",
        options,
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let runs = handler_runs.clone();
            async move {
                runs.push(cm.name_any());
                Err::<Action, _>(format!("409 conflict on {}", cm.name_any()))
            }
        },
    );
    let operator = Operator::start(
        controllers,
        || cluster.client().expect("client"),
        run_options(NS),
    );
    apply(
        &kc,
        &format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: flaky, namespace: {NS}}}\n"),
    );
    wait_for("four attempts", Duration::from_secs(15), || {
        runs.of("flaky").len() >= 4
    });
    operator.stop();

    let times = runs.of("flaky");
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    println!("gaps between attempts: {gaps:?}");
    for (i, gap) in gaps.iter().take(3).enumerate() {
        assert!(
            *gap >= DELAY - Duration::from_millis(50) && *gap < DELAY + Duration::from_millis(700),
            "retry {} came {gap:?} after the failure, not the function's {DELAY:?}: {gaps:?}",
            i + 1
        );
    }
    // Each object has its own count (the namespace's kube-root-ca.crt fails too, on its own attempts).
    let calls = calls.lock().expect("calls").clone();
    let flaky: Vec<u32> = calls
        .iter()
        .filter(|(_, e)| e == "409 conflict on flaky")
        .map(|(a, _)| *a)
        .take(3)
        .collect();
    assert_eq!(flaky, [1, 2, 3], "{calls:?}");
    assert!(
        calls.iter().all(|(_, e)| e.starts_with("409 conflict on ")),
        "the function is given the handler's error: {calls:?}"
    );
}
