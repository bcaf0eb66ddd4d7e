//! Boolean query parameters as the apiserver parses them: every value except `0`/`false` (any case)
//! is true. Driven by the official Python client (which sends `watch=True`, `force=True`, ...) and by
//! kube with the same spellings.

use crate::common::{self, api_error, cm};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams, WatchEvent};
use serde_json::json;

#[test]
fn the_official_python_client_watches_bookmarks_and_forces() {
    let sim = common::sim();
    let stdout = common::python_client(&sim, "python_client.py", &[], "the Python client run");
    for line in [
        "watch=True: ADDED a",
        "initial-events-end bookmark",
        "force=True: conflict forced",
    ] {
        assert!(stdout.contains(line), "{stdout}");
    }
}

#[tokio::test]
async fn kube_requests_spelling_booleans_true_are_honoured() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    cms.create(&PostParams::default(), &cm("a", json!({"k": "1"})))
        .await
        .expect("create");
    let req =
        http::Request::get("/api/v1/namespaces/default/configmaps?watch=True&timeoutSeconds=5")
            .body(Vec::new())
            .expect("request");
    let mut events = client
        .request_events::<ConfigMap>(req)
        .await
        .expect("watch=True is a watch")
        .boxed();
    match events.next().await {
        Some(Ok(WatchEvent::Added(o))) => assert_eq!(o.metadata.name.as_deref(), Some("a")),
        other => panic!("expected ADDED, got {other:?}"),
    }
    drop(events);
    // watch=FALSE is a list.
    let req = http::Request::get("/api/v1/namespaces/default/configmaps?watch=FALSE")
        .body(Vec::new())
        .expect("request");
    let list: serde_json::Value = client.request(req).await.expect("list");
    assert_eq!(list["kind"], "ConfigMapList");
    // force=True settles an apply conflict.
    let apply = |manager: &str, value: &str, force: &str| {
        http::Request::patch(format!(
            "/api/v1/namespaces/default/configmaps/a?fieldManager={manager}{force}"
        ))
        .header(http::header::CONTENT_TYPE, "application/apply-patch+yaml")
        .body(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": value}})
                .to_string()
                .into_bytes(),
        )
        .expect("request")
    };
    let err = api_error(
        client
            .request::<ConfigMap>(apply("other", "2", "&force=False"))
            .await
            .expect_err("force=False conflicts with the creator"),
    );
    assert_eq!(err.code, 409);
    let forced: ConfigMap = client
        .request(apply("other", "2", "&force=True"))
        .await
        .expect("force=True");
    assert_eq!(forced.data.expect("data")["k"], "2");
}
