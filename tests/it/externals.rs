//! `external` objects against the test's cluster (the local one in process, or the real control plane): never rendered or planned as
//! actions; `plan` records whether each exists (warning PCL0165 when missing); apply refuses a plan whose
//! finding no longer holds (PCL0166); an external object the app stops naming is never pruned; an
//! `external gateway` an `http_route` attaches to is looked up as the Gateway API's kind, missing while the
//! cluster does not serve that kind.

use piceli::runtime::Coded;
use piceli::runtime::engine::plan::{ActionKind, Plan};
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli_test_support::Cluster;

const IMAGE: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

piceli::app! {
    app external-test;
    target local = local(namespace: "ext");
    external secret web-tls;
    external config_map ca-bundle;
    deployment web {
        image: (IMAGE.to_string()),
        ports: { http: 80 },
        env_from: [config(ca-bundle)],
        volumes: { certs: secret(web-tls) },
        mounts: { "/etc/tls": certs },
    }
}

/// The same app once it no longer names its external objects.
mod without {
    use super::*;

    piceli::app! {
        app external-test;
        target local = local(namespace: "ext");
        deployment web {
            image: (IMAGE.to_string()),
            ports: { http: 80 },
        }
    }
}

/// A route attached to a platform team's Gateway in the app's namespace.
mod gateway {
    use super::*;

    piceli::app! {
        app external-gateway;
        target local = local(namespace: "ext-gateway");
        crds "tests/crds/gateway.networking.k8s.io_httproutes.yaml" { install: true };
        external gateway shared;
        deployment web {
            image: (IMAGE.to_string()),
            ports: { http: 80 },
        }
        service web -> web { port: 80 => http }
        http_route shop { host: "shop.example.com", gateway: shared, paths: { "/": web:http } }
    }
}

struct Fixture {
    sim: Cluster,
    state: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            sim: Cluster::start(),
            state: tempfile::tempdir().expect("temp dir"),
        }
    }

    async fn session(&self, app: piceli::__private::App) -> Session {
        let options = SessionOptions {
            target: None,
            namespace: None,
            connect: ConnectOptions {
                kubeconfig: Some(self.sim.kubeconfig_path().to_path_buf()),
                context: Some(self.sim.context().into()),
            },
            state_dir: Some(self.state.path().to_path_buf()),
            wait: Some(std::time::Duration::from_secs(30)),
            wait_lock: None,
            env_files: vec![],
        };
        Session::open(app, &options).await.expect("session")
    }

    /// Someone else (cert-manager, a platform team) makes the external objects.
    async fn make_externals(&self) {
        use kube::api::{Api, PostParams};
        use piceli::k8s_openapi::api::core::v1::{ConfigMap, Secret};
        let client = self.sim.client().expect("client");
        let secret: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web-tls"},
            "type": "kubernetes.io/tls",
            "stringData": {"tls.crt": "crt", "tls.key": "key"},
        }))
        .expect("secret");
        Api::<Secret>::namespaced(client.clone(), "ext")
            .create(&PostParams::default(), &secret)
            .await
            .expect("create the Secret");
        let config: ConfigMap = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "ca-bundle"},
            "data": {"CA": "pem"},
        }))
        .expect("config map");
        Api::<ConfigMap>::namespaced(client, "ext")
            .create(&PostParams::default(), &config)
            .await
            .expect("create the ConfigMap");
    }
}

fn found(plan: &Plan) -> Vec<(String, bool)> {
    plan.requires
        .iter()
        .map(|r| (r.key().to_string(), r.found))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_records_external_objects_and_apply_requires_the_same() {
    let fx = Fixture::new();
    let session = fx.session(external_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    // Nothing of the external objects is rendered or planned: only the Deployment (and the Namespace).
    let kinds: Vec<&str> = plan
        .actions
        .iter()
        .map(|a| a.object.kind.as_str())
        .collect();
    assert!(
        !kinds.contains(&"Secret") && !kinds.contains(&"ConfigMap"),
        "{kinds:?}"
    );
    assert!(
        plan.objects
            .iter()
            .all(|o| o["kind"] != "Secret" && o["kind"] != "ConfigMap")
    );
    assert_eq!(
        found(&plan),
        vec![
            ("Secret/ext/web-tls".to_string(), false),
            ("ConfigMap/ext/ca-bundle".to_string(), false)
        ]
    );
    let warning = plan.requires[0]
        .warning()
        .expect("a warning for a missing one");
    assert!(
        warning.starts_with("warning PCL0165: Secret/ext/web-tls"),
        "{warning}"
    );
    // Missing is a warning, not a refusal: the app applies, and its pods wait for the Secret.
    session.apply(&plan.hash).await.expect("apply");

    fx.make_externals().await;
    let plan = session.plan(vec![], false).await.expect("re-plan");
    assert_eq!(
        found(&plan),
        vec![
            ("Secret/ext/web-tls".to_string(), true),
            ("ConfigMap/ext/ca-bundle".to_string(), true)
        ]
    );
    assert!(plan.requires.iter().all(|r| r.warning().is_none()));
    assert!(plan.requires.iter().all(|r| r.uid.is_some()));
    assert!(!plan.has_changes(), "{:?}", plan.actions);

    // The Secret is replaced after the plan: the plan's finding no longer holds.
    use kube::api::{Api, DeleteParams};
    use piceli::k8s_openapi::api::core::v1::Secret;
    let secrets: Api<Secret> = Api::namespaced(fx.sim.client().expect("client"), "ext");
    secrets
        .delete("web-tls", &DeleteParams::default())
        .await
        .expect("delete");
    let err = session.apply(&plan.hash).await.expect_err("stale");
    assert_eq!(err.code().as_str(), "PCL0166", "{err}");
    assert!(err.to_string().contains("Secret/ext/web-tls"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_object_the_app_stops_naming_is_never_pruned() {
    let fx = Fixture::new();
    fx.make_externals_after_namespace().await;
    let session = fx.session(external_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");

    let session = fx.session(without::external_test::app()).await;
    let plan = session.plan(vec![], false).await.expect("plan");
    assert!(plan.requires.is_empty());
    assert!(
        plan.actions.iter().all(|a| a.action != ActionKind::Delete),
        "{:?}",
        plan.actions
            .iter()
            .map(|a| (a.key(), a.action))
            .collect::<Vec<_>>()
    );
    session.apply(&plan.hash).await.expect("apply");
    use kube::api::Api;
    use piceli::k8s_openapi::api::core::v1::{ConfigMap, Secret};
    let client = fx.sim.client().expect("client");
    let cm = Api::<ConfigMap>::namespaced(client.clone(), "ext")
        .get_opt("ca-bundle")
        .await
        .expect("get");
    let secret = Api::<Secret>::namespaced(client, "ext")
        .get_opt("web-tls")
        .await
        .expect("get");
    assert!(cm.is_some() && secret.is_some(), "still there");
}

impl Fixture {
    /// The namespace first (as a platform team would make it), then the external objects in it.
    async fn make_externals_after_namespace(&self) {
        use kube::api::{Api, PostParams};
        use piceli::k8s_openapi::api::core::v1::Namespace;
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "ext"}})).expect("ns");
        Api::<Namespace>::all(self.sim.client().expect("client"))
            .create(&PostParams::default(), &ns)
            .await
            .expect("create the namespace");
        self.make_externals().await;
    }
}

/// The Gateway API's Gateway kind installed (its vendored CRD), then a Gateway named `name` in
/// `namespace` made by someone else; retried until the new kind is served.
async fn make_gateway(
    client: kube::Client,
    name: &str,
    namespace: &str,
) -> kube::api::DynamicObject {
    use kube::api::{Api, ApiResource, DynamicObject, PostParams};
    use piceli::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/crds/gateway.networking.k8s.io_gateways.yaml"
    ))
    .expect("the vendored Gateway CRD");
    let crd: CustomResourceDefinition = serde_saphyr::from_str(&text).expect("a CRD");
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &crd)
        .await
        .expect("install the Gateway CRD");
    let resource = ApiResource {
        group: "gateway.networking.k8s.io".into(),
        version: "v1".into(),
        api_version: "gateway.networking.k8s.io/v1".into(),
        kind: "Gateway".into(),
        plural: "gateways".into(),
    };
    let gateway: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name},
        "spec": {"gatewayClassName": "platform", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]},
    }))
    .expect("gateway");
    let api: Api<DynamicObject> = Api::namespaced_with(client, namespace, &resource);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match api.create(&PostParams::default(), &gateway).await {
            Ok(made) => return made,
            // Until the CRD is established the kind is not served (404).
            Err(_) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
            Err(e) => panic!("create the Gateway: {e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_gateway_is_looked_up_as_the_gateway_apis_kind() {
    let fx = Fixture::new();
    let session = fx.session(gateway::external_gateway::app()).await;
    // The cluster serves no Gateway kind yet: the Gateway is missing, the app still applies.
    let plan = session.plan(vec![], false).await.expect("plan");
    assert_eq!(
        found(&plan),
        vec![("Gateway/ext-gateway/shared".to_string(), false)]
    );
    assert_eq!(
        plan.requires[0].object.api_version,
        "gateway.networking.k8s.io/v1"
    );
    let warning = plan.requires[0].warning().expect("a warning");
    assert!(
        warning.contains("the routes that attach to it carry no traffic"),
        "{warning}"
    );
    assert!(
        plan.actions.iter().all(|a| a.object.kind != "Gateway"),
        "never planned"
    );
    session.apply(&plan.hash).await.expect("apply");

    // The platform team installs the Gateway API and makes the Gateway.
    let client = fx.sim.client().expect("client");
    let made = make_gateway(client.clone(), "shared", "ext-gateway").await;
    let plan = session.plan(vec![], false).await.expect("re-plan");
    assert_eq!(
        found(&plan),
        vec![("Gateway/ext-gateway/shared".to_string(), true)]
    );
    assert_eq!(plan.requires[0].uid, made.metadata.uid);
    assert!(!plan.has_changes(), "{:?}", plan.actions);

    // It goes after the plan: apply refuses the plan.
    use kube::api::{Api, ApiResource, DeleteParams, DynamicObject};
    let resource = ApiResource::from_gvk(&kube::core::GroupVersionKind::gvk(
        "gateway.networking.k8s.io",
        "v1",
        "Gateway",
    ));
    Api::<DynamicObject>::namespaced_with(client, "ext-gateway", &resource)
        .delete("shared", &DeleteParams::default())
        .await
        .expect("delete the Gateway");
    let err = session.apply(&plan.hash).await.expect_err("stale");
    assert_eq!(err.code().as_str(), "PCL0166", "{err}");
    assert!(
        err.to_string().contains("Gateway/ext-gateway/shared"),
        "{err}"
    );
}
