//! The plan/apply engine against the local API server (piceli-sim, in process): first plan creates,
//! a wrong hash is refused, apply writes, a re-plan is a no-op, one change is one update, the cluster
//! changing under a plan is refused, unowned objects need adoption, protected kinds are never pruned,
//! and secret values never leave the process.

mod releases;

use piceli::runtime::Coded;
use piceli::runtime::engine::EngineError;
use piceli::runtime::engine::plan::{ActionKind, Plan};
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli_test_support::Cluster;
use std::cell::RefCell;
use std::path::PathBuf;

thread_local! {
    static IMAGE: RefCell<String> = RefCell::new(image("1.27"));
}

fn image(tag: &str) -> String {
    format!("docker.io/library/nginx:{tag}@sha256:{}", "ab".repeat(32))
}

fn current_image() -> String {
    IMAGE.with(|i| i.borrow().clone())
}

piceli::app! {
    app engine-test;
    target local = local(namespace: "engine");
    config_map settings { MODE: "prod" }
    secret api { key: from_env("ENGINE_TEST_API_KEY"), token: generated(length: 24) }
    pvc data { storage: "1Gi" }
    deployment web {
        image: (current_image()),
        replicas: 2,
        ports: { http: 80 },
        env: { MODE: config(settings.MODE), KEY: secret(api.key) },
    }
    service web -> web { port: 80 => http }
}

/// The same app without its ConfigMap, Secret, PVC and Service.
mod small {
    use super::*;

    piceli::app! {
            app engine-test;
            target local = local(namespace: "engine");
            deployment web {
                image: (current_image()),
                replicas: 2,
                ports: { http: 80 },
            }
    }
}

const CANARY: &str = "canary-5d1e0c";

struct Fixture {
    sim: Cluster,
    state: tempfile::TempDir,
    env: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            sim: Cluster::start(),
            state: tempfile::tempdir().expect("temp dir"),
            env: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn options(&self) -> SessionOptions {
        SessionOptions {
            target: None,
            namespace: None,
            connect: ConnectOptions {
                kubeconfig: Some(self.sim.kubeconfig_path().to_path_buf()),
                context: Some(self.sim.context().into()),
            },
            state_dir: Some(self.state.path().to_path_buf()),
            wait: Some(std::time::Duration::from_secs(30)),
            wait_lock: None,
            env_files: vec![self.env_file()],
        }
    }

    /// The secret source's variable, as `--env-file` gives it (the process environment is not touched).
    fn env_file(&self) -> PathBuf {
        let path = self.env.path().join("test.env");
        std::fs::write(&path, format!("ENGINE_TEST_API_KEY={CANARY}\n")).expect("env file");
        path
    }

    async fn session(&self, app: piceli::__private::App) -> Session {
        Session::open(app, &self.options()).await.expect("session")
    }
}

fn actions(plan: &Plan) -> Vec<(String, ActionKind)> {
    plan.actions
        .iter()
        .map(|a| (a.key().to_string(), a.action))
        .collect()
}

async fn resource_versions(sim: &Cluster) -> Vec<(String, String)> {
    use kube::api::{Api, ListParams};
    use piceli::k8s_openapi::api::{
        apps::v1::Deployment,
        core::v1::{ConfigMap, Service},
    };
    let client = sim.client().expect("client");
    let mut out = Vec::new();
    for d in Api::<Deployment>::namespaced(client.clone(), "engine")
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
    {
        // Controllers update a Deployment's status (and so its resourceVersion) on their own; what shows a
        // write of ours is the generation and the time of our field manager's entry.
        let ours = d
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m.manager.as_deref() == Some("piceli"))
            .map(|m| format!("{:?}", m.time))
            .collect::<Vec<_>>()
            .join(",");
        out.push((
            format!("deploy/{}", d.metadata.name.unwrap_or_default()),
            format!(
                "generation {} / {ours}",
                d.metadata.generation.unwrap_or_default()
            ),
        ));
    }
    for s in Api::<Service>::namespaced(client.clone(), "engine")
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
    {
        out.push((
            format!("svc/{}", s.metadata.name.unwrap_or_default()),
            s.metadata.resource_version.unwrap_or_default(),
        ));
    }
    for c in Api::<ConfigMap>::namespaced(client, "engine")
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        // Made by the cluster in every namespace, not by the app.
        .filter(|c| c.metadata.name.as_deref() != Some("kube-root-ca.crt"))
    {
        out.push((
            format!("cm/{}", c.metadata.name.unwrap_or_default()),
            c.metadata.resource_version.unwrap_or_default(),
        ));
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_approve_apply_then_a_true_no_op() {
    let fx = Fixture::new();
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    assert!(
        plan.actions.iter().all(|a| a.action == ActionKind::Create),
        "{:?}",
        actions(&plan)
    );
    assert_eq!(plan.actions.len(), 6);

    // A hash that was never planned: refused, nothing written.
    let err = session
        .apply(&"0".repeat(64))
        .await
        .expect_err("unknown hash");
    assert_eq!(err.code().as_str(), "PCL0106");
    assert!(
        resource_versions(&fx.sim).await.is_empty(),
        "nothing written"
    );

    let applied = session.apply(&plan.hash).await.expect("apply");
    assert_eq!((applied.release, applied.written), (Some(1), 6));
    let before = resource_versions(&fx.sim).await;
    assert_eq!(before.len(), 4, "{before:?}");

    let again = session.plan(vec![], false).await.expect("re-plan");
    assert!(
        again
            .actions
            .iter()
            .all(|a| a.action == ActionKind::Unchanged),
        "{:?}",
        actions(&again)
    );
    let applied = session.apply(&again.hash).await.expect("no-op apply");
    assert_eq!((applied.release, applied.written), (None, 0));
    assert_eq!(
        resource_versions(&fx.sim).await,
        before,
        "a no-op apply writes nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_image_change_is_one_update_at_the_image_path() {
    let fx = Fixture::new();
    IMAGE.with(|i| *i.borrow_mut() = image("1.27"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");

    IMAGE.with(|i| *i.borrow_mut() = image("1.28"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    let changed: Vec<_> = plan.actions.iter().filter(|a| a.changes()).collect();
    assert_eq!(changed.len(), 1, "{:?}", actions(&plan));
    assert_eq!(
        (changed[0].object.kind.as_str(), changed[0].action),
        ("Deployment", ActionKind::Update)
    );
    let paths: Vec<&str> = changed[0].diff.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["spec.template.spec.containers[web].image"]);
    session.apply(&plan.hash).await.expect("apply the update");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_between_plan_and_apply_is_refused() {
    use kube::api::{Api, Patch, PatchParams};
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    let fx = Fixture::new();
    IMAGE.with(|i| *i.borrow_mut() = image("1.27"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");

    IMAGE.with(|i| *i.borrow_mut() = image("1.29"));
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    // Someone else scales the Deployment after the plan.
    let api: Api<Deployment> = Api::namespaced(fx.sim.client().expect("client"), "engine");
    let patch = serde_json::json!({"metadata": {"annotations": {"someone": "else"}}});
    api.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("outside change");
    let before = resource_versions(&fx.sim).await;
    let err = session.apply(&plan.hash).await.expect_err("refused");
    assert_eq!(err.code().as_str(), "PCL0107", "{err}");
    assert_eq!(resource_versions(&fx.sim).await, before, "nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unowned_objects_need_adoption() {
    use kube::api::{Api, PostParams};
    use piceli::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    let fx = Fixture::new();
    let client = fx.sim.client().expect("client");
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "engine"}})).expect("ns");
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let cm: ConfigMap = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "settings"}, "data": {"MODE": "dev"}}),
    )
    .expect("cm");
    Api::<ConfigMap>::namespaced(client, "engine")
        .create(&PostParams::default(), &cm)
        .await
        .expect("configmap");

    let session = fx.session(engine_test::app()).await;
    let err = session.plan(vec![], false).await.expect_err("refused");
    assert!(matches!(err, EngineError::NotOwned { .. }), "{err}");
    assert!(err.help().contains("--adopt"), "{}", err.help());

    let plan = session
        .plan(
            vec!["ConfigMap/settings".into(), "Namespace/engine".into()],
            false,
        )
        .await
        .expect("adopt plan");
    let adopted: Vec<_> = plan
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Adopt)
        .map(|a| a.key())
        .collect();
    assert_eq!(adopted, ["Namespace/engine", "ConfigMap/engine/settings"]);
    session
        .apply(&plan.hash)
        .await
        .expect("apply with adoption");
    let again = session.plan(vec![], false).await.expect("owned now");
    assert!(
        again
            .actions
            .iter()
            .all(|a| a.action == ActionKind::Unchanged),
        "{:?}",
        actions(&again)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_objects_are_pruned_except_protected_kinds() {
    let fx = Fixture::new();
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");

    // The smaller app drops the ConfigMap, the Secret, the PVC and the Service.
    let session = fx.session(small::engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    let deleted: Vec<_> = plan
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete)
        .map(|a| a.key())
        .collect();
    assert_eq!(deleted, ["Service/engine/web", "ConfigMap/engine/settings"]);
    session.apply(&plan.hash).await.expect("apply deletions");
    let left: Vec<_> = resource_versions(&fx.sim)
        .await
        .into_iter()
        .filter(|(k, _)| !k.starts_with("cm/piceli-release-"))
        .collect();
    assert_eq!(
        left.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
        ["deploy/web"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_values_never_leave_the_process() {
    let fx = Fixture::new();
    let session = fx.session(engine_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");
    // The value reached the cluster…
    use kube::api::Api;
    use piceli::k8s_openapi::api::core::v1::Secret;
    let secret = Api::<Secret>::namespaced(fx.sim.client().expect("client"), "engine")
        .get("api")
        .await
        .expect("secret");
    let data = secret.data.expect("data");
    assert_eq!(
        data.get("key").map(|b| b.0.clone()),
        Some(CANARY.as_bytes().to_vec())
    );
    assert_eq!(data.get("token").map(|b| b.0.len()), Some(24));
    // …and appears in no plan, diff or journal.
    let plan_text =
        serde_json::to_string(&session.plan(vec![], false).await.expect("re-plan")).expect("json");
    assert!(!plan_text.contains(CANARY));
    let journal = std::fs::read(fx.state.path().join("journal.db")).expect("journal");
    let as_text = String::from_utf8_lossy(&journal);
    assert!(!as_text.contains(CANARY));
    use base64::Engine as _;
    assert!(!as_text.contains(&base64::engine::general_purpose::STANDARD.encode(CANARY)));
}

/// Every object of a kind in the test namespace.
async fn items<K>(client: &kube::Client) -> Vec<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    kube::api::Api::<K>::namespaced(client.clone(), "engine")
        .list(&kube::api::ListParams::default())
        .await
        .expect("list")
        .items
}

/// The cluster state that matters, comparable across runs: every object in the namespace without
/// server-set metadata (generated secret values are random: compared by key only).
async fn cluster_state(sim: &Cluster) -> Vec<(String, serde_json::Value)> {
    use piceli::k8s_openapi::api::{
        apps::v1::Deployment,
        core::v1::{ConfigMap, PersistentVolumeClaim, Secret, Service},
    };
    fn clean<T: serde::Serialize>(kind: &str, o: &T) -> (String, serde_json::Value) {
        let mut v = serde_json::to_value(o).unwrap_or_default();
        let name = v["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let labels = v["metadata"]["labels"].clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("status");
            m.insert("metadata".into(), serde_json::json!({ "labels": labels }));
        }
        if kind == "Secret"
            && let Some(data) = v.get_mut("data").and_then(serde_json::Value::as_object_mut)
        {
            for val in data.values_mut() {
                *val = serde_json::Value::Null;
            }
        }
        // Allocated by the cluster, different in every run: the Service's IP, the volume bound to a claim.
        if let Some(spec) = v.get_mut("spec").and_then(serde_json::Value::as_object_mut) {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
            spec.remove("volumeName");
        }
        (format!("{kind}/{name}"), v)
    }
    let c = sim.client().expect("client");
    let mut out = Vec::new();
    out.extend(
        items::<Deployment>(&c)
            .await
            .iter()
            .map(|o| clean("Deployment", o)),
    );
    out.extend(
        items::<Service>(&c)
            .await
            .iter()
            .map(|o| clean("Service", o)),
    );
    out.extend(
        items::<ConfigMap>(&c)
            .await
            .iter()
            // Made by the cluster in every namespace (its CA differs between sims), not by the app.
            .filter(|o| o.metadata.name.as_deref() != Some("kube-root-ca.crt"))
            .map(|o| clean("ConfigMap", o)),
    );
    out.extend(items::<Secret>(&c).await.iter().map(|o| clean("Secret", o)));
    out.extend(
        items::<PersistentVolumeClaim>(&c)
            .await
            .iter()
            .map(|o| clean("PVC", o)),
    );
    // The release record (time of the release) differs between runs by design.
    out.retain(|(k, _)| !k.starts_with("ConfigMap/piceli-release-"));
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// A Deployment whose pods never become ready, with a short progress deadline: they crash on the local
/// cluster (its failure annotation) and stay pending on a real one with kwok (whose status kwok leaves alone).
fn crashing_deployment() -> Vec<piceli::k8s_openapi::api::apps::v1::Deployment> {
    let d = serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "crasher"},
        "spec": {
            "replicas": 1,
            "progressDeadlineSeconds": 1,
            "selector": {"matchLabels": {"app": "crasher"}},
            "template": {
                "metadata": {"labels": {"app": "crasher"}, "annotations": {"sim.piceli.dev/behavior": "crash-loop", "kwok.x-k8s.io/status": "custom"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}
            }
        }
    });
    vec![serde_json::from_value(d).expect("deployment")]
}

mod crashing {
    use super::*;

    piceli::app! {
        app crash-test;
        target local = local(namespace: "crash");
        include objects((crashing_deployment())) { images: unpinned }
    }
}

mod fields {
    use super::*;

    piceli::app! {
        app fields-test;
        target with-extra = local(namespace: "fields") { web.env.EXTRA: "1" };
        target without = local(namespace: "fields");
        deployment web {
            image: (current_image()),
            ports: { http: 80 },
            env: { MODE: "prod" },
        }
    }
}
