//! Taking over an app that already runs (issue 29), end to end on the test cluster: the same two-service
//! app applied from plain YAML with `kubectl apply` (client-side), created with `kubectl create`, and
//! released Helm-style (instance labels, Helm's annotations and release Secret, field manager `helm`),
//! then taken over by a hand-written `app!` with `plan --adopt-all`: every object is adopted (nothing
//! created or replaced), the fields that change owner are named, UIDs, selectors and pods stay, the next
//! plan is a no-op, and a normal change and its rollback work.

use piceli::runtime::engine::plan::{ActionKind, Plan};
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli_test_support::Cluster;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::process::Command;

thread_local! {
    static TAG: RefCell<&'static str> = const { RefCell::new("1.27") };
}

fn image(tag: &str) -> String {
    format!("docker.io/library/nginx:{tag}@sha256:{}", "cd".repeat(32))
}

fn current_image() -> String {
    TAG.with(|t| image(&t.borrow()))
}

/// The app as plain YAML (and `kubectl create`) wrote it: `app:` labels.
mod plain {
    use super::*;
    piceli::app! {
        app shop;
        target local = local(namespace: "shop");
        config_map settings { MODE: "prod" }
        pvc data { storage: "1Gi" }
        deployment web {
            image: (current_image()),
            replicas: 2,
            ports: { http: 80 },
            pod_labels: { app: "web" },
            spec: { selector: { matchLabels: { app: "web" } } },
        }
        deployment api {
            image: (current_image()),
            replicas: 1,
            ports: { http: 8080 },
            pod_labels: { app: "api" },
            spec: { selector: { matchLabels: { app: "api" } } },
        }
        service web -> web { port: 80 => http, spec: { selector: { app: "web" } } }
        service api -> api { port: 8080 => http, spec: { selector: { app: "api" } } }
    }
}

/// The app as a Helm chart wrote it: the recommended labels, `instance` among them, are the user's.
mod helm {
    use super::*;
    piceli::app! {
        app shop;
        target local = local(namespace: "shop");
        labels { "app.kubernetes.io/instance": "shop" }
        config_map settings { MODE: "prod" }
        pvc data { storage: "1Gi" }
        deployment web {
            image: (current_image()),
            replicas: 2,
            ports: { http: 80 },
            spec: { selector: { matchLabels: {
                "app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "shop",
            } } },
        }
        deployment api {
            image: (current_image()),
            replicas: 1,
            ports: { http: 8080 },
            spec: { selector: { matchLabels: {
                "app.kubernetes.io/name": "api", "app.kubernetes.io/instance": "shop",
            } } },
        }
        service web -> web { port: 80 => http, spec: { selector: {
            "app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "shop",
        } } }
        service api -> api { port: 8080 => http, spec: { selector: {
            "app.kubernetes.io/name": "api", "app.kubernetes.io/instance": "shop",
        } } }
    }
}

/// The YAML of the running app: `labels(name)` are each object's labels and its pods' and selector's.
fn manifests(labels: &dyn Fn(&str) -> String, meta: &str) -> String {
    let deployment = |name: &str, replicas: u32, port: u32| {
        let l = labels(name);
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels: {l}\n{meta}spec:\n  replicas: {replicas}\n  selector:\n    matchLabels: {l}\n  template:\n    metadata:\n      labels: {l}\n    spec:\n      containers:\n      - name: {name}\n        image: {}\n        ports:\n        - name: http\n          containerPort: {port}\n",
            image("1.27")
        )
    };
    let service = |name: &str, port: u32| {
        let l = labels(name);
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\n  labels: {l}\n{meta}spec:\n  selector: {l}\n  ports:\n  - name: http\n    port: {port}\n    targetPort: http\n"
        )
    };
    let settings = labels("settings");
    let data = labels("data");
    [
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels: {settings}\n{meta}data:\n  MODE: prod\n"
        ),
        format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  labels: {data}\n{meta}spec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"
        ),
        deployment("web", 2, 80),
        deployment("api", 1, 8080),
        service("web", 80),
        service("api", 8080),
    ]
    .join("---\n")
}

fn plain_yaml() -> String {
    manifests(&|name| format!("{{app: {name}}}"), "")
}

const HELM_META: &str = "  annotations:\n    meta.helm.sh/release-name: shop\n    meta.helm.sh/release-namespace: shop\n";

fn helm_yaml() -> String {
    let labels = |name: &str| {
        if matches!(name, "web" | "api") {
            format!("{{app.kubernetes.io/name: {name}, app.kubernetes.io/instance: shop}}")
        } else {
            "{app.kubernetes.io/instance: shop}".to_string()
        }
    };
    // Helm's release record: a Secret of type helm.sh/release.v1 (its content does not matter here).
    let release = "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sh.helm.release.v1.shop.v1\n  labels: {name: shop, owner: helm, status: deployed, version: \"1\"}\ntype: helm.sh/release.v1\ndata:\n  release: SDRzSUFBQUFBQUFBLzZ1dUJRQzJKMXdwQXdBQUFBPT0=\n";
    format!("{}{release}", manifests(&labels, HELM_META))
}

struct Fixture {
    cluster: Cluster,
    state: tempfile::TempDir,
    files: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            cluster: Cluster::start(),
            state: tempfile::tempdir().expect("temp dir"),
            files: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn options(&self) -> SessionOptions {
        SessionOptions {
            target: None,
            namespace: None,
            connect: ConnectOptions {
                kubeconfig: Some(self.cluster.kubeconfig_path().to_path_buf()),
                context: Some(self.cluster.context().into()),
            },
            state_dir: Some(self.state.path().to_path_buf()),
            wait: Some(std::time::Duration::from_secs(60)),
            wait_lock: None,
            env_files: vec![],
        }
    }

    /// Run kubectl (its own discovery cache) with `args` on `yaml`, in namespace `shop`.
    fn kubectl(&self, args: &[&str], yaml: Option<&str>) {
        let mut cmd: Command = self.cluster.kubectl();
        cmd.args(args);
        if let Some(yaml) = yaml {
            let path = self.files.path().join("app.yaml");
            std::fs::write(&path, yaml).expect("write the manifests");
            cmd.arg("-f").arg(&path);
        }
        let out = cmd.output().expect("run kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// What must not change when the app is taken over: each object's UID and selector, and the pods.
#[derive(Debug, PartialEq)]
struct Running {
    objects: BTreeMap<String, (String, Value)>,
    pods: Vec<String>,
}

async fn running(cluster: &Cluster) -> Running {
    use kube::api::{Api, ListParams};
    use piceli::k8s_openapi::api::{apps::v1::Deployment, core::v1 as core};
    let client = cluster.client().expect("client");
    let lp = ListParams::default();
    let mut listed: Vec<(&str, Value)> = Vec::new();
    macro_rules! list {
        ($kind:literal, $ty:ty) => {
            for o in Api::<$ty>::namespaced(client.clone(), "shop")
                .list(&lp)
                .await
                .expect("list")
                .items
            {
                listed.push(($kind, serde_json::to_value(o).expect("json")));
            }
        };
    }
    list!("Deployment", Deployment);
    list!("Service", core::Service);
    list!("PersistentVolumeClaim", core::PersistentVolumeClaim);
    list!("ConfigMap", core::ConfigMap);
    let mut objects = BTreeMap::new();
    for (kind, o) in listed {
        let name = o["metadata"]["name"].as_str().unwrap_or_default();
        // The cluster's CA bundle, and the release record the first apply writes.
        if name == "kube-root-ca.crt" || name.starts_with("piceli-release-") {
            continue;
        }
        objects.insert(
            format!("{kind}/{name}"),
            (
                o["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                o["spec"]["selector"].clone(),
            ),
        );
    }
    let mut pods: Vec<String> = Api::<core::Pod>::namespaced(client, "shop")
        .list(&lp)
        .await
        .expect("pods")
        .items
        .into_iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.metadata.uid)
        .collect();
    pods.sort();
    Running { objects, pods }
}

async fn get(cluster: &Cluster, path: &str) -> Value {
    use kube::api::ApiResource;
    use kube::api::{Api, DynamicObject};
    let client = cluster.client().expect("client");
    let (resource, name) = match path.split_once('/') {
        Some(("deployments", name)) => (
            ApiResource::erase::<piceli::k8s_openapi::api::apps::v1::Deployment>(&()),
            name,
        ),
        Some(("secrets", name)) => (
            ApiResource::erase::<piceli::k8s_openapi::api::core::v1::Secret>(&()),
            name,
        ),
        _ => panic!("{path}"),
    };
    let o = Api::<DynamicObject>::namespaced_with(client, "shop", &resource)
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    serde_json::to_value(o).expect("json")
}

/// Wait until the three pods of the app run.
async fn pods_up(cluster: &Cluster) -> Running {
    for _ in 0..100 {
        let now = running(cluster).await;
        if now.pods.len() == 3 {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("the app's pods did not start: {:?}", running(cluster).await)
}

fn actions(plan: &Plan) -> Vec<(String, ActionKind)> {
    plan.actions.iter().map(|a| (a.key(), a.action)).collect()
}

/// Take the running app over with `app`, and check everything the issue promises.
async fn take_over(fx: &Fixture, app: fn() -> piceli::__private::App, manager: &str) {
    let before = pods_up(&fx.cluster).await;
    let session = Session::open(app(), &fx.options()).await.expect("session");
    let plan = session.plan(vec![], true).await.expect("takeover plan");
    for a in &plan.actions {
        assert!(
            matches!(a.action, ActionKind::Adopt | ActionKind::Use),
            "nothing is created, replaced or deleted: {:?}",
            actions(&plan)
        );
    }
    assert_eq!(plan.actions.len(), 7, "{:?}", actions(&plan));
    let web = plan
        .actions
        .iter()
        .find(|a| a.key() == "Deployment/shop/web")
        .expect("the web Deployment is adopted");
    assert!(
        web.take
            .iter()
            .any(|t| t.from == manager && t.field == ".spec.replicas"),
        "the plan names the fields taken from {manager}: {:?}",
        web.take
    );
    assert!(
        !web.diff.iter().any(|c| c.path.contains("template")),
        "the pod template does not change: {:?}",
        web.diff
    );
    session.apply(&plan.hash).await.expect("takeover apply");
    assert_eq!(
        running(&fx.cluster).await,
        before,
        "UIDs, selectors and pods"
    );

    let again = session.plan(vec![], false).await.expect("re-plan");
    assert!(
        !again.has_changes(),
        "a no-op after the takeover: {:?}",
        again.actions
    );

    // A normal change, then its rollback.
    TAG.with(|t| *t.borrow_mut() = "1.28");
    let session = Session::open(app(), &fx.options()).await.expect("session");
    let change = session.plan(vec![], false).await.expect("change plan");
    let updated: Vec<String> = change
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Update)
        .map(|a| a.key())
        .collect();
    assert_eq!(updated, ["Deployment/shop/web", "Deployment/shop/api"]);
    session.apply(&change.hash).await.expect("apply the change");
    let rollback = session.plan_rollback(None).await.expect("rollback plan");
    session.apply(&rollback.hash).await.expect("roll back");
    let after = running(&fx.cluster).await;
    assert_eq!(
        after.objects, before.objects,
        "UIDs and selectors after the rollback"
    );
    TAG.with(|t| *t.borrow_mut() = "1.27");
    let session = Session::open(app(), &fx.options()).await.expect("session");
    let last = session.plan(vec![], false).await.expect("plan");
    assert!(!last.has_changes(), "{:?}", last.actions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_applied_from_plain_yaml_is_taken_over() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["apply", "-n", "shop"], Some(&plain_yaml()));
    take_over(&fx, plain::shop::app, "kubectl-client-side-apply").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_made_with_kubectl_create_is_taken_over() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["create", "-n", "shop"], Some(&plain_yaml()));
    take_over(&fx, plain::shop::app, "kubectl-create").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_helm_release_is_taken_over_and_its_bookkeeping_left_alone() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(
        &[
            "apply",
            "-n",
            "shop",
            "--server-side",
            "--field-manager=helm",
        ],
        Some(&helm_yaml()),
    );
    take_over(&fx, helm::shop::app, "helm").await;
    // Helm's claim stays: its annotations on the objects, and its release Secret.
    let web = get(&fx.cluster, "deployments/web").await;
    assert_eq!(
        web["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "shop"
    );
    assert_eq!(
        web["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "piceli"
    );
    assert_eq!(
        web["metadata"]["labels"]["app.kubernetes.io/instance"],
        "shop"
    );
    let release = get(&fx.cluster, "secrets/sh.helm.release.v1.shop.v1").await;
    assert_eq!(release["type"], "helm.sh/release.v1");
}
