//! The takeover tests' fixture: the running app's manifests (plain YAML, Helm-style), the test cluster
//! with its own kubectl cache, what must not change (UIDs, selectors, pods) and the takeover itself.

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

/// The test image at `tag`, pinned.
pub fn image(tag: &str) -> String {
    format!("docker.io/library/nginx:{tag}@sha256:{}", "cd".repeat(32))
}

/// The image the hand-written apps use now (the change step moves it to 1.28).
pub fn current_image() -> String {
    TAG.with(|t| image(&t.borrow()))
}

/// The YAML of the running app: `labels(name)` are each object's labels and its pods' and selector's.
/// The claim names its class (`standard`, the local cluster's default), so `import live` writes the same
/// module on every cluster, whichever class (if any) is its default.
pub fn manifests(labels: &dyn Fn(&str) -> String, meta: &str) -> String {
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
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  labels: {data}\n{meta}spec:\n  storageClassName: standard\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n"
        ),
        deployment("web", 2, 80),
        deployment("api", 1, 8080),
        service("web", 80),
        service("api", 8080),
    ]
    .join("---\n")
}

pub fn plain_yaml() -> String {
    manifests(&|name| format!("{{app: {name}}}"), "")
}

pub const HELM_META: &str = "  annotations:\n    meta.helm.sh/release-name: shop\n    meta.helm.sh/release-namespace: shop\n";

pub fn helm_yaml() -> String {
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

pub struct Fixture {
    pub cluster: Cluster,
    pub state: tempfile::TempDir,
    pub files: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            cluster: Cluster::start(),
            state: tempfile::tempdir().expect("temp dir"),
            files: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn options(&self) -> SessionOptions {
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
    pub fn kubectl(&self, args: &[&str], yaml: Option<&str>) {
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
pub struct Running {
    pub objects: BTreeMap<String, (String, Value)>,
    pub pods: Vec<String>,
}

pub async fn running(cluster: &Cluster) -> Running {
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

pub async fn get(cluster: &Cluster, path: &str) -> Value {
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

/// Whether the Deployment controller is done with every Deployment (it has seen its generation, and its
/// pods are ready): it writes no more, so a plan made now still holds when it is applied.
async fn settled(cluster: &Cluster) -> bool {
    use kube::api::{Api, ListParams};
    let client = cluster.client().expect("client");
    let list = Api::<piceli::k8s_openapi::api::apps::v1::Deployment>::namespaced(client, "shop")
        .list(&ListParams::default())
        .await
        .expect("list");
    list.items.iter().all(|d| {
        let status = d.status.clone().unwrap_or_default();
        status.observed_generation == d.metadata.generation
            && status.ready_replicas == d.spec.as_ref().and_then(|s| s.replicas)
    })
}

/// Wait until the three pods of the app run, and the Deployments are settled.
pub async fn pods_up(cluster: &Cluster) -> Running {
    for _ in 0..100 {
        let now = running(cluster).await;
        if now.pods.len() == 3 && settled(cluster).await {
            return now;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    panic!("the app's pods did not start: {:?}", running(cluster).await)
}

pub fn actions(plan: &Plan) -> Vec<(String, ActionKind)> {
    plan.actions
        .iter()
        .map(|a| (a.key().to_string(), a.action))
        .collect()
}

/// Take the running app over with `app`, and check everything the issue promises; with `change`, a
/// normal change (the hand-written apps' image tag) and its rollback follow.
pub async fn take_over(
    fx: &Fixture,
    app: fn() -> piceli::__private::App,
    manager: &str,
    change: bool,
) -> Plan {
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

    if !change {
        return plan;
    }
    // A normal change, then its rollback.
    TAG.with(|t| *t.borrow_mut() = "1.28");
    let session = Session::open(app(), &fx.options()).await.expect("session");
    let change = session.plan(vec![], false).await.expect("change plan");
    let mut updated: Vec<String> = change
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Update)
        .map(|a| a.key().to_string())
        .collect();
    updated.sort();
    assert_eq!(updated, ["Deployment/shop/api", "Deployment/shop/web"]);
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
    plan
}

/// The committed `tests/takeover/FILE` must be `want` (what `piceli import` writes now); with
/// `PICELI_UPDATE_IMPORT=1` it is written instead (the test then takes over with the old one: run it again).
pub fn current(file: &str, want: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/takeover")
        .join(file);
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        return;
    }
    if std::env::var_os("PICELI_UPDATE_IMPORT").is_some() {
        std::fs::write(&path, want).expect("write the imported app");
        return;
    }
    panic!(
        "{} is not what `piceli import` writes now; run the test with PICELI_UPDATE_IMPORT=1 and review \
         the diff:\n{want}",
        path.display()
    );
}
