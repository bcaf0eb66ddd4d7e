//! The guard end to end on the local cluster, through the real kubectl: `guard plan` + `apply` deploy
//! the operator's objects, the cluster's cert-manager issues the serving certificate and injects its CA
//! into the webhook configurations, the operator's Service is routed to `guard serve --tls-from-secret`
//! running on this machine, and then a `:latest` Deployment is refused with the handler's message, a
//! Pod gains the labels of a mutator and of a composite (one call), a ConfigMap with a password is
//! refused only in the namespaces the webhook selects, the app's own Tenant custom resource is refused
//! without an owner and defaulted otherwise, and `serve` stops cleanly on SIGTERM — within a second and a
//! half (measured and printed), while the cluster holds its pooled HTTP/2 connections to the webhooks.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use piceli_sim::{Sim, SimConfig};
use serde_json::Value;

use crate::support;
use support::{
    LATEST, deploy, free_port, issued, kubectl, serve_from_secret, stop, wait_for,
    wait_for_ca_bundles,
};

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

/// A Tenant of the guard's own custom resource.
fn tenant(name: &str, owner: &str) -> String {
    format!(
        "apiVersion: guard.example.com/v1
kind: Tenant
metadata: {{name: {name}, namespace: shop}}
spec: {{owner: {owner:?}}}
"
    )
}

#[test]
fn deployed_guard_refuses_and_mutates_through_kubectl() {
    let sim = Sim::start(SimConfig {
        cert_manager: true,
        ..SimConfig::default()
    })
    .expect("local cluster starts");
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

    // `guard plan` + `apply`: the operator's objects, the Tenant CRD among them.
    deploy(&kc, dir);
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
    ok(&["get", "crd", "tenants.guard.example.com"]);

    // cert-manager's part, done by the cluster: the Secret the Certificate names, and its CA injected
    // into the configurations annotated `cert-manager.io/inject-ca-from: guard-system/guard-tls`.
    let ca = wait_for("the issued Secret", 30, || issued(&kc, dir, "ca.crt"));
    std::fs::write(dir.join("ca.crt"), &ca).expect("write the CA");
    wait_for_ca_bundles(&kc, dir);
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
    }

    // `guard serve` on this machine with the issued pair, reached as the operator's Service.
    let addr = free_port();
    let server = serve_from_secret(addr, &kc, &dir.join("serve.log"));
    sim.route("guard-system", "guard", 443, addr)
        .expect("route the operator's Service to serve");

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

    // The app's own custom resource: refused without an owner's email, defaulted otherwise.
    let (code, _, stderr) = run(&[
        "apply",
        "-f",
        &file("nobody.yaml", &tenant("nobody", "ana")),
    ]);
    assert_ne!(code, 0, "a Tenant without an owner email must be refused");
    assert!(
        stderr.contains(
            "admission webhook \"tenant-owner.guard.piceli.dev\" denied the request: tenant nobody has no owner email (owner: \"ana\")"
        ),
        "{stderr}"
    );
    ok(&[
        "apply",
        "-f",
        &file("web.yaml", &tenant("web", "ana@example.com")),
    ]);
    let web: Value = serde_json::from_str(&ok(&[
        "-n",
        "shop",
        "get",
        "tenants.guard.example.com",
        "web",
        "-o",
        "json",
    ]))
    .expect("json");
    assert_eq!(web["spec"]["owner"], "ana@example.com");
    assert_eq!(web["spec"]["pods"], 10, "tenant-defaults set the quota");

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
    assert_eq!(requests("tenant-owner", "validate"), 2.0);
    assert_eq!(requests("tenant-defaults", "mutate"), 2.0);

    // The cluster's connections to `serve` stay in its pool, idle (it makes no call now, so nothing on its
    // side answers a GOAWAY): SIGTERM still stops `serve` within the second asked for, with room for a
    // loaded machine.
    std::thread::sleep(Duration::from_millis(500));
    let signalled = Instant::now();
    let status = stop(server);
    let took = signalled.elapsed();
    println!("guard serve stopped {took:?} after SIGTERM");
    let log = std::fs::read_to_string(dir.join("serve.log")).unwrap_or_default();
    assert!(
        status.success(),
        "serve exits 0 on SIGTERM: {status}\n{log}"
    );
    assert!(
        took < Duration::from_millis(1500),
        "serve took {took:?} to stop after SIGTERM; its log:\n{log}"
    );
    sim.stop();
}
