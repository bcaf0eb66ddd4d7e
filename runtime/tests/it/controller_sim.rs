//! Controllers against the local cluster (piceli-sim), driven by the real kubectl: a CRD controller from
//! a Rust type that writes status and owns a child, cleaned up through its finalizer; edge handlers on
//! ConfigMaps (create, update with the old object, delete, timers) beside a second controller on the
//! same kind; a reliable on_delete retried with per-object backoff.

use crate::controller_support as support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Patch, PatchParams};
use kube::{CustomResource, ResourceExt};
use piceli_runtime::controller::status::{condition, set_condition};
use piceli_runtime::controller::{
    Action, Backoff, Context, Controller, ControllerOptions, Controllers, Event, EventType,
    RunOptions,
};
use piceli_test_support::Cluster;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use support::{Log, Operator, kubectl, kubectl_stdin, ok, wait_for};

/// A lamp: the custom resource of the tests.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Lamp",
    namespaced,
    status = "LampStatus"
)]
pub struct LampSpec {
    /// The colour it shines in.
    pub color: String,
}

/// What the controller reports.
#[derive(Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
pub struct LampStatus {
    /// `Ready`, with observedGeneration.
    #[serde(default)]
    #[schemars(schema_with = "conditions_schema")]
    pub conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
    /// The colour the lamp shines in.
    pub shining: Option<String>,
}

/// meta/v1 Conditions, kept as the API server gets them.
fn conditions_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
    })
}

fn sim() -> Cluster {
    Cluster::start()
}

fn options() -> RunOptions {
    RunOptions {
        operator_namespace: "default".into(),
        identity: "test-operator".into(),
        leader: None,
    }
}

fn get_json(sim: &Cluster, args: &[&str]) -> Option<Value> {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let (code, out, _) = kubectl(sim.kubeconfig_path(), &all);
    (code == 0).then(|| serde_json::from_str(&out).expect("kubectl prints JSON"))
}

mod lamps {
    use super::*;

    /// Reconciles a Lamp: its ConfigMap child (owned), its status; on delete, notes the cleanup.
    pub async fn reconcile(ev: Event<Lamp>, cx: Context, log: Log) -> Result<Action, kube::Error> {
        match ev {
            Event::Apply(lamp) => {
                let name = lamp.name_any();
                let child = ConfigMap {
                    metadata: kube::api::ObjectMeta {
                        name: Some(format!("lamp-{name}")),
                        owner_references: Context::owner_ref(lamp.as_ref()).map(|o| vec![o]),
                        ..Default::default()
                    },
                    data: Some(BTreeMap::from([("color".into(), lamp.spec.color.clone())])),
                    ..Default::default()
                };
                let params = PatchParams::apply("lamps").force();
                cx.api::<ConfigMap>()
                    .patch(&format!("lamp-{name}"), &params, &Patch::Apply(&child))
                    .await?;
                let mut conditions = lamp.status.clone().unwrap_or_default().conditions;
                let message = format!("shining {}", lamp.spec.color);
                set_condition(
                    &mut conditions,
                    condition(lamp.as_ref(), "Ready", true, "Shining", &message),
                );
                let status =
                    serde_json::json!({ "conditions": conditions, "shining": lamp.spec.color });
                cx.patch_status(lamp.as_ref(), status).await?;
                cx.event(lamp.as_ref(), EventType::Normal, "Shining", &message)
                    .await?;
                log.push(format!("apply {name} {}", lamp.spec.color));
                Ok(Action::await_change())
            }
            Event::Cleanup(lamp) => {
                log.push(format!("cleanup {}", lamp.name_any()));
                Ok(Action::await_change())
            }
        }
    }
}

#[test]
fn a_crd_controller_writes_status_owns_a_child_and_cleans_up_through_its_finalizer() {
    let sim = sim();
    let kc = sim.kubeconfig_path().to_path_buf();
    let crd = piceli_runtime::controller::custom_resource_definition::<Lamp>();
    let crd = serde_json::to_string(&crd.0).expect("CRD as JSON");
    let (code, _, err) = kubectl_stdin(&kc, &["apply", "-f", "-"], Some(&crd));
    assert_eq!(
        code, 0,
        "the CRD rendered from the Rust type applies: {err}"
    );
    wait_for(
        "the lamps kind to be served",
        Duration::from_secs(10),
        || kubectl(&kc, &["get", "lamps"]).0 == 0,
    );

    // kube-apiserver publishes a new CRD's schema in its OpenAPI documents a moment after it serves the
    // kind (the local cluster at once): kubectl explain is asked until it finds it.
    wait_for(
        "the lamps schema to be published",
        Duration::from_secs(30),
        || kubectl(&kc, &["explain", "lamps.spec"]).0 == 0,
    );
    let explained = ok(&kc, &["explain", "lamps.spec"]);
    assert!(
        explained.contains("color") && explained.contains("The colour it shines in."),
        "kubectl explain shows the schema from the Rust type: {explained}"
    );

    let log = Log::default();
    let handler_log = log.clone();
    let controllers =
        Controllers::new("lamps").finalize("lamp", ControllerOptions::default(), move |ev, cx| {
            lamps::reconcile(ev, cx, handler_log.clone())
        });
    let operator = Operator::start(controllers, || sim.client().expect("client"), options());

    let lamp =
        "apiVersion: example.com/v1\nkind: Lamp\nmetadata: {name: red}\nspec: {color: red}\n";
    let (code, _, err) = kubectl_stdin(&kc, &["apply", "-f", "-"], Some(lamp));
    assert_eq!(code, 0, "{err}");
    wait_for(
        "status Ready at generation 1",
        Duration::from_secs(15),
        || {
            get_json(&sim, &["get", "lamp", "red"]).is_some_and(|l| {
                l["status"]["conditions"][0]["status"] == "True"
                    && l["status"]["conditions"][0]["observedGeneration"] == 1
                    && l["status"]["shining"] == "red"
            })
        },
    );
    let live = get_json(&sim, &["get", "lamp", "red"]).expect("lamp");
    assert_eq!(
        live["metadata"]["finalizers"],
        serde_json::json!(["lamps.piceli.dev/lamp"]),
        "the controller holds its finalizer"
    );
    let child = get_json(&sim, &["get", "configmap", "lamp-red"]).expect("the child exists");
    assert_eq!(child["data"]["color"], "red");
    assert_eq!(
        child["metadata"]["ownerReferences"][0]["uid"],
        live["metadata"]["uid"]
    );
    assert_eq!(child["metadata"]["ownerReferences"][0]["controller"], true);
    let events = ok(&kc, &["get", "events.events.k8s.io", "-o", "json"]);
    assert!(
        events.contains("Shining"),
        "an Event was recorded: {events}"
    );

    ok(
        &kc,
        &[
            "patch",
            "lamp",
            "red",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"color":"blue"}}"#,
        ],
    );
    wait_for("status at generation 2", Duration::from_secs(15), || {
        get_json(&sim, &["get", "lamp", "red"]).is_some_and(|l| {
            l["status"]["conditions"][0]["observedGeneration"] == 2
                && l["status"]["shining"] == "blue"
        })
    });
    assert_eq!(
        get_json(&sim, &["get", "configmap", "lamp-red"]).expect("child")["data"]["color"],
        "blue"
    );

    let (code, _, err) = kubectl(&kc, &["delete", "lamp", "red", "--timeout=20s"]);
    assert_eq!(code, 0, "kubectl delete waits for the finalizer: {err}");
    assert!(
        log.has("cleanup red"),
        "Cleanup ran before the lamp went: {:?}",
        log.lines()
    );
    assert!(
        get_json(&sim, &["get", "lamp", "red"]).is_none(),
        "the lamp is gone"
    );
    // Its child goes with it: the cluster's garbage collector follows the ownerReference.
    wait_for(
        "the garbage collector to delete the owned child",
        Duration::from_secs(30),
        || get_json(&sim, &["get", "configmap", "lamp-red"]).is_none(),
    );
    operator.stop();
}

/// An edge controller that logs every edge.
struct Audit(Log);

impl Controller<ConfigMap> for Audit {
    type Error = kube::Error;

    async fn on_create(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), kube::Error> {
        self.0.push(format!("create {}", cm.name_any()));
        Ok(())
    }

    async fn on_update(
        &self,
        old: &ConfigMap,
        new: &ConfigMap,
        _cx: &Context,
    ) -> Result<(), kube::Error> {
        let value = |cm: &ConfigMap| {
            cm.data
                .as_ref()
                .and_then(|d| d.get("k").cloned())
                .unwrap_or_default()
        };
        self.0.push(format!(
            "update {} {}->{}",
            new.name_any(),
            value(old),
            value(new)
        ));
        Ok(())
    }

    async fn on_delete(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), kube::Error> {
        self.0.push(format!("delete {}", cm.name_any()));
        Ok(())
    }

    async fn on_timer(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), kube::Error> {
        self.0.push(format!("timer {}", cm.name_any()));
        Ok(())
    }
}

#[test]
fn edge_handlers_see_create_update_delete_and_timers_beside_a_second_controller_on_configmaps() {
    let sim = sim();
    let kc = sim.kubeconfig_path().to_path_buf();
    ok(&kc, &["create", "namespace", "audit"]);
    let audit = Log::default();
    let levels = Log::default();
    let level_log = levels.clone();
    let controllers = Controllers::new("audit")
        .edge(
            "audit",
            ControllerOptions::default()
                .namespaces(["audit"])
                .labels("audited=yes")
                .every(Duration::from_millis(300)),
            Audit(audit.clone()),
        )
        .reconcile(
            "count",
            ControllerOptions::default().namespaces(["audit"]),
            move |cm: Arc<ConfigMap>, _cx: Context| {
                let log = level_log.clone();
                async move {
                    log.push(format!("reconcile {}", cm.name_any()));
                    Ok::<_, kube::Error>(Action::await_change())
                }
            },
        );
    let operator = Operator::start(controllers, || sim.client().expect("client"), options());

    ok(
        &kc,
        &[
            "-n",
            "audit",
            "create",
            "configmap",
            "one",
            "--from-literal=k=a",
        ],
    );
    ok(
        &kc,
        &["-n", "audit", "label", "configmap", "one", "audited=yes"],
    );
    wait_for("on_create", Duration::from_secs(10), || {
        audit.has("create one")
    });
    ok(
        &kc,
        &[
            "-n",
            "audit",
            "patch",
            "configmap",
            "one",
            "-p",
            r#"{"data":{"k":"b"}}"#,
        ],
    );
    wait_for(
        "on_update with the old object",
        Duration::from_secs(10),
        || audit.has("update one a->b"),
    );
    wait_for("timers", Duration::from_secs(10), || {
        audit.count("timer one") >= 2
    });
    ok(&kc, &["-n", "audit", "create", "configmap", "unlabelled"]);
    ok(&kc, &["-n", "audit", "delete", "configmap", "one"]);
    wait_for("on_delete", Duration::from_secs(10), || {
        audit.has("delete one")
    });
    wait_for(
        "the second controller on configmaps",
        Duration::from_secs(10),
        || levels.has("reconcile one") && levels.has("reconcile unlabelled"),
    );
    let lines = audit.lines();
    assert_eq!(
        lines.iter().filter(|l| *l == "create one").count(),
        1,
        "one create: {lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("unlabelled")),
        "the label selector filters: {lines:?}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("update")).count(),
        1,
        "one update: {lines:?}"
    );
    let metrics = operator.metrics.render();
    assert!(
        metrics.contains("piceli_controller_reconciles_total{controller=\"audit\"}"),
        "{metrics}"
    );
    assert!(
        operator.metrics.ready(),
        "ready once both caches synced: {metrics}"
    );
    operator.stop();
}

/// on_delete that fails twice before it succeeds.
struct Flaky(Log);

impl Controller<ConfigMap> for Flaky {
    type Error = String;

    async fn on_delete(&self, cm: &ConfigMap, _cx: &Context) -> Result<(), String> {
        self.0.push(format!("delete {}", cm.name_any()));
        if self.0.count("delete") < 3 {
            return Err("the backing store is not reachable yet".into());
        }
        Ok(())
    }
}

#[test]
fn with_a_finalizer_on_delete_is_retried_with_backoff_until_it_succeeds() {
    let sim = sim();
    let kc = sim.kubeconfig_path().to_path_buf();
    let log = Log::default();
    let backoff = Backoff::Policy(piceli_runtime::retry::Policy {
        base: Duration::from_millis(100),
        ..Backoff::DEFAULT
    });
    let controllers = Controllers::new("tidy").edge(
        "tidy",
        ControllerOptions::default().finalizer().backoff(backoff),
        Flaky(log.clone()),
    );
    let operator = Operator::start(controllers, || sim.client().expect("client"), options());
    ok(&kc, &["create", "configmap", "kept"]);
    wait_for("the finalizer", Duration::from_secs(10), || {
        get_json(&sim, &["get", "configmap", "kept"]).is_some_and(|c| {
            c["metadata"]["finalizers"] == serde_json::json!(["tidy.piceli.dev/tidy"])
        })
    });
    let (code, _, err) = kubectl(&kc, &["delete", "configmap", "kept", "--timeout=20s"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        log.count("delete kept"),
        3,
        "two failures, then success: {:?}",
        log.lines()
    );
    assert!(get_json(&sim, &["get", "configmap", "kept"]).is_none());
    assert_eq!(
        operator.metrics.controller("tidy").map(|m| m.errors()),
        Some(2)
    );
    operator.stop();
}

#[test]
fn action_requeue_reconciles_again_after_the_delay_with_no_change() {
    let sim = sim();
    let kc = sim.kubeconfig_path().to_path_buf();
    let calls: Arc<std::sync::Mutex<Vec<(String, std::time::Instant)>>> = Arc::default();
    let seen = calls.clone();
    // `again` asks to be reconciled 300 ms later three times, then waits for a change; `still` waits at once.
    let controllers = Controllers::new("requeue").reconcile(
        "requeue",
        ControllerOptions::default(),
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let seen = seen.clone();
            async move {
                let name = cm.name_any();
                let mut calls = seen.lock().expect("calls");
                calls.push((name.clone(), std::time::Instant::now()));
                let mine = calls.iter().filter(|(n, _)| *n == name).count();
                Ok::<_, kube::Error>(if name == "again" && mine <= 3 {
                    Action::requeue(Duration::from_millis(300))
                } else {
                    Action::await_change()
                })
            }
        },
    );
    let operator = Operator::start(controllers, || sim.client().expect("client"), options());
    ok(&kc, &["create", "configmap", "again"]);
    ok(&kc, &["create", "configmap", "still"]);
    let of = |name: &str| -> Vec<std::time::Instant> {
        let calls = calls.lock().expect("calls");
        calls
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, at)| *at)
            .collect()
    };
    wait_for("three requeues", Duration::from_secs(20), || {
        of("again").len() >= 4
    });
    // Nothing changed, nothing more was asked: no further reconcile of either.
    std::thread::sleep(Duration::from_millis(1500));
    let again = of("again");
    assert_eq!(again.len(), 4, "once for the create, then three requeues");
    for pair in again.windows(2) {
        let waited = pair[1] - pair[0];
        assert!(
            waited >= Duration::from_millis(250),
            "a requeue waits its delay: {waited:?}"
        );
    }
    assert_eq!(
        of("still").len(),
        1,
        "await_change reconciles on a change only"
    );
    operator.stop();
}
