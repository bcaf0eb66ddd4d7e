//! StatefulSets, DaemonSets and Jobs: ordinal pods and claims, one pod per node, completion and failure, orphaning, immutable fields.

use super::*;

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
