//! `deploy` rolls back after a failed check, on both clusters: release 1 passes its HTTP check, release 2's
//! check asks the pods' responder for `/status/500` (the local cluster's built-in responder and the real
//! control plane's, behind kwok's port forwards, answer that path with 500), fails, and the target's
//! `rollback_on_failed_checks` re-applies release 1's objects as release 3.

use piceli::runtime::engine::deploy::{DeployEvent, DeployOptions, DeployReport};
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli_test_support::Cluster;

const IMAGE_V1: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";
const IMAGE_V2: &str = "docker.io/library/nginx:1.28@sha256:1111111111111111111111111111111111111111111111111111111111111111";

mod v1 {
    piceli::app! {
        app rollback-test;
        target local = local(namespace: "rbk") { rollback_on_failed_checks: true };
        deployment web { image: (crate::deploy_rollback::IMAGE_V1), ports: { http: 80 } }
        service web -> web { port: 80 => http }
        check http(web, "/", expect: 200, retries: 1, timeout: "5s");
    }
}

mod v2 {
    piceli::app! {
        app rollback-test;
        target local = local(namespace: "rbk") { rollback_on_failed_checks: true };
        deployment web { image: (crate::deploy_rollback::IMAGE_V2), ports: { http: 80 } }
        service web -> web { port: 80 => http }
        check http(web, "/status/500", expect: 200, retries: 1, timeout: "5s");
    }
}

/// Plans `app` and deploys it under the plan's own approval.
async fn deploy(
    app: piceli::core::model::App,
    opts: &SessionOptions,
) -> (DeployReport, Vec<String>) {
    let mut session = Session::open(app, opts).await.expect("session");
    let first = session
        .deploy(&DeployOptions::default(), &[], |_| {})
        .await
        .expect("plan");
    assert!(first.approval_required, "{first:?}");
    let approve = DeployOptions {
        approve: first.hash.clone(),
        resume: false,
        images: None,
    };
    let mut events = Vec::new();
    let report = session
        .deploy(&approve, &[], |e: &DeployEvent| {
            let e = serde_json::to_value(e).expect("event");
            events.push(e["event"].as_str().unwrap_or_default().to_string());
        })
        .await
        .expect("deploy");
    (report, events)
}

fn live_image(cluster: &Cluster) -> String {
    let out = cluster
        .kubectl()
        .args(["get", "deployment", "web", "-n", "rbk"])
        .args(["-o", "jsonpath={.spec.template.spec.containers[0].image}"])
        .output()
        .expect("kubectl");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_check_rolls_back_to_the_previous_release_on_both_clusters() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = SessionOptions {
        connect: ConnectOptions {
            kubeconfig: Some(cluster.kubeconfig_path().to_path_buf()),
            context: Some(cluster.context().to_string()),
        },
        state_dir: Some(state.path().to_path_buf()),
        wait: Some(std::time::Duration::from_secs(120)),
        wait_lock: None,
        ..SessionOptions::default()
    };

    let (first, _) = deploy(v1::rollback_test::app(), &opts).await;
    assert_eq!(first.release, Some(1));
    assert!(first.failed().is_empty(), "{:?}", first.checks);
    assert_eq!(live_image(&cluster), IMAGE_V1);

    let (second, events) = deploy(v2::rollback_test::app(), &opts).await;
    assert_eq!(second.release, Some(2));
    assert_eq!(second.failed(), ["http-web"], "{:?}", second.checks);
    assert!(
        second.checks[0].message.contains("500"),
        "{:?}",
        second.checks[0]
    );
    assert!(events.iter().any(|e| e == "rollback"), "{events:?}");
    assert_eq!(
        (second.restored, second.rollback_release),
        (Some(1), Some(3))
    );
    assert_eq!(
        live_image(&cluster),
        IMAGE_V1,
        "release 1's objects are live again"
    );
}
