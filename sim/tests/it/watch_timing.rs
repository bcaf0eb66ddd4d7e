//! When watches get bookmarks and when their history expires, as kube-apiserver 1.33: a bookmark
//! every minute and two seconds before a watch's timeout (only for `allowWatchBookmarks`), and a
//! compaction interval after which a watch from an older resourceVersion gets 410 Gone.

use crate::common;

use std::time::{Duration, Instant};

use common::cm;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use serde_json::json;

async fn raw_watch(client: &kube::Client, query: &str) -> (Vec<serde_json::Value>, Duration) {
    let started = Instant::now();
    let req = http::Request::get(format!(
        "/api/v1/namespaces/default/configmaps?watch=true&{query}"
    ))
    .body(Vec::new())
    .expect("request");
    let text = client.request_text(req).await.expect("200 stream");
    let events = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    (events, started.elapsed())
}

#[tokio::test]
async fn a_bookmark_comes_two_seconds_before_the_watch_times_out() {
    let sim = common::sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let made = cms
        .create(&PostParams::default(), &cm("a", json!({})))
        .await
        .expect("create");
    let rv = made.metadata.resource_version.expect("rv");
    let (events, took) = raw_watch(
        &client,
        &format!("resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=3"),
    )
    .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "BOOKMARK");
    assert_eq!(events[0]["object"]["kind"], "ConfigMap");
    assert_eq!(events[0]["object"]["metadata"]["resourceVersion"], rv);
    assert!(
        took >= Duration::from_millis(2900),
        "ended at its timeout: {took:?}"
    );
    // Without allowWatchBookmarks, none.
    let (events, _) = raw_watch(&client, &format!("resourceVersion={rv}&timeoutSeconds=3")).await;
    assert!(events.is_empty(), "{events:?}");
}

#[tokio::test]
async fn a_compaction_interval_expires_versions_older_than_a_tick() {
    let sim = piceli_sim::Sim::start(piceli_sim::SimConfig {
        compaction_interval: Some(Duration::from_millis(200)),
        ..Default::default()
    })
    .expect("start");
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let first = cms
        .create(&PostParams::default(), &cm("old", json!({})))
        .await
        .expect("create");
    cms.create(&PostParams::default(), &cm("newer", json!({})))
        .await
        .expect("create");
    let rv = first.metadata.resource_version.expect("rv");
    // Two ticks later the history before the first tick is gone.
    tokio::time::sleep(Duration::from_millis(700)).await;
    let (events, _) = raw_watch(&client, &format!("resourceVersion={rv}&timeoutSeconds=1")).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 410);
    assert!(
        events[0]["object"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("too old resource version")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_watch_history_of_n_events_expires_versions_older_than_that() {
    // `--watch-history 100`: the store drops events older than the last 100 when its version passes a
    // multiple of 1,000 (an etcd compaction by revision count).
    let sim = piceli_sim::Sim::start(piceli_sim::SimConfig {
        watch_history: Some(100),
        ..Default::default()
    })
    .expect("start");
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let rv_of = |c: &ConfigMap| -> u64 {
        let rv = c.metadata.resource_version.as_deref().expect("rv");
        rv.parse().expect("a number")
    };
    let first = rv_of(
        &cms.create(&PostParams::default(), &cm("first", json!({})))
            .await
            .expect("create"),
    );
    let mut last = first;
    let mut n = 0;
    while last / 1000 == first / 1000 || last % 1000 < 10 {
        n += 1;
        let made = cms
            .create(&PostParams::default(), &cm(&format!("cm-{n}"), json!({})))
            .await
            .expect("create");
        last = rv_of(&made);
    }
    let (events, _) = raw_watch(
        &client,
        &format!("resourceVersion={first}&timeoutSeconds=1"),
    )
    .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 410);
    // A version within the last 100 events still resumes: the ConfigMaps made after it, no error.
    let recent = last - 5;
    let (events, _) = raw_watch(
        &client,
        &format!("resourceVersion={recent}&timeoutSeconds=1"),
    )
    .await;
    assert!(!events.is_empty(), "{events:?}");
    assert!(events.iter().all(|e| e["type"] == "ADDED"), "{events:?}");
}
