//! The CronJob controller (on the sim-only `sim.piceli.dev/schedule-every` interval: runs,
//! history limits, concurrency policies, suspend, `kubectl create job --from=cronjob/X`) and
//! foreground/orphan deletion, with the real kubectl and kube 5.

use crate::common;

use std::time::{Duration, Instant};

use common::{DEPLOYMENT, Kubectl, eventually, items, json_of};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

/// A CronJob running every second (sim-only annotation); `extra` goes into its spec, `pod_note`
/// into the pod template's annotations.
fn cronjob(name: &str, extra: &str, pod_note: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: CronJob
metadata:
  name: {name}
  annotations: {{sim.piceli.dev/schedule-every: 1s}}
spec:
  schedule: '0 0 1 1 *'
{extra}
  jobTemplate:
    metadata: {{labels: {{run: {name}}}}}
    spec:
      template:
        metadata: {{annotations: {{{pod_note}}}}}
        spec:
          restartPolicy: Never
          containers: [{{name: task, image: busybox:1.36}}]
"
    )
}

fn names(jobs: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = jobs
        .iter()
        .filter_map(|j| j["metadata"]["name"].as_str().map(String::from))
        .collect();
    v.sort();
    v
}

#[test]
fn cronjob_runs_on_schedule_and_keeps_its_history() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file(
        "cj.yaml",
        &cronjob("tick", "  successfulJobsHistoryLimit: 2", ""),
    );
    k.ok(&["apply", "-f", &f]);
    let created = eventually("three runs", 20, || {
        let ev = k.ok(&[
            "get",
            "events",
            "--field-selector=reason=SuccessfulCreate,involvedObject.name=tick",
            "-o",
            "json",
        ]);
        let n = json_of(&ev)["items"].as_array().map_or(0, Vec::len);
        (n >= 3).then_some(n)
    });
    assert!(created >= 3);
    let cj = json_of(&k.ok(&["get", "cronjob/tick", "-o", "json"]));
    let st = &cj["status"];
    assert!(st["lastScheduleTime"].is_string(), "{st}");
    eventually("a successful run recorded", 10, || {
        let cj = json_of(&k.ok(&["get", "cronjob/tick", "-o", "json"]));
        cj["status"]["lastSuccessfulTime"].is_string().then_some(())
    });
    // History: at most 2 finished Jobs (plus at most one running) are kept.
    std::thread::sleep(Duration::from_millis(1500));
    let jobs = items(&k, "jobs");
    assert!(jobs.len() <= 3, "{:?}", names(&jobs));
    for job in &jobs {
        let name = job["metadata"]["name"].as_str().unwrap_or("");
        let t: i64 = name
            .trim_start_matches("tick-")
            .parse()
            .expect("tick-<secs>");
        assert_eq!(
            job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            json!(piceli_sim::time::format_rfc3339(t))
        );
        let owner = &job["metadata"]["ownerReferences"][0];
        assert_eq!(
            (owner["kind"].as_str(), owner["name"].as_str()),
            (Some("CronJob"), Some("tick"))
        );
        assert_eq!(owner["controller"], true);
        assert_eq!(job["metadata"]["labels"]["run"], "tick");
    }
    // kubectl shows the schedule and last run.
    let table = k.ok(&["get", "cronjobs"]);
    assert!(table.contains("tick"), "{table}");
    // Deleting the CronJob deletes its Jobs and their pods.
    k.ok(&["delete", "cronjob/tick"]);
    eventually("jobs gone", 10, || {
        items(&k, "jobs").is_empty().then_some(())
    });
}

#[test]
fn concurrency_policies_and_suspend() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    // Pods that never finish keep their Jobs active.
    let stuck = "sim.piceli.dev/behavior: never-ready";
    for (name, policy) in [
        ("allow", "Allow"),
        ("forbid", "Forbid"),
        ("replace", "Replace"),
    ] {
        let spec = format!("  concurrencyPolicy: {policy}");
        k.ok(&[
            "apply",
            "-f",
            &k.file(&format!("{name}.yaml"), &cronjob(name, &spec, stuck)),
        ]);
    }
    let off = cronjob("paused", "  suspend: true", "");
    k.ok(&["apply", "-f", &k.file("paused.yaml", &off)]);
    let of = |owner: &str| -> Vec<Value> {
        items(&k, "jobs")
            .into_iter()
            .filter(|j| j["metadata"]["ownerReferences"][0]["name"] == owner)
            .collect()
    };
    eventually("Allow runs side by side", 20, || {
        (of("allow").len() >= 3).then_some(())
    });
    let forbid = of("forbid");
    assert_eq!(
        forbid.len(),
        1,
        "Forbid waits for the active run: {:?}",
        names(&forbid)
    );
    // Replace deletes the active run and creates the next in two writes: observe a moment between them.
    let first = eventually("one Replace run", 10, || {
        let now = names(&of("replace"));
        (now.len() == 1).then_some(now)
    });
    let replaced = eventually("Replace starts a new run", 10, || {
        let now = names(&of("replace"));
        (now.len() == 1 && now != first).then_some(now)
    });
    assert_ne!(replaced, first);
    let cj = json_of(&k.ok(&["get", "cronjob/forbid", "-o", "json"]));
    assert_eq!(cj["status"]["active"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        cj["status"]["active"][0]["name"],
        forbid[0]["metadata"]["name"]
    );
    assert!(of("paused").is_empty(), "a suspended CronJob runs nothing");
    // Resuming it lets it run.
    k.ok(&[
        "patch",
        "cronjob/paused",
        "-p",
        r#"{"spec":{"suspend":false}}"#,
    ]);
    eventually("the resumed CronJob runs", 10, || {
        (!of("paused").is_empty()).then_some(())
    });
}

#[test]
fn kubectl_create_job_from_a_cronjob() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let yearly = cronjob("yearly", "", "")
        .replace("  annotations: {sim.piceli.dev/schedule-every: 1s}\n", "");
    k.ok(&["apply", "-f", &k.file("y.yaml", &yearly)]);
    k.ok(&["create", "job", "by-hand", "--from=cronjob/yearly"]);
    k.ok(&[
        "wait",
        "--for=condition=Complete",
        "job/by-hand",
        "--timeout=20s",
    ]);
    let job = json_of(&k.ok(&["get", "job/by-hand", "-o", "json"]));
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    assert_eq!(
        job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"],
        "manual"
    );
    // The yearly schedule itself does not run now.
    assert_eq!(names(&items(&k, "jobs")), vec!["by-hand".to_string()]);
}

#[test]
fn foreground_and_orphan_deletion_with_kubectl() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file("d.yaml", DEPLOYMENT);
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    // kubectl waits until the Deployment is gone: its ReplicaSet and pods went first.
    k.ok(&[
        "delete",
        "deploy/web",
        "--cascade=foreground",
        "--timeout=20s",
    ]);
    assert!(items(&k, "rs").is_empty());
    assert!(items(&k, "pods").is_empty());

    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/web", "--timeout=30s"]);
    k.ok(&["delete", "deploy/web", "--cascade=orphan"]);
    std::thread::sleep(Duration::from_millis(500));
    let rs = items(&k, "rs");
    assert_eq!(rs.len(), 1, "the ReplicaSet stays");
    assert!(
        rs[0]["metadata"]
            .get("ownerReferences")
            .is_none_or(|r| r.as_array().is_some_and(Vec::is_empty))
    );
    assert_eq!(items(&k, "pods").len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let sim = common::live_sim();
    let client = sim.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let owner = cms
        .create(&PostParams::default(), &common::cm("owner", json!({})))
        .await
        .expect("owner");
    let uid = owner.metadata.uid.clone().expect("uid");
    let dependent = |name: &str, block: bool, finalizer: bool| {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name,
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid,
                                 "blockOwnerDeletion": block}]}});
        if finalizer {
            v["metadata"]["finalizers"] = json!(["example.com/hold"]);
        }
        serde_json::from_value::<ConfigMap>(v).expect("configmap")
    };
    for (name, block, fin) in [("held", true, true), ("loose", false, false)] {
        cms.create(&PostParams::default(), &dependent(name, block, fin))
            .await
            .expect("dependent");
    }
    let marked = cms
        .delete("owner", &DeleteParams::foreground())
        .await
        .expect("delete")
        .left()
        .expect("the owner stays while dependents go");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(
        marked.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_string()])
    );
    // The held dependent is terminating, the loose one gone; the owner waits.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let loose = cms.get_opt("loose").await.expect("get");
        let held = cms.get("held").await.expect("held stays (finalizer)");
        if loose.is_none() && held.metadata.deletion_timestamp.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "dependents were not deleted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        cms.get_opt("owner").await.expect("get").is_some(),
        "blocked by `held`"
    );
    // Releasing the dependent lets the owner go.
    let release = json!({"metadata": {"finalizers": null}});
    cms.patch("held", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("release");
    let deadline = Instant::now() + Duration::from_secs(10);
    while cms.get_opt("owner").await.expect("get").is_some() {
        assert!(Instant::now() < deadline, "the owner was never deleted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A Deployment deleted in the foreground: marked first, gone with its pods afterwards.
    let deploys: Api<Deployment> = Api::default_namespaced(client);
    deploys
        .create(&PostParams::default(), &web_deployment())
        .await
        .expect("deployment");
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::default_namespaced(sim.client().expect("client"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while pods
        .list(&Default::default())
        .await
        .expect("pods")
        .items
        .len()
        < 2
    {
        assert!(
            Instant::now() < deadline,
            "the deployment never got its pods"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let gone = deploys
        .delete("web", &DeleteParams::foreground())
        .await
        .expect("delete");
    assert!(
        gone.left()
            .is_some_and(|d| d.metadata.deletion_timestamp.is_some())
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while deploys.get_opt("web").await.expect("get").is_some() {
        assert!(
            Instant::now() < deadline,
            "the deployment was never deleted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        pods.list(&Default::default())
            .await
            .expect("pods")
            .items
            .is_empty()
    );
}

/// A two-replica Deployment `web`.
fn web_deployment() -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}
    }))
    .expect("deployment")
}
