//! Acceptance tests of the simulated controllers with the real kubectl and kube 5: rollouts that
//! `kubectl rollout status`, `kubectl wait` and `await_condition(is_deployment_completed)` accept,
//! rolling updates, failures on demand (`sim.piceli.dev/behavior`), cascading deletion and one
//! acting controller per shared directory.

use crate::common;

use std::time::{Duration, Instant};

use common::{DEPLOYMENT, Kubectl, eventually, items, json_of};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use serde_json::{Value, json};

/// One object as JSON, or `None` while it does not exist (yet).
fn get_json(k: &Kubectl, what: &str) -> Option<Value> {
    let out = k.run(&["get", what, "-o", "json"]);
    (out.code == 0).then(|| json_of(&out.stdout))
}

fn crash_looping(deadline: u32) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: broken}}
spec:
  replicas: 1
  progressDeadlineSeconds: {deadline}
  selector: {{matchLabels: {{app: broken}}}}
  template:
    metadata:
      labels: {{app: broken}}
      annotations: {{sim.piceli.dev/behavior: crash-loop}}
    spec:
      containers: [{{name: app, image: 'busybox:1.36'}}]
"
    )
}

#[test]
fn kubectl_rollout_status_and_wait_succeed_after_an_apply() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &f]);
    let out = k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    assert!(out.contains("successfully rolled out"), "{out}");
    k.ok(&[
        "wait",
        "--for=condition=Available",
        "deploy/web",
        "--timeout=30s",
    ]);

    let d = json_of(&k.ok(&["get", "deploy/web", "-o", "json"]));
    let st = &d["status"];
    assert_eq!(st["observedGeneration"], d["metadata"]["generation"]);
    for key in [
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
    ] {
        assert_eq!(st[key], 2, "{key} in {st}");
    }
    let progressing = st["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Progressing"))
        .cloned()
        .expect("Progressing condition");
    assert_eq!(progressing["reason"], "NewReplicaSetAvailable");
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );

    let rss = items(&k, "rs");
    assert_eq!(rss.len(), 1);
    let rs = &rss[0];
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .expect("pod-template-hash")
        .to_string();
    assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(rs["metadata"]["ownerReferences"][0]["kind"], "Deployment");
    assert_eq!(
        rs["spec"]["selector"]["matchLabels"]["pod-template-hash"],
        hash
    );

    let pods = items(&k, "pods");
    assert_eq!(pods.len(), 2);
    for p in &pods {
        assert_eq!(p["spec"]["nodeName"], "piceli-sim-node");
        assert_eq!(p["status"]["phase"], "Running");
        assert!(
            p["status"]["podIP"]
                .as_str()
                .is_some_and(|ip| ip.starts_with("10.244."))
        );
        assert_eq!(
            p["status"]["containerStatuses"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(p["metadata"]["labels"]["pod-template-hash"], hash);
        assert!(
            p["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n.starts_with(&format!("web-{hash}-")))
        );
    }
    let managers = k.ok(&[
        "get",
        "pods",
        "--show-managed-fields",
        "-o",
        "jsonpath={.items[*].metadata.managedFields[*].manager}",
    ]);
    for m in ["kube-controller-manager", "kube-scheduler", "kubelet"] {
        assert!(managers.contains(m), "{managers}");
    }
    let reasons = eventually("events for the transitions", 10, || {
        let reasons = k.ok(&["get", "events", "-o", "jsonpath={.items[*].reason}"]);
        [
            "ScalingReplicaSet",
            "SuccessfulCreate",
            "Scheduled",
            "Started",
        ]
        .iter()
        .all(|r| reasons.contains(r))
        .then_some(reasons)
    });
    assert!(!reasons.contains("BackOff"), "{reasons}");
    let described = k.ok(&["describe", "deploy/web"]);
    assert!(
        described.contains("Scaled up replica set web-"),
        "{described}"
    );
    let node = json_of(&k.ok(&["get", "node", "piceli-sim-node", "-o", "json"]));
    assert!(node["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    }));
}

#[tokio::test]
async fn kube_await_condition_sees_the_deployment_complete() {
    let sim = common::live_sim();
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "api"}},
                 "template": {"metadata": {"labels": {"app": "api"}},
                              "spec": {"containers": [{"name": "api", "image": "nginx:1.27"}]}}}
    }))
    .expect("deployment");
    api.create(&PostParams::default(), &d)
        .await
        .expect("create");
    let done = tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(api.clone(), "api", conditions::is_deployment_completed()),
    )
    .await
    .expect("completes within 30 s")
    .expect("watch");
    let st = done.and_then(|d| d.status).expect("status");
    assert_eq!(st.available_replicas, Some(3));
    assert_eq!(st.updated_replicas, Some(3));
}

#[test]
fn a_rolling_update_moves_every_pod_to_the_new_replica_set() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", &DEPLOYMENT.replace("replicas: 2", "replicas: 4"));
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let old = items(&k, "rs")[0]["metadata"]["name"]
        .as_str()
        .expect("rs name")
        .to_string();

    k.ok(&["set", "image", "deploy/web", "web=nginx:1.28"]);
    // While the rollout runs, pods never exceed replicas + maxSurge (25% of 4 = 1).
    let watch_until = Instant::now() + Duration::from_secs(30);
    let mut most = 0;
    loop {
        let n = items(&k, "pods").len();
        most = most.max(n);
        let d = json_of(&k.ok(&["get", "deploy/web", "-o", "json"]));
        let st = &d["status"];
        if st["updatedReplicas"] == 4
            && st["availableReplicas"] == 4
            && st["replicas"] == 4
            && st["observedGeneration"] == d["metadata"]["generation"]
        {
            break;
        }
        assert!(Instant::now() < watch_until, "rollout did not finish: {st}");
    }
    assert!(most <= 5, "{most} pods at once");
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);

    let rss = items(&k, "rs");
    assert_eq!(rss.len(), 2);
    let new = rss
        .iter()
        .find(|r| r["metadata"]["name"] != old.as_str())
        .expect("new rs");
    let previous = rss
        .iter()
        .find(|r| r["metadata"]["name"] == old.as_str())
        .expect("old rs");
    assert_eq!(new["spec"]["replicas"], 4);
    assert_eq!(
        new["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    assert_eq!(previous["spec"]["replicas"], 0);
    let hash = new["metadata"]["labels"]["pod-template-hash"].clone();
    eventually("old pods gone", 10, || {
        let pods = items(&k, "pods");
        (pods.len() == 4
            && pods
                .iter()
                .all(|p| p["metadata"]["labels"]["pod-template-hash"] == hash))
        .then_some(())
    });
    let history = k.ok(&["rollout", "history", "deploy/web"]);
    assert!(history.contains('1') && history.contains('2'), "{history}");
}

#[test]
fn a_crash_looping_deployment_exceeds_its_progress_deadline() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file("broken.yaml", &crash_looping(2));
    k.ok(&["apply", "-f", &f]);
    let reason = |k: &Kubectl| {
        k.ok(&[
            "get",
            "deploy/broken",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Progressing\")].reason}",
        ])
    };
    eventually("ProgressDeadlineExceeded", 20, || {
        (reason(&k) == "ProgressDeadlineExceeded").then_some(())
    });
    let wait = k.run(&[
        "wait",
        "--for=condition=Available",
        "deploy/broken",
        "--timeout=3s",
    ]);
    assert_ne!(wait.code, 0, "wait must time out: {wait:?}");
    let rollout = k.run(&["rollout", "status", "deploy/broken", "--timeout=10s"]);
    assert_ne!(rollout.code, 0);
    assert!(
        rollout.stderr.contains("exceeded its progress deadline"),
        "{rollout:?}"
    );
    let pod = eventually("a restart", 10, || {
        let pods = items(&k, "pods");
        pods.into_iter().find(|p| {
            p["status"]["containerStatuses"][0]["restartCount"]
                .as_i64()
                .is_some_and(|n| n >= 1)
        })
    });
    let cs = &pod["status"]["containerStatuses"][0];
    assert_eq!(cs["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(cs["ready"], false);
    assert_eq!(pod["status"]["phase"], "Running");
    let table = k.ok(&["get", "pods"]);
    assert!(table.contains("CrashLoopBackOff"), "{table}");
    let warnings = k.ok(&[
        "get",
        "events",
        "--field-selector=type=Warning",
        "-o",
        "jsonpath={.items[*].reason}",
    ]);
    assert!(warnings.contains("BackOff"), "{warnings}");
}

#[test]
fn never_ready_pods_run_without_becoming_ready() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file(
        "p.yaml",
        "apiVersion: v1
kind: Pod
metadata:
  name: lazy
  annotations: {sim.piceli.dev/behavior: never-ready}
spec:
  containers: [{name: app, image: 'busybox:1.36'}]
",
    );
    k.ok(&["apply", "-f", &f]);
    let pod = eventually("Running", 10, || {
        let p = json_of(&k.ok(&["get", "pod/lazy", "-o", "json"]));
        (p["status"]["phase"] == "Running").then_some(p)
    });
    let ready = pod["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .cloned()
        .expect("Ready condition");
    assert_eq!(ready["status"], "False");
    assert!(pod["status"]["containerStatuses"][0]["state"]["running"].is_object());
    let wait = k.run(&["wait", "--for=condition=Ready", "pod/lazy", "--timeout=1s"]);
    assert_ne!(wait.code, 0);
}

#[test]
fn deleting_a_deployment_removes_its_replica_sets_and_pods() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    assert_eq!(items(&k, "pods").len(), 2);
    k.ok(&["delete", "deploy/web"]);
    eventually("replica sets and pods gone", 10, || {
        (items(&k, "rs").is_empty() && items(&k, "pods").is_empty()).then_some(())
    });
    // And nothing comes back.
    std::thread::sleep(Duration::from_millis(300));
    assert!(items(&k, "pods").is_empty());
}

#[test]
fn one_process_acts_for_a_shared_directory() {
    let dir = tempfile::tempdir().expect("dir");
    let config = piceli_sim::SimConfig {
        dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let first = piceli_sim::Sim::start(config.clone()).expect("first");
    let second = piceli_sim::Sim::start(config).expect("second");
    let k = Kubectl::new(&second);
    let f = k.file("d.yaml", &DEPLOYMENT.replace("replicas: 2", "replicas: 3"));
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    // Two acting controllers would race and create extra pods or ReplicaSets.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(items(&k, "pods").len(), 3);
    assert_eq!(items(&k, "rs").len(), 1);
    // When the leader stops, the other process takes over.
    first.stop();
    k.ok(&["scale", "deploy/web", "--replicas=1"]);
    eventually("scaled down by the remaining process", 20, || {
        let pods = items(&k, "pods");
        eprintln!(
            "{} pods; rs {}",
            pods.len(),
            k.ok(&["get", "rs", "-o", "wide"])
        );
        (pods.len() == 1).then_some(())
    });
}

#[test]
fn a_stateful_set_gets_ordinal_pods_and_claims_and_rolls_out() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let sts = "apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: 'postgres:16'}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
";
    let f = k.file("sts.yaml", sts);
    k.ok(&["apply", "-f", &f]);
    let out = k.ok(&["rollout", "status", "sts/db", "--timeout=30s"]);
    assert!(
        out.contains("roll out complete") || out.contains("rolling update complete"),
        "{out}"
    );
    let mut names: Vec<String> = items(&k, "pods")
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str().map(String::from))
        .collect();
    names.sort();
    assert_eq!(names, ["db-0", "db-1", "db-2"]);
    let mut claims: Vec<String> = items(&k, "pvc")
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str().map(String::from))
        .collect();
    claims.sort();
    assert_eq!(claims, ["data-db-0", "data-db-1", "data-db-2"]);
    let pod = json_of(&k.ok(&["get", "pod/db-1", "-o", "json"]));
    assert_eq!(pod["spec"]["hostname"], "db-1");
    assert_eq!(
        pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"],
        "1"
    );

    k.ok(&["set", "image", "sts/db", "db=postgres:17"]);
    k.ok(&["rollout", "status", "sts/db", "--timeout=30s"]);
    let s = json_of(&k.ok(&["get", "sts/db", "-o", "json"]));
    assert_eq!(
        s["status"]["currentRevision"],
        s["status"]["updateRevision"]
    );
    assert_eq!(s["status"]["updatedReplicas"], 3);
    let images = k.ok(&[
        "get",
        "pods",
        "-o",
        "jsonpath={.items[*].spec.containers[0].image}",
    ]);
    assert_eq!(images, "postgres:17 postgres:17 postgres:17");
    assert!(items(&k, "controllerrevisions").len() >= 2);
}

#[test]
fn a_daemon_set_runs_one_pod_per_node() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let ds = "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: 'fluent-bit:3'}]
";
    k.ok(&["apply", "-f", &k.file("ds.yaml", ds)]);
    k.ok(&["rollout", "status", "ds/agent", "--timeout=30s"]);
    let pods = items(&k, "pods");
    assert_eq!(pods.len(), 1);
    assert_eq!(pods[0]["spec"]["nodeName"], "piceli-sim-node");
    k.ok(&["set", "image", "ds/agent", "agent=fluent-bit:4"]);
    k.ok(&["rollout", "status", "ds/agent", "--timeout=30s"]);
    eventually("the new pod alone", 10, || {
        let pods = items(&k, "pods");
        (pods.len() == 1 && pods[0]["spec"]["containers"][0]["image"] == "fluent-bit:4")
            .then_some(())
    });
}

#[test]
fn jobs_complete_or_fail_on_demand() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let job = |name: &str, annotations: &str| {
        format!(
            "apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  completions: 2
  parallelism: 2
  backoffLimit: 1
  template:
    metadata: {{annotations: {{{annotations}}}}}
    spec:
      restartPolicy: Never
      containers: [{{name: run, image: 'busybox:1.36'}}]
"
        )
    };
    k.ok(&["apply", "-f", &k.file("ok.yaml", &job("ok", ""))]);
    k.ok(&[
        "wait",
        "--for=condition=Complete",
        "job/ok",
        "--timeout=30s",
    ]);
    let j = json_of(&k.ok(&["get", "job/ok", "-o", "json"]));
    assert_eq!(j["status"]["succeeded"], 2);
    assert!(j["status"]["completionTime"].is_string());
    k.ok(&[
        "apply",
        "-f",
        &k.file("bad.yaml", &job("bad", "sim.piceli.dev/behavior: fail")),
    ]);
    k.ok(&["wait", "--for=condition=Failed", "job/bad", "--timeout=30s"]);
    let j = json_of(&k.ok(&["get", "job/bad", "-o", "json"]));
    assert!(
        j["status"]["failed"].as_i64().is_some_and(|n| n >= 2),
        "{j}"
    );
    let reason = k.ok(&[
        "get",
        "job/bad",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Failed\")].reason}",
    ]);
    assert_eq!(reason, "BackoffLimitExceeded");
}

#[test]
fn services_get_endpoints_and_slices_from_ready_pods() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", &k.file("d.yaml", DEPLOYMENT)]);
    let svc = "apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: 80}]
";
    k.ok(&["apply", "-f", &k.file("s.yaml", svc)]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let ep = eventually("two ready addresses", 10, || {
        let ep = get_json(&k, "endpoints/web")?;
        (ep["subsets"][0]["addresses"].as_array().map(Vec::len) == Some(2)).then_some(ep)
    });
    assert_eq!(ep["subsets"][0]["ports"][0]["port"], 80);
    let pod_ips: Vec<String> = items(&k, "pods")
        .iter()
        .filter_map(|p| p["status"]["podIP"].as_str().map(String::from))
        .collect();
    for a in ep["subsets"][0]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        assert!(pod_ips.iter().any(|ip| a["ip"] == ip.as_str()), "{a}");
    }
    let slices = items(&k, "endpointslices");
    assert_eq!(slices.len(), 1);
    assert_eq!(
        slices[0]["metadata"]["labels"]["kubernetes.io/service-name"],
        "web"
    );
    assert_eq!(slices[0]["endpoints"].as_array().map(Vec::len), Some(2));
    assert_eq!(slices[0]["endpoints"][0]["conditions"]["ready"], true);
    k.ok(&["scale", "deploy/web", "--replicas=1"]);
    eventually("one address left", 10, || {
        let ep = get_json(&k, "endpoints/web")?;
        (ep["subsets"][0]["addresses"].as_array().map(Vec::len) == Some(1)).then_some(())
    });
    k.ok(&["delete", "svc/web"]);
    eventually("endpoints and slices gone", 10, || {
        (items(&k, "endpoints").is_empty() && items(&k, "endpointslices").is_empty()).then_some(())
    });
}

#[test]
fn claims_bind_to_provisioned_volumes() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pvc = "apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
";
    k.ok(&["apply", "-f", &k.file("pvc.yaml", pvc)]);
    k.ok(&[
        "wait",
        "--for=jsonpath={.status.phase}=Bound",
        "pvc/data",
        "--timeout=30s",
    ]);
    let claim = json_of(&k.ok(&["get", "pvc/data", "-o", "json"]));
    assert_eq!(claim["spec"]["storageClassName"], "standard");
    assert_eq!(claim["status"]["capacity"]["storage"], "2Gi");
    let volume = claim["spec"]["volumeName"]
        .as_str()
        .expect("volumeName")
        .to_string();
    let pv = json_of(&k.ok(&["get", "pv", &volume, "-o", "json"]));
    assert_eq!(pv["status"]["phase"], "Bound");
    assert_eq!(pv["spec"]["claimRef"]["name"], "data");
    k.ok(&["delete", "pvc/data"]);
    eventually("the volume reclaimed", 10, || {
        items(&k, "pv").is_empty().then_some(())
    });
}

#[test]
fn rollout_undo_and_revision_history_limit() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let d = DEPLOYMENT.replace("replicas: 2", "replicas: 2\n  revisionHistoryLimit: 1");
    k.ok(&["apply", "-f", &k.file("d.yaml", &d)]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    for image in ["nginx:1.28", "nginx:1.29"] {
        k.ok(&["set", "image", "deploy/web", &format!("web={image}")]);
        k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    }
    eventually("one old ReplicaSet kept", 10, || {
        (items(&k, "rs").len() == 2).then_some(())
    });
    k.ok(&["rollout", "undo", "deploy/web"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    let images = eventually("pods back on 1.28", 10, || {
        let images = k.ok(&[
            "get",
            "pods",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ]);
        (images == "nginx:1.28 nginx:1.28").then_some(images)
    });
    assert_eq!(images, "nginx:1.28 nginx:1.28");
    let rss = items(&k, "rs");
    let current = rss
        .iter()
        .find(|r| r["spec"]["replicas"] == 2)
        .expect("current rs");
    assert_eq!(
        current["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "4"
    );
    assert_eq!(
        k.ok(&[
            "get",
            "deploy/web",
            "-o",
            "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}"
        ]),
        "4"
    );
}

#[test]
fn recreate_stops_old_pods_before_starting_new_ones() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let d = DEPLOYMENT.replace("replicas: 2", "replicas: 2\n  strategy: {type: Recreate}");
    k.ok(&["apply", "-f", &k.file("d.yaml", &d)]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    k.ok(&["set", "image", "deploy/web", "web=nginx:1.28"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let images = k.ok(&[
            "get",
            "pods",
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ]);
        assert!(
            !(images.contains("nginx:1.27") && images.contains("nginx:1.28")),
            "old and new pods at once: {images}"
        );
        if images == "nginx:1.28 nginx:1.28" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "recreate did not finish: {images}"
        );
    }
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
}

#[test]
fn a_paused_deployment_waits_for_resume() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", &k.file("d.yaml", DEPLOYMENT)]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    k.ok(&["rollout", "pause", "deploy/web"]);
    k.ok(&["set", "image", "deploy/web", "web=nginx:1.28"]);
    eventually("Progressing Unknown/DeploymentPaused", 10, || {
        let c = k.ok(&[
            "get",
            "deploy/web",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Progressing\")].status}/{.status.conditions[?(@.type==\"Progressing\")].reason}",
        ]);
        (c == "Unknown/DeploymentPaused").then_some(())
    });
    assert_eq!(items(&k, "rs").len(), 1, "no new ReplicaSet while paused");
    k.ok(&["rollout", "resume", "deploy/web"]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    assert_eq!(items(&k, "rs").len(), 2);
}

#[test]
fn a_killed_leader_is_replaced_without_waiting_for_expiry() {
    let dir = tempfile::tempdir().expect("dir");
    let mut leader = std::process::Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
        .args(["serve", "--dir"])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    eventually("the first server", 20, || {
        dir.path().join("sim.pid").exists().then_some(())
    });
    // Let it take the leadership row before the second server starts.
    std::thread::sleep(Duration::from_millis(300));
    let config = piceli_sim::SimConfig {
        dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let follower = piceli_sim::Sim::start(config).expect("second");
    let _ = leader.kill();
    let _ = leader.wait();
    let k = Kubectl::new(&follower);
    k.ok(&["apply", "-f", &k.file("d.yaml", DEPLOYMENT)]);
    // Well under the 5 s a dead leader's row would take to expire.
    k.ok(&["rollout", "status", "deploy/web", "--timeout=4s"]);
}

#[test]
fn deleting_a_namespace_removes_its_workloads_for_good() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["create", "namespace", "team"]);
    k.ok(&["apply", "-n", "team", "-f", &k.file("d.yaml", DEPLOYMENT)]);
    k.ok(&[
        "rollout",
        "status",
        "-n",
        "team",
        "deploy/web",
        "--timeout=30s",
    ]);
    k.ok(&["delete", "namespace", "team"]);
    std::thread::sleep(Duration::from_millis(300));
    let left = k.ok(&["get", "pods,rs,deploy", "-A", "-o", "name"]);
    assert!(left.trim().is_empty(), "{left}");
}

#[test]
fn kubectl_create_deployment_rolls_out() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&[
        "create",
        "deployment",
        "made",
        "--image=nginx:1.27",
        "--replicas=2",
    ]);
    k.ok(&["rollout", "status", "deploy/made", "--timeout=30s"]);
    k.ok(&["expose", "deploy/made", "--port=80"]);
    eventually("endpoints for the exposed deployment", 10, || {
        let ep = get_json(&k, "endpoints/made")?;
        (ep["subsets"][0]["addresses"].as_array().map(Vec::len) == Some(2)).then_some(())
    });
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: app, image: 'busybox:1.36'}]
";

/// The pods whose owner is the Job `uid`, and those with no owner left.
fn job_pods(k: &Kubectl, uid: &str) -> (usize, usize) {
    let pods = items(k, "pods");
    let owned = pods
        .iter()
        .filter(|p| p["metadata"]["ownerReferences"][0]["uid"] == uid)
        .count();
    let orphans = pods
        .iter()
        .filter(|p| {
            p["metadata"]["ownerReferences"]
                .as_array()
                .is_none_or(|r| r.is_empty())
        })
        .count();
    (owned, orphans)
}

#[test]
fn deleting_a_job_orphans_its_pods_unless_the_request_names_a_policy() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file("job.yaml", JOB);
    // No propagationPolicy (a raw DELETE): batch/v1 Jobs keep their pods, without their owner, as
    // kube-apiserver does for compatibility.
    k.ok(&["apply", "-f", &f]);
    let uid = get_json(&k, "job/once").expect("job")["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_string();
    eventually("the Job's pods", 10, || {
        (job_pods(&k, &uid).0 == 2).then_some(())
    });
    k.ok(&[
        "delete",
        "--raw",
        "/apis/batch/v1/namespaces/default/jobs/once",
    ]);
    eventually("the Job gone", 10, || {
        get_json(&k, "job/once").is_none().then_some(())
    });
    assert_eq!(job_pods(&k, &uid), (0, 2), "orphaned, not deleted");
    k.ok(&["delete", "pods", "--all"]);
    // kubectl names Background (its default cascade): the pods go with the Job.
    k.ok(&["apply", "-f", &f]);
    let uid = get_json(&k, "job/once").expect("job")["metadata"]["uid"]
        .as_str()
        .expect("uid")
        .to_string();
    eventually("the Job's pods", 10, || {
        (job_pods(&k, &uid).0 == 2).then_some(())
    });
    k.ok(&["delete", "job/once"]);
    eventually("pods deleted with the Job", 10, || {
        items(&k, "pods").is_empty().then_some(())
    });
}

#[test]
fn a_jobs_immutable_fields_are_refused_and_elastic_completions_allowed() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "--server-side", "-f", &k.file("job.yaml", JOB)]);
    for (what, from, to) in [
        (
            "spec.template",
            "image: 'busybox:1.36'",
            "image: 'busybox:1.37'",
        ),
        (
            "spec.completionMode",
            "completionMode: Indexed",
            "completionMode: NonIndexed",
        ),
        ("spec.completions", "parallelism: 2", "parallelism: 3"),
        (
            "spec.podFailurePolicy",
            "  template:",
            "  podFailurePolicy: {rules: [{action: FailJob, onExitCodes: {operator: In, values: [42]}}]}\n  template:",
        ),
    ] {
        let changed = JOB.replace(from, to).replace(
            "completions: 2",
            if what == "spec.completions" {
                "completions: 4"
            } else {
                "completions: 2"
            },
        );
        let out = k.run(&[
            "apply",
            "--server-side",
            "-f",
            &k.file("changed.yaml", &changed),
        ]);
        assert_eq!(out.code, 1, "{what}: {}", out.stdout);
        let expected = if what == "spec.completions" {
            "can only be modified in tandem with spec.parallelism"
        } else {
            "field is immutable"
        };
        assert!(
            out.stderr.contains(what) && out.stderr.contains(expected),
            "{what}: {}",
            out.stderr
        );
    }
    // An Indexed Job's completions change together with its parallelism.
    let elastic = JOB
        .replace("completions: 2", "completions: 3")
        .replace("parallelism: 2", "parallelism: 3");
    k.ok(&[
        "apply",
        "--server-side",
        "-f",
        &k.file("elastic.yaml", &elastic),
    ]);
    assert_eq!(
        get_json(&k, "job/once").expect("job")["spec"]["completions"],
        3
    );
}
