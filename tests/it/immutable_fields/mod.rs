//! Immutable fields, end to end (in process, on the local cluster or on the real control plane of
//! `PICELI_REAL_KUBECONFIG`): a release that changes a Deployment's selector, a StatefulSet's claim
//! templates and the data of a ConfigMap marked `immutable: true` is planned as three `replace` actions
//! whose reasons name the field and how the old object goes (the StatefulSet with propagation Orphan:
//! its pod and claim stay, and the new StatefulSet adopts the pod); nothing changes until the plan is approved; apply backs each old object up in
//! the journal, deletes it and creates the new one (pods of the new selector run); a re-plan is a no-op;
//! `rollback` re-creates release 1's objects; a kill after a replace's delete is finished by `resume`, with
//! one backup. A PersistentVolumeClaim whose class changes is refused at
//! plan (PCL0223) and left as it is.

mod edges;

use piceli::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use piceli::k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Pod};
use piceli::runtime::Coded;
use piceli::runtime::engine::EngineError;
use piceli::runtime::engine::plan::{Action, ActionKind, Plan};
use piceli::runtime::engine::replace::Propagation;
use piceli::runtime::engine::session::Session;
use piceli::runtime::journal::ReleaseId;
use piceli_test_support::Cluster;
use std::time::Duration;

const NS: &str = "imm";

fn image(tag: &str) -> String {
    format!("docker.io/library/nginx:{tag}@sha256:{}", "ab".repeat(32))
}

/// The ConfigMap marked immutable, with `mode` as its data.
fn settings(mode: &str) -> Vec<piceli::Object> {
    vec![piceli::Object(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings"},
        "immutable": true,
        "data": {"mode": mode}
    }))]
}

mod v1 {
    use super::{image, settings};
    piceli::app! {
        app imm-test;
        target local = local(namespace: "imm");
        deployment web {
            image: (image("web")),
            replicas: 1,
            ports: { http: 80 },
            pod_labels: { app: "web" },
            spec: { selector: { matchLabels: { app: "web" } } },
        }
        service db -> db { port: 5432 => pg, spec: { clusterIP: "None" } }
        stateful_set db {
            image: (image("db")),
            replicas: 1,
            service: db,
            ports: { pg: 5432 },
            volume_claims: { data: { storage: "1Gi", access: ["ReadWriteOnce"] } },
        }
        include objects((settings("a")));
    }
}

mod v2 {
    use super::{image, settings};
    piceli::app! {
        app imm-test;
        target local = local(namespace: "imm");
        deployment web {
            image: (image("web")),
            replicas: 1,
            ports: { http: 80 },
            pod_labels: { app: "web2" },
            spec: { selector: { matchLabels: { app: "web2" } } },
        }
        service db -> db { port: 5432 => pg, spec: { clusterIP: "None" } }
        stateful_set db {
            image: (image("db")),
            replicas: 1,
            service: db,
            ports: { pg: 5432 },
            volume_claims: { data: { storage: "2Gi", access: ["ReadWriteOnce"] } },
        }
        include objects((settings("b")));
    }
}

/// A ConfigMap marked immutable with the keys `keys` (each key's value is its name).
fn marked(keys: &[&str]) -> Vec<piceli::Object> {
    let data: serde_json::Map<String, serde_json::Value> = keys
        .iter()
        .map(|k| (k.to_string(), serde_json::Value::from(*k)))
        .collect();
    vec![piceli::Object(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "marked"},
        "immutable": true,
        "data": data
    }))]
}

mod marked_v1 {
    use super::marked;
    piceli::app! {
        app imm-marked;
        target local = local(namespace: "imm-marked");
        include objects((marked(&["mode", "extra"])));
    }
}

mod marked_v2 {
    use super::marked;
    piceli::app! {
        app imm-marked;
        target local = local(namespace: "imm-marked");
        include objects((marked(&["mode"])));
    }
}

mod claim_v1 {
    piceli::app! {
        app imm-claim;
        target local = local(namespace: "imm-claim");
        pvc data { storage: "1Gi", access: ["ReadWriteOnce"], class: "standard" }
    }
}

mod claim_v2 {
    piceli::app! {
        app imm-claim;
        target local = local(namespace: "imm-claim");
        pvc data { storage: "1Gi", access: ["ReadWriteOnce"], class: "fast" }
    }
}

use crate::cluster_session::options;

fn api<K>(cluster: &Cluster, ns: &str) -> kube::Api<K>
where
    K: kube::Resource<Scope = piceli::k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    kube::Api::namespaced(cluster.client().expect("client"), ns)
}

fn action<'p>(plan: &'p Plan, kind: &str) -> &'p Action {
    plan.actions
        .iter()
        .find(|a| a.object.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} in the plan"))
}

async fn uid_of<K>(cluster: &Cluster, name: &str) -> String
where
    K: kube::Resource<Scope = piceli::k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    <K as kube::Resource>::DynamicType: Default,
{
    let o = api::<K>(cluster, NS).get(name).await.expect("get");
    o.meta().uid.clone().expect("uid")
}

/// The names of the pods labelled `app=VALUE` that are not being deleted.
async fn pods_labelled(cluster: &Cluster, value: &str) -> Vec<String> {
    let params = kube::api::ListParams::default().labels(&format!("app={value}"));
    api::<Pod>(cluster, NS)
        .list(&params)
        .await
        .expect("pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.metadata.name)
        .collect()
}

/// Waits until `check` holds (the controllers of either cluster act within seconds).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..600 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("never: {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immutable_changes_are_replaced_once_approved_and_rolled_back() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());

    let first = Session::open(v1::imm_test::app(), &opts)
        .await
        .expect("session");
    let plan = first.plan(vec![], false).await.expect("plan 1");
    first.apply(&plan.hash).await.expect("release 1");
    eventually("a pod of selector app=web", || async {
        !pods_labelled(&cluster, "web").await.is_empty()
    })
    .await;
    eventually("the StatefulSet's pod", || async {
        api::<Pod>(&cluster, NS)
            .get_opt("db-0")
            .await
            .ok()
            .flatten()
            .is_some()
    })
    .await;
    eventually("the StatefulSet's claim", || async {
        api::<PersistentVolumeClaim>(&cluster, NS)
            .get_opt("data-db-0")
            .await
            .ok()
            .flatten()
            .is_some()
    })
    .await;
    let old_web = uid_of::<Deployment>(&cluster, "web").await;
    let old_db = uid_of::<StatefulSet>(&cluster, "db").await;
    let old_settings = uid_of::<ConfigMap>(&cluster, "settings").await;
    let old_pod = uid_of::<Pod>(&cluster, "db-0").await;
    let old_claim = uid_of::<PersistentVolumeClaim>(&cluster, "data-db-0").await;

    // Release 2 changes three immutable fields: three replaces, each saying which field and why.
    let second = Session::open(v2::imm_test::app(), &opts)
        .await
        .expect("session");
    let plan = second.plan(vec![], false).await.expect("plan 2");
    let web = action(&plan, "Deployment");
    assert_eq!(web.action, ActionKind::Replace, "{web:?}");
    assert_eq!(web.propagation, Some(Propagation::Background));
    let why = web.reason.as_deref().expect("a reason");
    assert!(
        why.starts_with("Deployment spec.selector is immutable"),
        "{why}"
    );
    assert!(why.contains("propagation Background"), "{why}");
    assert!(why.contains("To keep the live value instead"), "{why}");
    assert!(why.contains("`spec: { selector: … }`"), "{why}");
    assert!(
        web.diff
            .iter()
            .any(|c| c.path == "spec.selector.matchLabels.app"
                && c.before == Some("web".into())
                && c.after == Some("web2".into())),
        "{:?}",
        web.diff
    );
    let db = action(&plan, "StatefulSet");
    assert_eq!(db.action, ActionKind::Replace, "{db:?}");
    assert_eq!(db.propagation, Some(Propagation::Orphan));
    let why = db.reason.as_deref().expect("a reason");
    assert!(
        why.starts_with("StatefulSet spec.volumeClaimTemplates is immutable"),
        "{why}"
    );
    assert!(why.contains("propagation Orphan"), "{why}");
    assert!(why.contains("PersistentVolumeClaims stay"), "{why}");
    assert!(
        db.diff
            .iter()
            .any(|c| c.path.starts_with("spec.volumeClaimTemplates")),
        "{:?}",
        db.diff
    );
    let cm = action(&plan, "ConfigMap");
    assert_eq!(cm.action, ActionKind::Replace, "{cm:?}");
    let why = cm.reason.as_deref().expect("a reason");
    assert!(why.starts_with("ConfigMap data is immutable"), "{why}");
    assert!(
        cm.diff.iter().any(|c| c.path == "data.mode"
            && c.before == Some("a".into())
            && c.after == Some("b".into())),
        "{:?}",
        cm.diff
    );
    // The Service changes nothing.
    assert_eq!(action(&plan, "Service").action, ActionKind::Unchanged);
    // The approved hash covers how the old objects are deleted.
    let mut edited = plan.clone();
    for a in &mut edited.actions {
        if a.propagation.is_some() {
            a.propagation = Some(Propagation::Background);
        }
    }
    assert_ne!(
        edited.compute_hash(),
        plan.hash,
        "the hash covers the propagation"
    );
    // Planning wrote nothing: the same objects, nothing new.
    assert_eq!(uid_of::<Deployment>(&cluster, "web").await, old_web);
    assert_eq!(uid_of::<StatefulSet>(&cluster, "db").await, old_db);
    assert_eq!(
        uid_of::<ConfigMap>(&cluster, "settings").await,
        old_settings
    );
    let deployments = api::<Deployment>(&cluster, NS)
        .list(&Default::default())
        .await
        .expect("deployments");
    assert_eq!(deployments.items.len(), 1, "the plan created nothing");
    // Another hash approves nothing.
    let err = second
        .apply(&"0".repeat(64))
        .await
        .expect_err("an unknown hash");
    assert!(matches!(err, EngineError::UnknownPlan(_)), "{err}");
    assert_eq!(uid_of::<Deployment>(&cluster, "web").await, old_web);

    let applied = second.apply(&plan.hash).await.expect("release 2");
    let release = applied.release.expect("a release");
    let new_web = api::<Deployment>(&cluster, NS)
        .get("web")
        .await
        .expect("web");
    assert_ne!(new_web.metadata.uid.as_deref(), Some(old_web.as_str()));
    let selector = new_web.spec.expect("spec").selector.match_labels;
    assert_eq!(
        selector.and_then(|m| m.get("app").cloned()).as_deref(),
        Some("web2")
    );
    eventually("a pod of selector app=web2", || async {
        !pods_labelled(&cluster, "web2").await.is_empty()
    })
    .await;
    eventually("the old selector's pods gone", || async {
        pods_labelled(&cluster, "web").await.is_empty()
    })
    .await;
    let new_db = api::<StatefulSet>(&cluster, NS)
        .get("db")
        .await
        .expect("db");
    assert_ne!(new_db.metadata.uid.as_deref(), Some(old_db.as_str()));
    let templates = new_db.spec.expect("spec").volume_claim_templates;
    let storage = templates
        .and_then(|t| t.into_iter().next())
        .and_then(|t| t.spec)
        .and_then(|s| s.resources)
        .and_then(|r| r.requests)
        .and_then(|r| r.get("storage").cloned());
    assert_eq!(storage.map(|q| q.0).as_deref(), Some("2Gi"));
    // Orphan: the StatefulSet's pod and claim were not deleted with it.
    assert_eq!(
        uid_of::<Pod>(&cluster, "db-0").await,
        old_pod,
        "the pod stays"
    );
    assert_eq!(
        uid_of::<PersistentVolumeClaim>(&cluster, "data-db-0").await,
        old_claim,
        "the claim stays"
    );
    // … and the new StatefulSet adopts the pod its selector matches.
    let new_db_uid = new_db.metadata.uid.clone().expect("uid");
    eventually("the pod adopted by the new StatefulSet", || async {
        let pod = api::<Pod>(&cluster, NS).get("db-0").await.expect("pod");
        pod.metadata
            .owner_references
            .unwrap_or_default()
            .iter()
            .any(|o| o.uid == new_db_uid && o.controller == Some(true))
    })
    .await;
    assert_eq!(
        uid_of::<Pod>(&cluster, "db-0").await,
        old_pod,
        "the same pod"
    );
    let cm = api::<ConfigMap>(&cluster, NS)
        .get("settings")
        .await
        .expect("settings");
    assert_ne!(cm.metadata.uid.as_deref(), Some(old_settings.as_str()));
    assert_eq!(
        cm.data.and_then(|d| d.get("mode").cloned()).as_deref(),
        Some("b")
    );

    // The journal kept each replaced object as it was.
    let backups = second
        .state()
        .journal
        .backups(Some(ReleaseId(release)))
        .expect("backups");
    let kinds: Vec<&str> = backups.iter().map(|b| b.kind.as_str()).collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    for (kind, uid) in [
        ("Deployment", &old_web),
        ("StatefulSet", &old_db),
        ("ConfigMap", &old_settings),
    ] {
        let b = backups
            .iter()
            .find(|b| b.kind == kind)
            .unwrap_or_else(|| panic!("no backup of the {kind}"));
        assert_eq!(&b.uid, uid, "{kind}");
        assert!(b.object["status"].is_null() && b.object["metadata"]["uid"].is_null());
    }
    let web_backup = backups
        .iter()
        .find(|b| b.kind == "Deployment")
        .expect("web");
    assert_eq!(
        web_backup.object["spec"]["selector"]["matchLabels"]["app"],
        "web"
    );
    let steps = second
        .state()
        .journal
        .steps(ReleaseId(release))
        .expect("steps");
    assert_eq!(
        steps.iter().filter(|s| s.action == "replace").count(),
        3,
        "{steps:?}"
    );

    // The replaced objects are what the app declares: no replace again.
    let again = Session::open(v2::imm_test::app(), &opts)
        .await
        .expect("session");
    let replan = again.plan(vec![], false).await.expect("re-plan");
    assert!(
        replan
            .actions
            .iter()
            .all(|a| a.action != ActionKind::Replace),
        "{:?}",
        replan.actions
    );

    // Rolling back re-creates release 1's objects: a planned replace again, approved like any change.
    let rollback = again.plan_rollback(None).await.expect("rollback plan");
    assert_eq!(rollback.rollback_of, Some(1));
    let web = action(&rollback, "Deployment");
    assert_eq!(web.action, ActionKind::Replace, "{web:?}");
    assert_eq!(action(&rollback, "ConfigMap").action, ActionKind::Replace);
    assert_eq!(action(&rollback, "StatefulSet").action, ActionKind::Replace);
    let restored = again.apply(&rollback.hash).await.expect("rollback");
    let back = api::<Deployment>(&cluster, NS)
        .get("web")
        .await
        .expect("web");
    assert_ne!(back.metadata.uid, new_web.metadata.uid);
    assert_eq!(
        back.spec
            .expect("spec")
            .selector
            .match_labels
            .and_then(|m| m.get("app").cloned())
            .as_deref(),
        Some("web")
    );
    eventually("a pod of selector app=web again", || async {
        !pods_labelled(&cluster, "web").await.is_empty()
    })
    .await;
    let cm = api::<ConfigMap>(&cluster, NS)
        .get("settings")
        .await
        .expect("settings");
    assert_eq!(
        cm.data.and_then(|d| d.get("mode").cloned()).as_deref(),
        Some("a")
    );
    let rolled = again
        .state()
        .journal
        .backups(Some(ReleaseId(restored.release.expect("a release"))))
        .expect("backups");
    assert_eq!(rolled.len(), 3, "release 2's objects backed up in turn");
}
