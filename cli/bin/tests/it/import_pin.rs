//! `piceli import yaml --pin` against a real registry (Debian's `docker-registry` on 127.0.0.1): a tag the
//! registry has is pinned with the digest it names (its `Docker-Content-Digest`); an unknown tag and an
//! unreachable registry stay `unpinned("…")` with a PCL0189 warning and the reason in the comment.

#[path = "../../../../image/tests/support/mod.rs"]
mod support;

use assert_cmd::Command;
use piceli_image::{ImageSpec, RegistryClient, assemble};
use support::LocalRegistry;

fn deployment(name: &str, image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - name: {name}\n        image: {image}\n"
    )
}

/// A closed port on loopback: nothing answers there.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

#[test]
fn pin_resolves_tags_the_registry_has_and_falls_back_otherwise() {
    let registry = LocalRegistry::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let binary = dir.path().join("web");
    std::fs::write(&binary, b"not really a program").expect("write");
    let image = assemble(&ImageSpec::new(&binary, "web"), None).expect("assemble");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = RegistryClient::new(registry.repo("shop/web"), None).expect("client");
        client.push(&image, Some("1.0")).await.expect("push");
    });
    let tagged = format!("{}/shop/web:1.0", registry.addr);
    let missing = format!("{}/shop/web:2.0", registry.addr);
    let unreachable = format!("127.0.0.1:{}/shop/api:1.0", closed_port());
    let input = [
        deployment("web", &tagged),
        deployment("next", &missing),
        deployment("api", &unreachable),
    ]
    .join("---\n");
    let out = Command::new(env!("CARGO_BIN_EXE_piceli"))
        .args(["import", "yaml", "-", "--app", "shop", "--pin"])
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    let source = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        source.contains(&format!("image: \"{tagged}@{}\"", image.digest)),
        "{source}"
    );
    assert!(
        source.contains(&format!("image: unpinned(\"{missing}\")")),
        "{source}"
    );
    assert!(
        source.contains(&format!(
            "// piceli: PCL0189 `--pin` could not resolve `{missing}` ({}/shop/web has no tag `2.0`)",
            registry.addr
        )),
        "{source}"
    );
    assert!(
        source.contains(&format!("image: unpinned(\"{unreachable}\")")),
        "{source}"
    );
    assert!(
        source.contains(&format!(
            "// piceli: PCL0189 `--pin` could not resolve `{unreachable}` ("
        )),
        "{source}"
    );
    assert_eq!(stderr.matches("warning[PCL0189]").count(), 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "warning[PCL0189]: image {unreachable}: `--pin` could not resolve it"
        )),
        "{stderr}"
    );
}

#[test]
fn an_unreadable_credentials_file_is_a_coded_refusal() {
    let out = Command::new(env!("CARGO_BIN_EXE_piceli"))
        .args([
            "import",
            "yaml",
            "-",
            "--pin",
            "--registry-auth",
            "/nonexistent/config.json",
        ])
        .write_stdin(deployment("web", "nginx:1.27"))
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("PCL0188"), "{stderr}");
}
