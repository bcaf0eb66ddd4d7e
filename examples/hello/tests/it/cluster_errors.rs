//! How a cluster that cannot be used reads, through the built `hello` binary against the local cluster:
//! a kubeconfig with another cluster's CA is a TLS failure (PCL0154), a port nothing listens on is an
//! unreachable cluster (PCL0155), a wrong token is rejected credentials (PCL0156, the server's words) —
//! three different codes and messages, none a `Debug` dump of a struct.

use assert_cmd::Command;
use piceli_sim::{Sim, SimConfig};
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

/// The value of `key: VALUE` on the kubeconfig's line for `key`.
fn field<'a>(kubeconfig: &'a str, key: &str) -> &'a str {
    kubeconfig
        .lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {key} in {kubeconfig}"))
}

/// `plan` with this kubeconfig: exit 1, and the JSON error.
fn plan_error(dir: &Path, kubeconfig: &str) -> serde_json::Value {
    let path = dir.join(format!("kc-{}.yaml", blake(kubeconfig)));
    std::fs::write(&path, kubeconfig).expect("write kubeconfig");
    let out = hello(dir)
        .arg("plan")
        .arg("--kubeconfig")
        .arg(&path)
        .args(["--context", "piceli-sim", "-o", "json", "--state-dir"])
        .arg(dir.join("state"))
        .assert()
        .code(1);
    let v: serde_json::Value =
        serde_json::from_slice(&out.get_output().stdout).expect("JSON error");
    let error = v["error"].clone();
    eprintln!("{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(!message.contains(" { "), "a Debug dump: {message}");
    assert!(!message.contains("Status {"), "a Debug dump: {message}");
    error
}

fn blake(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[test]
fn a_wrong_ca_a_closed_port_and_a_wrong_token_read_differently() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let other = Sim::start(SimConfig::default()).expect("a second cluster, for its CA");
    let dir = tempfile::tempdir().expect("temp dir");
    let good = sim.kubeconfig_yaml().to_string();

    // The right server, another cluster's CA.
    let ca_key = "certificate-authority-data:";
    let wrong_ca = good.replace(field(&good, ca_key), field(other.kubeconfig_yaml(), ca_key));
    let error = plan_error(dir.path(), &wrong_ca);
    assert_eq!(error["code"], "PCL0154", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("TLS"), "{message}");
    assert!(message.contains("certificate"), "{message}");

    // A port nothing listens on (bound, then released).
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = free.local_addr().expect("addr").port();
    drop(free);
    let closed = good.replace(
        field(&good, "server:"),
        &format!("https://127.0.0.1:{port}"),
    );
    let error = plan_error(dir.path(), &closed);
    assert_eq!(error["code"], "PCL0155", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.to_lowercase().contains("refused"), "{message}");
    assert!(!message.contains("TLS"), "{message}");

    // The right server and CA, a token it never issued: the server's own words.
    let bad_token = good.replace(field(&good, "token:"), "not-the-token");
    let error = plan_error(dir.path(), &bad_token);
    assert_eq!(error["code"], "PCL0156", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("HTTP 401"), "{message}");
    assert!(message.contains("Unauthorized"), "{message}");
    assert!(
        error["help"]
            .as_str()
            .unwrap_or_default()
            .contains("credentials"),
        "{error}"
    );
}
