//! The guard end to end on the local cluster, through the real kubectl: `guard deploy` applies the
//! operator's objects, this test plays cert-manager (issues the Secret, injects the CA bundle), the
//! operator's Service is routed to `guard serve` running on this machine, and then a `:latest`
//! Deployment is refused with the handler's message, a Pod gains the labels of a mutator and of a
//! composite (one call), a ConfigMap with a password is refused only in the namespaces the webhook
//! selects, and `serve` stops cleanly on SIGTERM.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use base64::Engine;
use piceli_sim::{Sim, SimConfig};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::Value;

mod support;
use support::{LATEST, free_port, kubectl, stop};

/// What cert-manager would issue for the guard's `Certificate guard-tls`: a CA and a serving certificate
/// for `guard.guard-system.svc`, as PEM.
struct Issued {
    ca: String,
    cert: String,
    key: String,
}

fn issue() -> Issued {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "guard-ca");
    let ca_key = KeyPair::generate().expect("ca key");
    let ca = ca_params.self_signed(&ca_key).expect("ca");
    let issuer = Issuer::new(ca_params, ca_key);
    let params = CertificateParams::new(vec![
        "guard.guard-system.svc".to_string(),
        "guard.guard-system.svc.cluster.local".to_string(),
    ])
    .expect("params");
    let mut params = params;
    params
        .distinguished_name
        .push(DnType::CommonName, "guard.guard-system.svc");
    let key = KeyPair::generate().expect("key");
    let leaf = params.signed_by(&key, &issuer).expect("leaf");
    Issued {
        ca: ca.pem(),
        cert: leaf.pem(),
        key: key.serialize_pem(),
    }
}

/// `guard serve` on this machine; stopped with SIGTERM by [`stop`].
fn serve(addr: SocketAddr, dir: &Path) -> Child {
    let mut child = Command::cargo_bin("guard")
        .expect("guard binary")
        .args(["serve", "--listen", &addr.to_string()])
        .arg("--tls-cert")
        .arg(dir.join("tls.crt"))
        .arg("--tls-key")
        .arg(dir.join("tls.key"))
        .env_remove("KUBECONFIG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("guard serve starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("guard serve exited early: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "guard serve never listened on {addr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// `/metrics` of the running `serve`, read with curl against the issued CA.
fn metrics(addr: SocketAddr, ca: &Path) -> String {
    let out = Command::new("curl")
        .args(["--silent", "--show-error", "--fail", "--cacert"])
        .arg(ca)
        .args([
            "--resolve",
            &format!("guard.guard-system.svc:{}:{}", addr.port(), addr.ip()),
        ])
        .arg(format!(
            "https://guard.guard-system.svc:{}/metrics",
            addr.port()
        ))
        .output()
        .unwrap_or_else(|e| panic!("curl is required for this test and could not be run: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  containers: [{name: web, image: 'nginx:1.27'}]
";

fn config_map(namespace: &str) -> String {
    format!(
        "apiVersion: v1
kind: ConfigMap
metadata: {{name: settings, namespace: {namespace}}}
data: {{db_password: hunter2}}
"
    )
}

#[test]
fn deployed_guard_refuses_and_mutates_through_kubectl() {
    let sim = Sim::start(SimConfig::default()).expect("local cluster starts");
    let work = tempfile::tempdir().expect("work dir");
    let dir = work.path();
    let kc = sim.kubeconfig_path().to_path_buf();
    let run = |args: &[&str]| kubectl(&kc, dir, args);
    let ok = |args: &[&str]| {
        let (code, stdout, stderr) = run(args);
        assert_eq!(code, 0, "kubectl {args:?}: {stdout}{stderr}");
        stdout
    };
    let file = |name: &str, body: &str| {
        std::fs::write(dir.join(name), body).expect("write manifest");
        name.to_string()
    };

    // cert-manager is installed: its kinds exist.
    let crds = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/cert-manager-crds.yaml"
    );
    ok(&["apply", "-f", crds]);

    // What cert-manager will issue; `guard serve` runs on this machine with it, and the operator's pods
    // (by their labels) reach it.
    let issued = issue();
    for (name, body) in [
        ("tls.crt", &issued.cert),
        ("tls.key", &issued.key),
        ("ca.crt", &issued.ca),
    ] {
        std::fs::write(dir.join(name), body).expect("write pem");
    }
    // The operator's Service reaches `guard serve` on this machine.
    let addr = free_port();
    let server = serve(addr, dir);
    sim.map_port(
        "guard-system",
        "app.kubernetes.io/name=guard,app.kubernetes.io/component=guard",
        8443,
        addr,
    )
    .expect("route the operator's pods to serve");

    // `guard deploy`: plan, approve the hash, apply.
    let kcs = kc.display().to_string();
    let flags = [
        "--kubeconfig",
        &kcs,
        "--context",
        "piceli-sim",
        "-o",
        "json",
    ];
    let guard = || {
        let mut cmd = Command::cargo_bin("guard").expect("guard binary");
        cmd.current_dir(dir)
            .env_remove("KUBECONFIG")
            .env("HOME", dir);
        cmd
    };
    let planned = guard()
        .args(["plan"])
        .args(flags)
        .output()
        .expect("guard plan");
    assert_eq!(
        planned.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&planned.stderr)
    );
    let plan: Value = serde_json::from_slice(&planned.stdout).expect("plan JSON");
    let hash = plan["hash"].as_str().expect("hash").to_string();
    let applied = guard()
        .args(["apply", "--approve", &hash])
        .args(flags)
        .output()
        .expect("guard apply");
    assert!(
        applied.status.success(),
        "{}{}",
        String::from_utf8_lossy(&applied.stdout),
        String::from_utf8_lossy(&applied.stderr)
    );
    for object in [
        "serviceaccount/guard",
        "deployment/guard",
        "service/guard",
        "poddisruptionbudget/guard",
        "certificates.cert-manager.io/guard-tls",
        "issuers.cert-manager.io/guard-ca",
    ] {
        ok(&["-n", "guard-system", "get", object]);
    }

    // cert-manager's part: the Secret the Certificate names, and the CA injected into the webhook
    // configurations annotated `cert-manager.io/inject-ca-from: guard-system/guard-tls`.
    ok(&[
        "-n",
        "guard-system",
        "create",
        "secret",
        "generic",
        "guard-tls",
        "--from-file=tls.crt",
        "--from-file=tls.key",
        "--from-file=ca.crt",
    ]);
    let bundle = base64::engine::general_purpose::STANDARD.encode(&issued.ca);
    for kind in [
        "validatingwebhookconfiguration",
        "mutatingwebhookconfiguration",
    ] {
        let config: Value =
            serde_json::from_str(&ok(&["get", kind, "guard.guard-system", "-o", "json"]))
                .expect("config JSON");
        assert_eq!(
            config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            "guard-system/guard-tls"
        );
        let count = config["webhooks"].as_array().expect("webhooks").len();
        let patch: Vec<Value> = (0..count)
            .map(|i| {
                serde_json::json!({
                    "op": "add",
                    "path": format!("/webhooks/{i}/clientConfig/caBundle"),
                    "value": bundle,
                })
            })
            .collect();
        ok(&[
            "patch",
            kind,
            "guard.guard-system",
            "--type=json",
            "-p",
            &Value::Array(patch).to_string(),
        ]);
    }

    let deadline = Instant::now() + Duration::from_secs(30);
    while run(&[
        "-n",
        "guard-system",
        "get",
        "pods",
        "-l",
        "app.kubernetes.io/name=guard",
        "-o",
        "name",
    ])
    .1
    .trim()
    .is_empty()
    {
        assert!(
            Instant::now() < deadline,
            "the operator's pods never appeared"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    ok(&["create", "namespace", "shop"]);
    let (code, _, stderr) = run(&["apply", "-f", &file("latest.yaml", LATEST)]);
    assert_ne!(code, 0, "a :latest Deployment must be refused");
    assert!(
        stderr.contains(
            "admission webhook \"no-latest-tag.guard.piceli.dev\" denied the request: image nginx:latest uses :latest"
        ),
        "{stderr}"
    );
    assert_ne!(
        run(&["-n", "shop", "get", "deployment", "web"]).0,
        0,
        "nothing was stored"
    );

    ok(&["apply", "-f", &file("pod.yaml", POD)]);
    let pod: Value = serde_json::from_str(&ok(&["-n", "shop", "get", "pod", "web", "-o", "json"]))
        .expect("json");
    let labels = &pod["metadata"]["labels"];
    assert_eq!(labels["app"], "web");
    assert_eq!(labels["injected"], "true", "inject-label ran");
    assert_eq!(labels["team"], "shop", "the composite's first mutator ran");
    assert_eq!(
        labels["tier"], "shop-web",
        "its second saw the first's label"
    );

    // no-secrets selects namespaces labelled team=a only, and ignores its own failures.
    ok(&["apply", "-f", &file("cm-shop.yaml", &config_map("shop"))]);
    ok(&["create", "namespace", "team-a"]);
    ok(&["label", "namespace", "team-a", "team=a"]);
    let (code, _, stderr) = run(&["apply", "-f", &file("cm-a.yaml", &config_map("team-a"))]);
    assert_ne!(code, 0, "a password in a team-a ConfigMap must be refused");
    assert!(
        stderr.contains("key db_password looks like a password: put it in a Secret"),
        "{stderr}"
    );

    let text = metrics(addr, &dir.join("ca.crt"));
    let requests = |hook: &str, kind: &str| {
        metric(
            &text,
            &format!(
                "piceli_webhook_requests_total{{webhook=\"{hook}\",type=\"{kind}\",dry_run=\"false\"}}"
            ),
        )
    };
    assert_eq!(
        requests("pod-defaults", "mutate"),
        1.0,
        "both labels in one call"
    );
    assert_eq!(requests("inject-label", "mutate"), 1.0);
    assert!(requests("no-latest-tag", "validate") >= 1.0);
    assert_eq!(
        requests("no-secrets", "validate"),
        1.0,
        "only the team-a namespace"
    );

    let status = stop(server);
    assert!(status.success(), "serve exits 0 on SIGTERM: {status}");
    sim.stop();
}
