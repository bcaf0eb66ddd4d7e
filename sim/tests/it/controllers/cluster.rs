//! What the controllers do around workloads: endpoints, volume binding, namespace deletion, and one acting controller per shared directory.

use super::*;

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
