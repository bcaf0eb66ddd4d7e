//! `lamps serve` as it runs in the operator's pod: no `--kubeconfig`, only what a kubelet gives a pod —
//! `KUBERNETES_SERVICE_HOST`/`_PORT`, the ServiceAccount's token, CA and namespace under
//! `/var/run/secrets/kubernetes.io/serviceaccount/`, and `POD_NAME`/`POD_NAMESPACE` from the downward API
//! as the rendered Deployment sets them. The files are mounted in a private mount namespace of the
//! process (`unshare --mount`, a tmpfs over /run), so nothing on the machine changes; the test's cluster
//! (the local one with RBAC on, or the real control plane of `PICELI_REAL_KUBECONFIG`) is the API server
//! the in-cluster config reaches.

use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use assert_cmd::cargo::cargo_bin;
use piceli_test_support::Cluster;
use support::{deploy, free_port, http_get, json, kubectl, lamp, metric, stop, wait_for};

/// What a pod's container starts with: the ServiceAccount's files mounted where kube's in-cluster
/// config reads them, then `lamps serve` in place of the shell (same PID, so SIGTERM reaches it).
const POD: &str = r#"set -eu
run=$(readlink -f /var/run)
mount -t tmpfs tmpfs "$run"
dir=/var/run/secrets/kubernetes.io/serviceaccount
mkdir -p "$dir"
printf %s "$SA_TOKEN" > "$dir/token"
printf %s "$SA_CA" | base64 -d > "$dir/ca.crt"
printf %s "$POD_NAMESPACE" > "$dir/namespace"
unset SA_TOKEN SA_CA
exec "$LAMPS" serve --listen "$LISTEN"
"#;

/// `users[0].user.token` and `clusters[0].cluster.certificate-authority-data` of the operator's kubeconfig
/// (JSON, certificates inline: see `support::token_kubeconfig`).
fn token_and_ca(kubeconfig: &std::path::Path) -> (String, String) {
    let text = std::fs::read_to_string(kubeconfig).expect("the operator's kubeconfig");
    let config: serde_json::Value = serde_json::from_str(&text).expect("kubeconfig JSON");
    let field = |v: &serde_json::Value| v.as_str().expect("a string").to_string();
    (
        field(&config["users"][0]["user"]["token"]),
        field(&config["clusters"][0]["cluster"]["certificate-authority-data"]),
    )
}

fn pod(
    cluster: &Cluster,
    token: &str,
    ca: &str,
    listen: std::net::SocketAddr,
    log: &std::path::Path,
) -> Child {
    let home = log.parent().expect("a directory");
    Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", POD])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LAMPS", cargo_bin("lamps"))
        .env("LISTEN", listen.to_string())
        .env("KUBERNETES_SERVICE_HOST", cluster.addr().ip().to_string())
        .env("KUBERNETES_SERVICE_PORT", cluster.addr().port().to_string())
        .env("POD_NAME", "lamps-7d9f-x2k4q")
        .env("POD_NAMESPACE", "lamps-system")
        .env("SA_TOKEN", token)
        .env("SA_CA", ca)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).expect("log file"))
        .spawn()
        .unwrap_or_else(|e| panic!("unshare (util-linux) is required for this test: {e}"))
}

#[test]
fn serve_in_a_pod_uses_the_in_cluster_config_and_the_service_account_token() {
    let sim = Cluster::start();
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let admin = sim.kubeconfig_path().to_path_buf();
    let operator = deploy(&sim, dir);
    let (token, ca) = token_and_ca(&operator);
    let listen = free_port();
    let log = dir.join("pod.log");
    let serve = pod(&sim, &token, &ca, listen, &log);
    let text = || std::fs::read_to_string(&log).unwrap_or_default();

    wait_for("serve ready in the pod", Duration::from_secs(30), || {
        http_get(listen, "/readyz").is_some_and(|(s, _)| s == 200)
    });
    // Ready is not leading (a standby is ready too): the one replica takes the Lease a moment later.
    let leading = || {
        http_get(listen, "/metrics")
            .is_some_and(|(_, m)| metric(&m, "piceli_controller_leader ") == 1.0)
    };
    let started = std::time::Instant::now();
    while !leading() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the replica in the pod did not lead within 30 s:\n{}",
            text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        text().contains("namespace=lamps-system identity=lamps-7d9f-x2k4q"),
        "the operator's namespace and identity come from the downward API:\n{}",
        text()
    );
    let lease = json(
        &admin,
        &["-n", "lamps-system", "get", "lease", "lamps-controllers"],
    )
    .expect("the Lease");
    assert_eq!(lease["spec"]["holderIdentity"], "lamps-7d9f-x2k4q");

    wait_for("the shipped lamp's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "hall"])
            .is_some_and(|l| l["status"]["shining"] == "white")
    });
    let (code, out, err) = kubectl(&admin, &["apply", "-f", "-"], Some(&lamp("desk", "amber")));
    assert_eq!(code, 0, "{out}{err}");
    wait_for("the new lamp's status", Duration::from_secs(30), || {
        json(&admin, &["-n", "lamps-system", "get", "lamp", "desk"])
            .is_some_and(|l| l["status"]["shining"] == "amber")
    });
    assert!(
        json(
            &admin,
            &["-n", "lamps-system", "get", "configmap", "lamp-desk"]
        )
        .is_some(),
        "the owned child, written with the ServiceAccount's token"
    );

    assert!(
        stop(serve).success(),
        "SIGTERM stops serve in the pod:\n{}",
        text()
    );
    let text = text();
    assert!(
        !text.to_lowercase().contains("forbidden") && !text.contains("HTTP 403"),
        "a request the ServiceAccount may not make:\n{text}"
    );
}
