//! Field-manager conflicts, as a team meets them on its second day: someone runs `kubectl scale` and
//! `kubectl set image` (the real kubectl) on hello's Deployment. `plan` then lists every conflicting field
//! with its manager in one refusal (PCL0147, exit 2); `--take-ownership FIELD` takes one (the others still
//! refuse), `--take-ownership` takes them all, the plan says which fields it takes from whom, and the
//! approved plan applies with force: the app's values are back and a new plan is clean. A value set back to
//! the app's is no conflict.

use assert_cmd::Command;
use piceli_test_support::Cluster;
use std::path::Path;

fn hello(dir: &Path) -> Command {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
    std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hello"));
    cmd.current_dir(dir)
        .env("HOME", &home)
        .env("KUBECONFIG", home.join(".kube/config"))
        .timeout(std::time::Duration::from_secs(120));
    cmd
}

fn kubectl(dir: &Path, kubeconfig: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("kubectl")
        .args(["--kubeconfig", kubeconfig, "-n", "hello"])
        .args(args)
        .env("KUBECACHEDIR", dir.join("kubecache"))
        .env_remove("KUBECONFIG")
        .env("HOME", dir.join("home"))
        .output()
        .expect("kubectl is required by this test (it is what users run)");
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn last_json(out: &assert_cmd::assert::Assert) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    serde_json::from_str(text.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn conflicts_are_listed_and_taken_over_on_request() {
    let sim = Cluster::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let kc = sim.kubeconfig_path().display().to_string();
    let flags = [
        "--kubeconfig",
        &kc,
        "--context",
        sim.context(),
        "--timeout",
        "0",
        "-o",
        "json",
    ];

    let out = hello(dir.path()).arg("plan").args(flags).assert().code(3);
    let hash = last_json(&out)["hash"].as_str().expect("hash").to_string();
    hello(dir.path())
        .args(["apply", "--approve", &hash])
        .args(flags)
        .assert()
        .success();

    kubectl(
        dir.path(),
        &kc,
        &["scale", "deployment/web", "--replicas=5"],
    );
    let other = format!("docker.io/library/nginx:1.28@sha256:{}", "cd".repeat(32));
    kubectl(
        dir.path(),
        &kc,
        &["set", "image", "deployment/web", &format!("web={other}")],
    );

    // Every conflicting field, with its manager, in one refusal; nothing stored to approve.
    let out = hello(dir.path()).arg("plan").args(flags).assert().code(2);
    let error = &last_json(&out)["error"];
    assert_eq!(error["code"], "PCL0147", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains(".spec.replicas"), "{message}");
    assert!(message.contains(".image"), "{message}");
    assert!(message.contains("kubectl"), "{message}");
    assert!(
        error["help"]
            .as_str()
            .unwrap_or_default()
            .contains("--take-ownership")
    );

    // One field named: the other still refuses.
    let out = hello(dir.path())
        .args(["plan", "--take-ownership", ".spec.replicas"])
        .args(flags)
        .assert()
        .code(2);
    let message = last_json(&out)["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        !message.contains(".spec.replicas") && message.contains(".image"),
        "{message}"
    );

    // All of them: the plan says what it takes from whom.
    let out = hello(dir.path())
        .args(["plan", "--take-ownership"])
        .args(flags)
        .assert()
        .code(3);
    let plan = last_json(&out);
    let deployment = plan["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["kind"] == "Deployment")
        .expect("deployment")
        .clone();
    let taken: Vec<String> = deployment["take"]
        .as_array()
        .expect("take")
        .iter()
        .map(|t| {
            format!(
                "{} from {}",
                t["field"].as_str().unwrap_or(""),
                t["from"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(taken.len(), 2, "{taken:?}");
    assert!(taken.iter().all(|t| t.contains("kubectl")), "{taken:?}");
    let hash = plan["hash"].as_str().expect("hash").to_string();
    hello(dir.path())
        .args(["apply", "--approve", &hash])
        .args(flags)
        .assert()
        .success();

    let replicas = kubectl(
        dir.path(),
        &kc,
        &["get", "deployment/web", "-o", "jsonpath={.spec.replicas}"],
    );
    assert_eq!(replicas, "2");
    let image = kubectl(
        dir.path(),
        &kc,
        &[
            "get",
            "deployment/web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ],
    );
    assert!(image.contains("nginx:1.27@"), "{image}");
    hello(dir.path()).arg("plan").args(flags).assert().success();

    // Scaled and set back to the app's value: not stuck, nothing to take or change.
    kubectl(
        dir.path(),
        &kc,
        &["scale", "deployment/web", "--replicas=3"],
    );
    kubectl(
        dir.path(),
        &kc,
        &["scale", "deployment/web", "--replicas=2"],
    );
    hello(dir.path()).arg("plan").args(flags).assert().success();
}
