//! Taking over an app that already runs (issue 29), end to end on the test cluster: the same two-service
//! app applied from plain YAML with `kubectl apply` (client-side), created with `kubectl create`, and
//! released Helm-style (instance labels, Helm's annotations and release Secret, field manager `helm`),
//! then taken over by a hand-written `app!` — and by what `piceli import yaml` and `piceli import live` write for
//! it — with `plan --adopt-all`: every object is adopted (nothing
//! created or replaced), the fields that change owner are named, UIDs, selectors and pods stay, the next
//! plan is a no-op, and a normal change and its rollback work.

#[path = "../takeover/fixture.rs"]
mod fixture;

use fixture::{Fixture, current_image, get, helm_yaml, plain_yaml, take_over};
use piceli::runtime::engine::plan::ActionKind;
use piceli::runtime::engine::session::Session;
use serde_json::Value;

/// What `piceli import yaml` writes for [`plain_yaml`] (kept current by
/// `the_import_of_the_yaml_takes_the_app_over`): its `fn main` is not this test's.
#[allow(dead_code)]
#[path = "../takeover/imported_yaml.rs"]
mod imported_yaml;

/// What `piceli import live` writes for the namespace that runs [`plain_yaml`] (kept current by
/// `the_live_import_takes_the_app_over`).
#[allow(dead_code)]
#[path = "../takeover/imported_live.rs"]
mod imported_live;

/// The app as plain YAML (and `kubectl create`) wrote it: `app:` labels.
mod plain {
    use super::current_image;
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

/// The app written without its selectors: Piceli's would be generated, so the running ones are kept and
/// the pod templates gain Piceli's labels (a rollout).
mod generated {
    use super::current_image;
    piceli::app! {
        app shop;
        target local = local(namespace: "shop");
        config_map settings { labels: { app: "settings" }, data: { MODE: "prod" } }
        pvc data { labels: { app: "data" }, storage: "1Gi" }
        deployment web { image: (current_image()), replicas: 2, ports: { http: 80 } }
        deployment api { image: (current_image()), replicas: 1, ports: { http: 8080 } }
        service web -> web { port: 80 => http }
        service api -> api { port: 8080 => http }
    }
}

/// The app as a Helm chart wrote it: the recommended labels, `instance` among them, are the user's.
mod helm {
    use super::current_image;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_applied_from_plain_yaml_is_taken_over() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["apply", "-n", "shop"], Some(&plain_yaml()));
    take_over(&fx, plain::shop::app, "kubectl-client-side-apply", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_made_with_kubectl_create_is_taken_over() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["create", "-n", "shop"], Some(&plain_yaml()));
    take_over(&fx, plain::shop::app, "kubectl-create", true).await;
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
    let plan = take_over(&fx, helm::shop::app, "helm", true).await;
    // The plan reports Helm's bookkeeping and leaves it alone.
    let [release] = plan.helm.as_slice() else {
        panic!("one Helm release reported: {:?}", plan.helm)
    };
    assert_eq!(
        (release.name.as_str(), release.objects.len(), release.forget),
        ("shop", 6, false)
    );
    assert_eq!(release.secrets, ["sh.helm.release.v1.shop.v1"]);
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

/// The options `piceli import yaml|live --app shop --namespace shop` import with.
/// An imported app as its user changes it after the takeover: the image tag in the imported module edited
/// to the change step's (`current_image`); until then the same image the import wrote.
fn retagged(mut app: piceli::__private::App) -> piceli::__private::App {
    for container in app
        .workloads
        .iter_mut()
        .flat_map(|w| w.containers.iter_mut())
    {
        container.image.v = current_image();
    }
    app
}

fn import_options() -> piceli_import::Options {
    piceli_import::Options {
        app: Some("shop".into()),
        namespace: Some("shop".into()),
        ..piceli_import::Options::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_import_of_the_yaml_takes_the_app_over() {
    let sources = piceli_import::read::parse_text(&plain_yaml(), "app.yaml", None).expect("read");
    let out = piceli_import::import(sources, &import_options());
    fixture::current("imported_yaml.rs", &out.source);
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["apply", "-n", "shop"], Some(&plain_yaml()));
    take_over(
        &fx,
        || retagged(imported_yaml::shop::app()),
        "kubectl-client-side-apply",
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_import_takes_the_app_over() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["apply", "-n", "shop"], Some(&plain_yaml()));
    // What the cluster made (ReplicaSets, pods) is there, as it would be when someone imports.
    fixture::pods_up(&fx.cluster).await;
    let kubeconfig = fx.cluster.kubeconfig_path().to_path_buf();
    let context = fx.cluster.context().to_string();
    let sources = tokio::task::spawn_blocking(move || {
        piceli_cli::commands::import::live::read(&kubeconfig, &context, "shop", false)
    })
    .await
    .expect("join")
    .expect("import live reads the namespace")
    .0;
    let out = piceli_import::import(sources, &import_options());
    fixture::current("imported_live.rs", &out.source);
    take_over(
        &fx,
        || retagged(imported_live::shop::app()),
        "kubectl-client-side-apply",
        true,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forget_helm_release_removes_helms_claim_with_the_takeover() {
    use piceli::runtime::engine::conflicts::TakeOwnership;
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
    let before = fixture::pods_up(&fx.cluster).await;
    let session = Session::open(helm::shop::app(), &fx.options())
        .await
        .expect("session");
    let forget = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    // A release that claims nothing here is refused.
    let unknown = session
        .plan_forgetting(vec![], true, TakeOwnership::None, forget(&["other"]))
        .await
        .expect_err("no release `other`");
    assert_eq!(piceli::core::Coded::code(&unknown).as_str(), "PCL0222");

    let plan = session
        .plan_forgetting(vec![], true, TakeOwnership::None, forget(&["shop"]))
        .await
        .expect("takeover plan forgetting the release");
    assert!(plan.helm.iter().all(|r| r.forget), "{:?}", plan.helm);
    let deleted: Vec<String> = plan
        .actions
        .iter()
        .filter(|a| a.action == ActionKind::Delete)
        .map(|a| a.key().to_string())
        .collect();
    assert_eq!(deleted, ["Secret/shop/sh.helm.release.v1.shop.v1"]);
    let web = plan
        .actions
        .iter()
        .find(|a| a.key() == "Deployment/shop/web")
        .expect("web");
    assert_eq!(web.action, ActionKind::Adopt);
    assert!(
        web.diff.iter().any(
            |c| c.path == "metadata.annotations.meta.helm.sh/release-name" && c.after.is_none()
        ),
        "the plan shows the annotation going: {:?}",
        web.diff
    );
    session.apply(&plan.hash).await.expect("takeover apply");

    assert_eq!(
        fixture::running(&fx.cluster).await,
        before,
        "UIDs, selectors and pods"
    );
    let web = get(&fx.cluster, "deployments/web").await;
    let annotations = web["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(
        !annotations.keys().any(|k| k.starts_with("meta.helm.sh/")),
        "Helm's annotations are gone: {annotations:?}"
    );
    assert_eq!(
        web["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "piceli"
    );
    let secrets = kube::Api::<piceli::k8s_openapi::api::core::v1::Secret>::namespaced(
        fx.cluster.client().expect("client"),
        "shop",
    );
    assert!(
        secrets
            .get_opt("sh.helm.release.v1.shop.v1")
            .await
            .expect("GET the release Secret")
            .is_none(),
        "the release Secret is deleted"
    );
    // Journaled: the release's steps include the Secret's deletion.
    let releases = session.state().journal.releases().expect("releases");
    let last = releases.last().expect("the takeover's release");
    let steps = session.state().journal.steps(last.id).expect("steps");
    assert!(
        steps.iter().any(|s| s.object.kind == "Secret"
            && s.object.name == "sh.helm.release.v1.shop.v1"
            && s.action == "delete"
            && s.detail.as_deref() == Some("deleted")),
        "{steps:?}"
    );
    let again = session.plan(vec![], false).await.expect("re-plan");
    assert!(!again.has_changes(), "a no-op after: {:?}", again.actions);
    assert!(
        again.helm.is_empty(),
        "nothing of Helm's is left: {:?}",
        again.helm
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_that_adds_piceli_labels_to_the_pods_says_it_rolls_them_out() {
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["apply", "-n", "shop"], Some(&plain_yaml()));
    let before = fixture::pods_up(&fx.cluster).await;
    let session = Session::open(generated::shop::app(), &fx.options())
        .await
        .expect("session");
    let plan = session.plan(vec![], true).await.expect("takeover plan");
    let web = plan
        .actions
        .iter()
        .find(|a| a.key() == "Deployment/shop/web")
        .expect("web");
    assert_eq!(web.action, ActionKind::Adopt);
    let rollout = web.rollout.as_deref().unwrap_or_default();
    assert!(
        rollout.contains("gains the labels")
            && rollout.contains("app.kubernetes.io/component")
            && rollout.contains("its pods are replaced (a rollout)"),
        "the plan says the pods roll out: {rollout:?} ({:?})",
        web.diff
    );
    for a in &plan.actions {
        if !matches!(a.object.kind.as_str(), "Deployment") {
            assert_eq!(a.rollout, None, "{}", a.key());
        }
    }
    session.apply(&plan.hash).await.expect("takeover apply");
    // The objects and their selectors stay; the pods are replaced.
    assert_eq!(fixture::running(&fx.cluster).await.objects, before.objects);
    let again = session.plan(vec![], false).await.expect("re-plan");
    assert!(!again.has_changes(), "a no-op after: {:?}", again.actions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_old_owners_are_released_even_when_a_controller_wrote_in_between() {
    use kube::api::{Api, DynamicObject, Patch, PatchParams};
    use piceli::runtime::engine::owners::release_old_owners;
    let fx = Fixture::new();
    fx.kubectl(&["create", "namespace", "shop"], None);
    fx.kubectl(&["apply", "-n", "shop"], Some(&plain_yaml()));
    let api: Api<DynamicObject> = Api::namespaced_with(
        fx.cluster.client().expect("client"),
        "shop",
        &kube::api::ApiResource::erase::<piceli::k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    // The takeover's write: the same value, now shared by kubectl's manager and the app's.
    let body = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings"}, "data": {"MODE": "prod"}});
    let written = api
        .patch(
            "settings",
            &PatchParams::apply("piceli").force(),
            &Patch::Apply(&body),
        )
        .await
        .expect("adopting write");
    // Someone writes before the owners are released: the written version is stale.
    fx.kubectl(
        &[
            "annotate",
            "-n",
            "shop",
            "configmap",
            "settings",
            "seen=yes",
        ],
        None,
    );
    let released = release_old_owners(&api, "settings", written)
        .await
        .expect("released after the conflict");
    let managers: Vec<Value> = released
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter(|m| {
            m.fields_v1
                .as_ref()
                .is_some_and(|f| f.0["f:data"]["f:MODE"].is_object())
        })
        .map(|m| m.manager.unwrap_or_default().into())
        .collect();
    assert_eq!(managers, ["piceli"], "the app alone owns data.MODE");
    assert_eq!(
        released.metadata.annotations.unwrap_or_default()["seen"],
        "yes"
    );
}
