//! A controller's own finalizer name and retry policy, against the test's cluster (local or real) with
//! the real kubectl: a finalizer named `example.com/cleanup` is put on objects and taken off after the
//! cleanup, also on an object that carried it before the operator started (migrating an operator's
//! finalizer); a failing object is retried at the declared pace, beside a controller with the default
//! policy on the same object.

use crate::controller_support as support;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use piceli_runtime::controller::{
    Action, Backoff, Context, ControllerOptions, Controllers, Event, RunOptions,
};
use piceli_test_support::Cluster;
use support::{Log, Operator, kubectl, kubectl_stdin, ok, wait_for};

fn options(ns: &str) -> RunOptions {
    RunOptions {
        operator_namespace: ns.into(),
        identity: "test-operator".into(),
        leader: None,
    }
}

fn finalizers(kc: &std::path::Path, ns: &str, name: &str) -> Option<String> {
    let (code, out, _) = kubectl(
        kc,
        &[
            "-n",
            ns,
            "get",
            "configmap",
            name,
            "-o",
            "jsonpath={.metadata.finalizers}",
        ],
    );
    (code == 0).then_some(out)
}

#[test]
fn a_finalizer_named_by_the_user_is_held_and_released_also_on_objects_that_had_it_before() {
    const NS: &str = "fin";
    let cluster = Cluster::start();
    let kc = cluster.kubeconfig_path().to_path_buf();
    ok(&kc, &["create", "namespace", NS]);
    // An object an earlier operator finalized with the same name.
    let old = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: old, namespace: {NS}, finalizers: [example.com/cleanup]}}\n"
    );
    let (code, _, err) = kubectl_stdin(&kc, &["apply", "-f", "-"], Some(&old));
    assert_eq!(code, 0, "{err}");

    let log = Log::default();
    let handler_log = log.clone();
    let controllers = Controllers::new("fin").finalize(
        "tidy",
        ControllerOptions::default().finalizer_named("example.com/cleanup"),
        move |ev: Event<ConfigMap>, _cx: Context| {
            let log = handler_log.clone();
            async move {
                match ev {
                    Event::Apply(cm) => log.push(format!("apply {}", cm.name_any())),
                    Event::Cleanup(cm) => log.push(format!("cleanup {}", cm.name_any())),
                }
                Ok::<_, kube::Error>(Action::await_change())
            }
        },
    );
    let operator = Operator::start(
        controllers,
        || cluster.client().expect("client"),
        options(NS),
    );

    ok(&kc, &["-n", NS, "create", "configmap", "new"]);
    wait_for(
        "the finalizer on the new object",
        Duration::from_secs(15),
        || finalizers(&kc, NS, "new").as_deref() == Some(r#"["example.com/cleanup"]"#),
    );
    assert_eq!(
        finalizers(&kc, NS, "old").as_deref(),
        Some(r#"["example.com/cleanup"]"#),
        "the old object keeps the one finalizer (the default name is not added beside it)"
    );
    for name in ["new", "old"] {
        let (code, _, err) = kubectl(
            &kc,
            &["-n", NS, "delete", "configmap", name, "--timeout=20s"],
        );
        assert_eq!(code, 0, "deleting {name} waits for the cleanup: {err}");
        assert!(log.has(&format!("cleanup {name}")), "{:?}", log.lines());
        assert!(finalizers(&kc, NS, name).is_none(), "{name} is gone");
    }
    operator.stop();
}

#[test]
fn a_failing_object_is_retried_at_the_declared_pace_beside_the_default_one() {
    const NS: &str = "retry";
    let cluster = Cluster::start();
    let kc = cluster.kubeconfig_path().to_path_buf();
    ok(&kc, &["create", "namespace", NS]);
    let log = Log::default();
    let failing = |tag: &'static str, log: Log| {
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let log = log.clone();
            async move {
                log.push(format!("{tag} {}", cm.name_any()));
                Err::<Action, _>("always fails")
            }
        }
    };
    let fast = Backoff::exponential(Duration::from_millis(100), Duration::from_millis(100));
    let controllers = Controllers::new("retry")
        .reconcile(
            "fast",
            ControllerOptions::default()
                .labels("fail=yes")
                .backoff(fast),
            failing("fast", log.clone()),
        )
        .reconcile(
            "default",
            ControllerOptions::default().labels("fail=yes"),
            failing("default", log.clone()),
        );
    let operator = Operator::start(
        controllers,
        || cluster.client().expect("client"),
        options(NS),
    );
    ok(&kc, &["-n", NS, "create", "configmap", "broken"]);
    ok(&kc, &["-n", NS, "label", "configmap", "broken", "fail=yes"]);
    wait_for("the first attempts", Duration::from_secs(15), || {
        log.count("fast ") > 0 && log.count("default ") > 0
    });
    std::thread::sleep(Duration::from_millis(1500));
    let (fast, default) = (log.count("fast "), log.count("default "));
    // 100 ms apart (±20%): at least 10 in 1.5 s. The default doubles from 200 ms: 0, 0.2, 0.6, 1.4 s.
    assert!(
        fast >= 10,
        "the declared backoff retried {fast} times in 1.5 s"
    );
    assert!(
        default <= 5,
        "the default backoff retried {default} times in 1.5 s"
    );
    operator.stop();
}
