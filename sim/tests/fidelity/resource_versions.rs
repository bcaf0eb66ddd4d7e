//! A list or watch from a resourceVersion the store has not reached waits for it (up to 3 s, as the
//! watch cache does) and then answers 504 `Too large resource version`, which clients recognise.

use crate::common::{self, Kubectl};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};

#[test]
fn kubectl_list_from_a_future_resource_version_is_504_too_large() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let started = std::time::Instant::now();
    let out = k.run(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?resourceVersion=99999999",
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains(
            "Error from server (Timeout): Too large resource version: 99999999, current: "
        ),
        "{}",
        out.stderr
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(3),
        "waited for the version first"
    );
}

#[test]
fn kubectl_watch_from_a_future_resource_version_is_504_and_a_reached_one_is_served() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    // (kube's client retries 504 answers with backoff, as it may for a gateway timeout, so the
    // watch is driven by kubectl here.)
    let out = k.run(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=99999999",
    ]);
    assert!(
        out.stderr
            .contains("Error from server (Timeout): Too large resource version: 99999999"),
        "{}",
        out.stderr
    );
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
        let rv = api
            .list(&ListParams::default())
            .await
            .expect("list")
            .metadata
            .resource_version
            .expect("rv");
        api.list(&ListParams::default().at(&rv))
            .await
            .expect("a reached version is listed");
    });
}
