//! The memory of a background local cluster (`piceli-sim start`, its resident set read from
//! /proc/PID/status) returns near its baseline after 20 concurrent dry-run creates of 16 MB
//! ConfigMaps (413, over the 3 MiB body limit, read and dropped), and does not grow with repeated
//! bursts of 20 concurrent 900 KB ones (admitted, validated, not stored). Linux only (/proc).

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use serde_json::json;

use crate::background::{client, sim_cmd, start, status_kb};

/// Bursts of this many concurrent creates.
const CONCURRENT: usize = 20;

/// How far above its baseline the server's resident set may stay after a burst: well under what
/// one burst's request bodies would hold if they were kept (20 × 3 MiB read of each 16 MB body;
/// 3 × 20 × 900 KB over the repeated bursts).
const SLACK_KB: u64 = 40 * 1024;

/// The JSON of a ConfigMap whose one value is `bytes` long.
fn big(name: &str, bytes: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"x": "a".repeat(bytes)}
    }))
    .expect("configmap")
}

/// `CONCURRENT` dry-run creates of a ConfigMap of `bytes` at once (the body encoded once, so the
/// client's threads only copy it); their HTTP codes.
async fn burst(client: &kube::Client, name: &str, bytes: usize) -> Vec<u16> {
    let body = big(name, bytes);
    let calls = (0..CONCURRENT).map(|_| {
        let request = http::Request::post("/api/v1/namespaces/default/configmaps?dryRun=All")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.clone())
            .expect("request");
        let client = client.clone();
        tokio::spawn(async move {
            match client.send(request.map(kube::client::Body::from)).await {
                Ok(response) => response.status().as_u16(),
                Err(e) => panic!("a dry-run create of {bytes} bytes failed outside the API: {e:?}"),
            }
        })
    });
    let mut codes = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        codes.push(call.await.expect("create task"));
    }
    codes
}

/// Waits (bounded) for the resident set to come back within [`SLACK_KB`] of `baseline`; its last
/// reading.
async fn back_near(pid: u32, baseline: u64, after: &str) -> u64 {
    let mut last = 0;
    for _ in 0..100 {
        last = status_kb(pid, "VmRSS");
        if last <= baseline + SLACK_KB {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("after {after}: VmRSS {last} kB, baseline {baseline} kB (+{SLACK_KB} kB allowed)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_returns_near_its_baseline_after_big_dry_runs() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().to_str().expect("utf-8 path");
    let pid = start(dir.path());
    let result = async {
        let client = client(dir.path()).await;
        // Warm up: one small dry run, so the baseline includes a served request.
        assert_eq!(burst(&client, "warm", 1024).await, vec![201; CONCURRENT]);
        let baseline = status_kb(pid, "VmRSS");

        let codes = burst(&client, "huge", 16 << 20).await;
        assert_eq!(codes, vec![413; CONCURRENT], "over the body limit");
        let after_huge = back_near(pid, baseline, "20 × 16 MB").await;

        // Admitted dry runs go through the whole write pipeline: what the allocator keeps of one
        // burst is reused by the next, so repeated bursts do not add up.
        let codes = burst(&client, "large", 900 << 10).await;
        assert_eq!(codes, vec![201; CONCURRENT], "dry runs admitted");
        let after_first = status_kb(pid, "VmRSS");
        for _ in 0..3 {
            let codes = burst(&client, "large", 900 << 10).await;
            assert_eq!(codes, vec![201; CONCURRENT], "dry runs admitted");
        }
        let after_four = back_near(pid, after_first, "4 × 20 × 900 KB").await;
        let cms: Api<ConfigMap> = Api::namespaced(client, "default");
        let stored = cms.get_opt("large").await.expect("get");
        assert!(stored.is_none(), "a dry run stores nothing");
        eprintln!(
            "VmRSS baseline {baseline} kB, after the 16 MB burst {after_huge} kB, after one 900 KB burst {after_first} kB, after four {after_four} kB"
        );
    };
    // Stop the server whatever happened.
    let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(result)).await;
    let stopped = sim_cmd(&["stop", "--dir", d]);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    assert!(stopped.status.success(), "{stopped:?}");
}
