//! `piceli new --operator` as a user runs it: the skeleton (a `Greeting` custom resource, its controller and
//! a validating webhook with `tls: self_managed`) builds in the tests' shared app directory
//! (`piceli_test_support::apps`), `render` prints the CRD, the operator and its webhook configuration,
//! `deploy` puts them on the local cluster, and the app's own `serve` (on this machine, its Service routed
//! to it by the local cluster) makes its certificate and CA, answers the API server's admission calls — an
//! empty message is refused with the handler's words — and reconciles a Greeting into its status.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use piceli_test_support::{Cluster, apps, kubectl, process};
use serde_json::Value;

const NAME: &str = "greeter";
const NS: &str = "greeter-system";

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Generates and builds the skeleton; the binary's path.
fn build(tmp: &Path) -> std::path::PathBuf {
    let app = tmp.join("new-operator").join(NAME);
    if app.exists() {
        std::fs::remove_dir_all(&app).expect("remove the last run's crate");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_piceli"))
        .args(["new", "--operator"])
        .arg(&app)
        .arg("--piceli-path")
        .arg(&root)
        .output()
        .expect("piceli new runs");
    assert!(
        out.status.success(),
        "piceli new --operator: {}",
        text(&out)
    );
    assert!(app.join("src/greeting.rs").is_file());
    // The workspace's lock file, so the build resolves offline to the versions already downloaded.
    std::fs::copy(root.join("Cargo.lock"), app.join("Cargo.lock")).expect("copy Cargo.lock");
    let built = apps::cargo_build(&app, tmp, &["--offline", "--quiet"])
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "the operator skeleton does not build:\n{}",
        text(&built)
    );
    assert!(
        !String::from_utf8_lossy(&built.stderr).contains("warning"),
        "the skeleton's build warns:\n{}",
        text(&built)
    );
    apps::binary(tmp, NAME)
}

/// The app's command with the cluster's kubeconfig and context, in `work`.
fn app_cmd(bin: &Path, cluster: &Cluster, work: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(work)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("HOME", work)
        .args(args)
        .arg("--kubeconfig")
        .arg(cluster.kubeconfig_path())
        .args(["--context", cluster.context()]);
    cmd
}

fn greeting(name: &str, message: &str) -> String {
    format!(
        "apiVersion: {NAME}.example.com/v1\nkind: Greeting\nmetadata: {{name: {name}, namespace: demo}}\n\
         spec: {{message: {message:?}}}\n"
    )
}

#[test]
fn new_operator_builds_renders_deploys_serves_and_reconciles_sim_only() {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let bin = build(tmp);

    let rendered = Command::new(&bin)
        .args(["render", "-o", "json"])
        .output()
        .expect("render runs");
    assert!(rendered.status.success(), "render: {}", text(&rendered));
    let objects: Value = serde_json::from_slice(&rendered.stdout).expect("render prints JSON");
    let kinds: Vec<&str> = objects["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    for kind in [
        "CustomResourceDefinition",
        "Deployment",
        "Service",
        "ValidatingWebhookConfiguration",
        "ClusterRole",
    ] {
        assert!(kinds.contains(&kind), "render has no {kind}: {kinds:?}");
    }

    // The local cluster: the Service is routed to `serve` on this machine.
    let cluster = Cluster::start();
    let sim = cluster.sim().expect("the local cluster routes Services");
    let work = tempfile::tempdir().expect("work dir");
    let admin = cluster.kubeconfig_path();
    let planned = app_cmd(&bin, &cluster, work.path(), &["deploy", "-o", "json"])
        .output()
        .expect("deploy runs");
    assert_eq!(planned.status.code(), Some(3), "deploy: {}", text(&planned));
    // JSON lines: the `plan` event (with the hash to approve), then the result.
    let plan: Value = String::from_utf8_lossy(&planned.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["event"] == "plan")
        .unwrap_or_else(|| panic!("deploy prints its plan: {}", text(&planned)));
    let hash = plan["hash"].as_str().expect("hash").to_string();
    let applied = app_cmd(
        &bin,
        &cluster,
        work.path(),
        &["deploy", "--approve", &hash, "--timeout", "0", "-o", "json"],
    )
    .output()
    .expect("deploy --approve runs");
    assert!(
        applied.status.success(),
        "deploy --approve: {}",
        text(&applied)
    );
    kubectl::ok(
        admin,
        &["get", &format!("crd/greetings.{NAME}.example.com")],
    );
    kubectl::ok(admin, &["create", "namespace", "demo"]);

    let addr = process::free_port();
    let log_path = work.path().join("serve.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let serve = app_cmd(
        &bin,
        &cluster,
        work.path(),
        &["serve", "--listen", &addr.to_string()],
    )
    .env("POD_NAME", "greeter-0")
    .stdout(Stdio::null())
    .stderr(log)
    .spawn()
    .expect("serve starts");
    sim.route(NS, NAME, 443, addr)
        .expect("route the operator's Service to serve");
    let serve_log = || std::fs::read_to_string(&log_path).unwrap_or_default();

    // Admitted through the webhook (once `serve` has made its CA and injected it), then answered.
    let apply =
        |yaml: &str| kubectl::run(admin, Some(work.path()), &["apply", "-f", "-"], Some(yaml));
    let began = std::time::Instant::now();
    loop {
        let (code, _, err) = apply(&greeting("world", "hi")).parts();
        if code == 0 {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(60),
            "the webhook did not admit a greeting within 60 s: {err}\n--- serve ---\n{}",
            serve_log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    process::wait_until("the greeting's reply", Duration::from_secs(30), || {
        kubectl::json(admin, &["-n", "demo", "get", "greeting", "world"])
            .is_some_and(|g| g["status"]["reply"] == "hello, world: hi")
    });
    let (code, out, err) = apply(&greeting("empty", "")).parts();
    assert_ne!(code, 0, "an empty message is refused: {out}");
    assert!(
        err.contains("a Greeting needs a message"),
        "refused with the handler's words: {err}\n--- serve ---\n{}",
        serve_log()
    );
    assert!(
        process::stop(serve, "greeter serve").success(),
        "serve stops cleanly: {}",
        serve_log()
    );
}
