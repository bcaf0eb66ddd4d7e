//! Deployments: rollouts kubectl and kube accept, rolling updates, failures on demand, undo, recreate, pause, deletion.

use super::*;

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
