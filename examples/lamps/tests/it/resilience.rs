//! `lamps serve` (the operator ServiceAccount's token only) across a watch 410 and restarts of the local
//! cluster. While `serve` is cut off, the cluster runs on another port of the same directory, takes new
//! objects and a deletion and compacts its watch history, so the watches `serve` resumes get 410 and
//! re-list; later the cluster restarts again on its port (the watches resume). Objects created before,
//! while cut off and after are each reconciled; the deletion's cleanup runs; nothing is done twice (the
//! child of the first Lamp keeps its uid, and each audited ConfigMap has one `created` Event, not a
//! series).

use crate::support;

use std::path::Path;
use std::time::Duration;

use piceli_sim::{RunningSim, Sim, SimConfig};
use piceli_test_support::Cluster;
use serde_json::Value;
use support::{deploy, free_port, http_get, json, kubectl, lamp, ok, serve, stop, wait_for};

fn audited(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: lamps-system, labels: {{audit: \"yes\"}}}}\ndata: {{a: \"1\"}}\n"
    )
}

fn apply(kubeconfig: &Path, manifest: &str) {
    let (code, out, err) = kubectl(kubeconfig, &["apply", "-f", "-"], Some(manifest));
    assert_eq!(code, 0, "{out}{err}");
}

fn shining(admin: &Path, name: &str, color: &str) -> bool {
    json(admin, &["-n", "lamps-system", "get", "lamp", name])
        .is_some_and(|l| l["status"]["shining"] == color)
}

/// The `Audited` Events about the ConfigMap `name`.
fn audit_events(admin: &Path, name: &str) -> Vec<Value> {
    json(
        admin,
        &["-n", "lamps-system", "get", "events.events.k8s.io"],
    )
    .and_then(|l| l["items"].as_array().cloned())
    .unwrap_or_default()
    .into_iter()
    .filter(|e| e["reason"] == "Audited" && e["regarding"]["name"] == name)
    .collect()
}

fn child_uid(admin: &Path, lamp: &str) -> Option<Value> {
    json(
        admin,
        &[
            "-n",
            "lamps-system",
            "get",
            "configmap",
            &format!("lamp-{lamp}"),
        ],
    )
    .map(|c| c["metadata"]["uid"].clone())
}

/// On the local cluster only: it moves, compacts and restarts the cluster.
#[test]
fn serve_survives_a_watch_410_and_restarts_of_the_cluster_without_losing_or_repeating_work_sim_only()
 {
    let cluster = tempfile::tempdir().expect("cluster dir");
    let at = |port: Option<u16>| SimConfig {
        dir: Some(cluster.path().to_path_buf()),
        port,
        ..SimConfig::default()
    };
    let first = Cluster::start_sim(at(None));
    let port = first.addr().port();
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let admin = first.kubeconfig_path().to_path_buf();
    let operator = deploy(&first, dir);
    let addr = free_port();
    let log = dir.join("serve.log");
    let child = serve(&operator, addr, "lamps-a", &log);
    wait_for("serve ready", Duration::from_secs(30), || {
        http_get(addr, "/readyz").is_some_and(|(s, _)| s == 200)
    });

    apply(&admin, &lamp("before", "red"));
    apply(&admin, &lamp("doomed", "grey"));
    apply(&admin, &audited("audit-before"));
    wait_for("the first objects handled", Duration::from_secs(30), || {
        shining(&admin, "before", "red")
            && shining(&admin, "doomed", "grey")
            && !audit_events(&admin, "audit-before").is_empty()
    });
    let first_child = child_uid(&admin, "before").expect("the child of `before`");

    // Cut off: the cluster moves to another port, changes, and forgets the history `serve` resumes from.
    first.stop();
    let aside: RunningSim = Sim::start(at(Some(free_port().port()))).expect("the cluster, moved");
    let moved = aside.kubeconfig_path().to_path_buf();
    apply(&moved, &lamp("during", "green"));
    apply(&moved, &audited("audit-during"));
    ok(
        &moved,
        &[
            "-n",
            "lamps-system",
            "delete",
            "lamp",
            "doomed",
            "--wait=false",
        ],
    );
    aside.compact().expect("compaction");
    aside.stop();
    let sim = Sim::start(at(Some(port))).expect("the cluster, back on its port");
    wait_for(
        "the objects of the cut-off time handled",
        Duration::from_secs(60),
        || {
            shining(&admin, "during", "green")
                && !audit_events(&admin, "audit-during").is_empty()
                && json(&admin, &["-n", "lamps-system", "get", "lamp", "doomed"]).is_none()
        },
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        text.contains("too old resource version") || text.contains("Expired"),
        "the resumed watch got 410 and re-listed:\n{text}"
    );
    assert!(
        child_uid(&admin, "doomed").is_none(),
        "the cleanup of the deletion seen on re-list removed its child"
    );

    // A plain restart on the same port: the watches resume from where they were.
    sim.stop();
    std::thread::sleep(Duration::from_millis(300));
    let sim = Sim::start(at(Some(port))).expect("the cluster, restarted");
    apply(&admin, &lamp("after", "blue"));
    apply(&admin, &audited("audit-after"));
    wait_for(
        "the objects after the restart",
        Duration::from_secs(60),
        || shining(&admin, "after", "blue") && !audit_events(&admin, "audit-after").is_empty(),
    );

    assert!(shining(&admin, "before", "red"), "the first lamp kept");
    assert_eq!(
        child_uid(&admin, "before"),
        Some(first_child),
        "the first child was created once and kept"
    );
    for name in ["audit-before", "audit-during", "audit-after"] {
        let events = audit_events(&admin, name);
        assert_eq!(events.len(), 1, "{name}: one Event: {events:#?}");
        assert_eq!(events[0]["note"], "created", "{name}: {events:#?}");
        assert!(
            events[0]["series"].is_null(),
            "{name}: on_create ran once, not again after the re-list or restart: {events:#?}"
        );
    }
    assert!(stop(child).success(), "serve stops cleanly on SIGTERM");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !text.contains("forbidden"),
        "a request the rendered RBAC does not allow:\n{text}"
    );
    drop(sim);
}
