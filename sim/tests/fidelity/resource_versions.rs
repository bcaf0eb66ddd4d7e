//! A list or watch from a resourceVersion the store has not reached waits for it (up to 3 s, as the
//! watch cache does) and then answers 504 `Too large resource version`, which clients recognise.

use crate::common::{self, Kubectl};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, WatchParams};

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
fn kube_watch_from_a_future_resource_version_is_504_and_a_reached_one_is_served() {
    let sim = common::sim();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
        let err = api
            .watch(&WatchParams::default().timeout(1), "99999999")
            .await
            .err()
            .expect("504");
        let status = common::api_error(err);
        assert_eq!((status.code, status.reason.as_str()), (504, "Timeout"));
        let causes = status.details.expect("details").causes;
        assert_eq!(causes[0].reason, "ResourceVersionTooLarge");
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
