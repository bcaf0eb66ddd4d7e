//! A cargo project outside the workspace depends on `piceli` by path, builds its app binary, and renders
//! — exactly what a user does (`piceli = { path = "…" }`), in the release profile the tests' app builds
//! share (`piceli_test_support::apps`).

use piceli_test_support::apps;
use std::path::Path;
use std::process::Command;

const MAIN: &str = r#"
piceli::app! {
    app outside;
    target local = local(namespace: "outside");
    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
        ready: http_get("/", port: http),
    }
    service api -> api { port: 80 => http }
    config_map settings { "app.toml": file("app.toml") }
}

fn main() -> std::process::ExitCode {
    outside::main()
}
"#;

#[test]
fn a_project_outside_the_workspace_builds_and_renders() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("temp dir");
    let manifest = format!(
        "[package]\nname = \"outside\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\npiceli = {{ path = {:?} }}\n\n[workspace]\n",
        repo.display().to_string()
    );
    std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write Cargo.toml");
    std::fs::copy(repo.join("Cargo.lock"), dir.path().join("Cargo.lock")).expect("copy Cargo.lock");
    std::fs::copy(
        repo.join("rust-toolchain.toml"),
        dir.path().join("rust-toolchain.toml"),
    )
    .expect("toolchain");
    std::fs::create_dir(dir.path().join("src")).expect("mkdir src");
    std::fs::write(dir.path().join("src/main.rs"), MAIN).expect("write main.rs");
    std::fs::write(
        dir.path().join("app.toml"),
        "greeting = \"hello from outside\"\n",
    )
    .expect("write app.toml");

    // The app crates' shared target dir inside the one running this test (any CARGO_TARGET_DIR), kept
    // between runs: the first app build of a run (this one, import_crate's or self-built's) compiles the
    // dependencies, the others reuse them (piceli_test_support::apps says how and why `--release`).
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let status = apps::cargo_build(dir.path(), tmp, &["--quiet"])
        .status()
        .expect("run cargo");
    assert!(status.success(), "the outside project did not build");

    let out = Command::new(apps::binary(tmp, "outside"))
        .arg("render")
        .current_dir(dir.path())
        .env_remove("KUBECONFIG")
        .output()
        .expect("run the app binary");
    assert!(
        out.status.success(),
        "render failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).expect("utf-8");
    assert!(yaml.contains("kind: Deployment"), "{yaml}");
    assert!(yaml.contains("namespace: outside"), "{yaml}");
    assert!(
        yaml.contains("hello from outside"),
        "the file next to the outside crate's Cargo.toml is included: {yaml}"
    );
}
