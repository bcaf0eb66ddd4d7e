//! Taking over an app that already runs (issue 29), end to end on the test cluster: the same two-service
//! app applied from plain YAML with `kubectl apply` (client-side), created with `kubectl create`, and
//! released Helm-style (instance labels, Helm's annotations and release Secret, field manager `helm`),
//! then taken over by a hand-written `app!` — and by what `piceli import yaml` and `piceli import live` write for
//! it — with `plan --adopt-all`: every object is adopted (nothing
//! created or replaced), the fields that change owner are named, UIDs, selectors and pods stay, the next
//! plan is a no-op, and a normal change and its rollback work.

#[path = "takeover/fixture.rs"]
mod fixture;

use fixture::{Fixture, current_image, get, helm_yaml, plain_yaml, take_over};

/// What `piceli import yaml` writes for [`plain_yaml`] (kept current by
/// `the_import_of_the_yaml_takes_the_app_over`): its `fn main` is not this test's.
#[allow(dead_code)]
#[path = "takeover/imported_yaml.rs"]
mod imported_yaml;

/// What `piceli import live` writes for the namespace that runs [`plain_yaml`] (kept current by
/// `the_live_import_takes_the_app_over`).
#[allow(dead_code)]
#[path = "takeover/imported_live.rs"]
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
    take_over(&fx, helm::shop::app, "helm", true).await;
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
        imported_yaml::shop::app,
        "kubectl-client-side-apply",
        false,
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
        piceli_cli::commands::import_live::read(&kubeconfig, &context, "shop")
    })
    .await
    .expect("join")
    .expect("import live reads the namespace");
    let out = piceli_import::import(sources, &import_options());
    fixture::current("imported_live.rs", &out.source);
    take_over(
        &fx,
        imported_live::shop::app,
        "kubectl-client-side-apply",
        false,
    )
    .await;
}
