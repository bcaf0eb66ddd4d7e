//! Deletion as kube-apiserver and kube-controller-manager do it: Namespaces go `Terminating` until
//! their contents are gone, finalizers hold objects of deleted namespaces and owners, no finalizer may
//! be added to an object being deleted, dangling owner references are collected, Pods are deleted
//! gracefully unless forced.

use crate::common::{self, Kubectl, cm, eventually, json_of};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

#[test]
fn kubectl_namespace_stays_terminating_until_its_finalized_content_is_gone() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["create", "namespace", "gone"]);
    let ns = json_of(&k.ok(&["get", "namespace", "gone", "-o", "json"]));
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    let held = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: gone\n  finalizers: [example.com/hold]\n";
    k.ok(&["apply", "-f", &k.file("held.yaml", held)]);
    k.ok(&["create", "configmap", "plain", "-n", "gone"]);
    k.ok(&["delete", "namespace", "gone", "--wait=false"]);
    let ns = json_of(&k.ok(&["get", "namespace", "gone", "-o", "json"]));
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert!(ns["metadata"]["deletionTimestamp"].is_string());
    assert!(
        k.run(&["get", "configmap", "plain", "-n", "gone"]).code != 0,
        "content without finalizers is deleted"
    );
    let cm = json_of(&k.ok(&["get", "configmap", "held", "-n", "gone", "-o", "json"]));
    assert!(cm["metadata"]["deletionTimestamp"].is_string(), "{cm}");
    // No new finalizer on an object being deleted.
    let out = k.run(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "gone",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}"#,
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "The ConfigMap \"held\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/more\"}"
        ),
        "{}",
        out.stderr
    );
    // Creating in a terminating namespace is refused.
    let out = k.run(&["create", "configmap", "late", "-n", "gone"]);
    assert!(
        out.stderr.contains("because it is being terminated"),
        "{}",
        out.stderr
    );
    // The last finalizer goes: the object, then the namespace.
    k.ok(&[
        "patch",
        "configmap",
        "held",
        "-n",
        "gone",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":null}}"#,
    ]);
    let out = k.run(&["get", "namespace", "gone"]);
    assert!(
        out.stderr.contains("NotFound"),
        "the namespace went: {out:?}"
    );
}

#[tokio::test]
async fn kube_dependents_held_by_finalizers_stay_marked_when_their_owner_goes() {
    let sim = common::sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let owner = cms
        .create(&PostParams::default(), &cm("owner", json!({})))
        .await
        .expect("owner");
    let mut child = cm("child", json!({}));
    child.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    child.metadata.owner_references = Some(vec![
        serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
            "uid": owner.metadata.uid.clone().expect("uid")}),
        )
        .expect("ref"),
    ]);
    cms.create(&PostParams::default(), &child)
        .await
        .expect("child");
    cms.delete("owner", &DeleteParams::default())
        .await
        .expect("delete owner");
    let child = cms.get("child").await.expect("the child stays");
    assert!(child.metadata.deletion_timestamp.is_some(), "{child:?}");
    cms.patch(
        "child",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("remove the finalizer");
    assert!(
        cms.get_opt("child").await.expect("get").is_none(),
        "then it goes"
    );
}

#[tokio::test]
async fn kube_dangling_owner_references_are_collected() {
    let sim = common::live_sim();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let mut orphan = cm("orphan", json!({}));
    orphan.metadata.owner_references = Some(vec![
        serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost",
            "uid": "00000000-0000-4000-8000-000000000000"}),
        )
        .expect("ref"),
    ]);
    cms.create(&PostParams::default(), &orphan)
        .await
        .expect("create");
    for _ in 0..100 {
        if cms.get_opt("orphan").await.expect("get").is_none() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("an object whose owner does not exist was not collected in 10 s");
}

const SCHEDULED_POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  nodeName: piceli-sim-node
  containers: [{name: c, image: nginx:1.27}]
";

#[test]
fn kubectl_pods_are_deleted_gracefully_unless_forced() {
    // Controllers off: no kubelet finishes the deletion, so the Terminating state can be seen.
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", &k.file("pod.yaml", SCHEDULED_POD)]);
    k.ok(&["delete", "pod", "p", "--wait=false"]);
    let pod = json_of(&k.ok(&["get", "pod", "p", "-o", "json"]));
    assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30, "{pod}");
    assert!(pod["metadata"]["deletionTimestamp"].is_string());
    assert!(k.ok(&["get", "pod", "p"]).contains("Terminating"));
    let out = k.run(&["delete", "pod", "p", "--grace-period=0", "--force"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(k.run(&["get", "pod", "p"]).stderr.contains("NotFound"));
    // An unscheduled pod has nothing to stop: deleted at once.
    k.ok(&["run", "u", "--image=nginx:1.27"]);
    k.ok(&["delete", "pod", "u", "--wait=false"]);
    assert!(k.run(&["get", "pod", "u"]).stderr.contains("NotFound"));
}

#[test]
fn kubectl_delete_pod_waits_for_the_kubelet() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["run", "w", "--image=nginx:1.27"]);
    eventually("pod Running", 10, || {
        (k.ok(&["get", "pod", "w", "-o", "jsonpath={.status.phase}"]) == "Running").then_some(())
    });
    k.ok(&["delete", "pod", "w", "--timeout=20s"]);
    assert!(k.run(&["get", "pod", "w"]).stderr.contains("NotFound"));
}
