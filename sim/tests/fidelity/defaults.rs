//! What a real cluster has without anyone creating it, and what its answers look like: the
//! `default` ServiceAccount and `kube-root-ca.crt` in every namespace, the `kubernetes` Service,
//! created Pods `Pending` with a QoS class, DELETE answered with a `Status` (Pods: the object).

use crate::common::{self, Kubectl, cm, eventually, json_of};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::json;

#[test]
fn kubectl_every_namespace_gets_a_default_service_account_and_the_root_ca() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["create", "namespace", "shop"]);
    eventually("the default ServiceAccount", 10, || {
        (k.run(&["get", "serviceaccount", "default", "-n", "shop"])
            .code
            == 0)
            .then_some(())
    });
    let ca = eventually("kube-root-ca.crt", 10, || {
        let out = k.run(&[
            "get",
            "configmap",
            "kube-root-ca.crt",
            "-n",
            "shop",
            "-o",
            "json",
        ]);
        (out.code == 0).then(|| json_of(&out.stdout))
    });
    let pem = ca["data"]["ca.crt"].as_str().expect("ca.crt");
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
    let ca_data = sim
        .kubeconfig_yaml()
        .lines()
        .find_map(|l| l.trim().strip_prefix("certificate-authority-data:"))
        .expect("kubeconfig CA")
        .trim()
        .to_string();
    use base64::Engine;
    let kubeconfig_ca = base64::engine::general_purpose::STANDARD
        .decode(ca_data)
        .expect("base64");
    assert_eq!(
        pem.as_bytes(),
        kubeconfig_ca.as_slice(),
        "the cluster's own CA"
    );
    // Deleted, it comes back (as the root CA publisher re-creates it).
    k.ok(&["delete", "configmap", "kube-root-ca.crt", "-n", "shop"]);
    eventually("kube-root-ca.crt re-created", 10, || {
        (k.run(&["get", "configmap", "kube-root-ca.crt", "-n", "shop"])
            .code
            == 0)
            .then_some(())
    });
    for ns in ["default", "kube-system"] {
        eventually("defaults in the initial namespaces", 10, || {
            (k.run(&[
                "get",
                "serviceaccount/default",
                "configmap/kube-root-ca.crt",
                "-n",
                ns,
            ])
            .code
                == 0)
                .then_some(())
        });
    }
}

#[test]
fn kubectl_default_namespace_has_the_kubernetes_service() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let svc = json_of(&k.ok(&[
        "get",
        "service",
        "kubernetes",
        "-n",
        "default",
        "-o",
        "json",
    ]));
    assert_eq!(svc["spec"]["clusterIP"], "10.96.0.1");
    assert_eq!(svc["spec"]["ports"][0]["port"], 443);
    assert_eq!(svc["spec"]["ports"][0]["name"], "https");
    assert_eq!(svc["metadata"]["labels"]["component"], "apiserver");
    let table = k.ok(&["get", "service", "kubernetes"]);
    assert!(
        table.contains("10.96.0.1") && table.contains("443/TCP"),
        "{table}"
    );
}

#[tokio::test]
async fn kube_created_pods_are_pending_with_a_qos_class() {
    let sim = common::sim();
    let pods: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    let pod = |name: &str, resources: serde_json::Value| -> Pod {
        serde_json::from_value(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "resources": resources}]},
            "status": {"phase": "Running"}}),
        )
        .expect("pod")
    };
    let best = pods
        .create(&PostParams::default(), &pod("best", json!({})))
        .await
        .expect("create");
    let status = best.status.expect("status");
    assert_eq!(
        status.phase.as_deref(),
        Some("Pending"),
        "the client's status is replaced"
    );
    assert_eq!(status.qos_class.as_deref(), Some("BestEffort"));
    let guaranteed = pods
        .create(
            &PostParams::default(),
            &pod("g", json!({"limits": {"cpu": "500m", "memory": "128Mi"}})),
        )
        .await
        .expect("create");
    assert_eq!(
        guaranteed.status.and_then(|s| s.qos_class).as_deref(),
        Some("Guaranteed")
    );
    let burstable = pods
        .create(
            &PostParams::default(),
            &pod("b", json!({"requests": {"memory": "64Mi"}})),
        )
        .await
        .expect("create");
    assert_eq!(
        burstable.status.and_then(|s| s.qos_class).as_deref(),
        Some("Burstable")
    );
}

#[tokio::test]
async fn kube_delete_answers_a_status_except_for_pods() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let created = cms
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create");
    let answer = cms
        .delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        answer.is_right(),
        "a ConfigMap delete answers a Status: {answer:?}"
    );
    let status = answer.right().expect("status");
    assert_eq!(
        status.status,
        Some(kube::core::response::StatusSummary::Success)
    );
    let details = status.details.expect("details");
    assert_eq!(details.name, "a");
    assert_eq!(details.kind, "configmaps");
    assert_eq!(Some(details.uid), created.metadata.uid);
    let pods: Api<Pod> = Api::default_namespaced(client);
    let pod: Pod = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}),
    )
    .expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create");
    let answer = pods
        .delete("p", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(answer.is_left(), "a Pod delete answers the pod: {answer:?}");
}
