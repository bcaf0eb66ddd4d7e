//! `piceli import yaml` and `piceli new` as a user runs them: stdin `-`, files and directories, a crate
//! written with `--crate`, coded errors (never a panic) for bad input and for paths that cannot be written.

use assert_cmd::Command;

fn piceli() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_piceli"));
    cmd.timeout(std::time::Duration::from_secs(30));
    cmd
}

const CONFIG_MAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  MODE: prod\n";

#[test]
fn stdin_becomes_an_app_module_on_stdout() {
    let out = piceli()
        .args(["import", "yaml", "-", "--app", "shop"])
        .write_stdin(CONFIG_MAP)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains(
            "piceli::app! {\n    app shop;\n    target local = local(namespace: \"shop\");"
        ),
        "{text}"
    );
    assert!(
        text.contains("config_map settings {\n        data: { MODE: \"prod\" },\n    }"),
        "{text}"
    );
    assert!(text.contains("fn main() -> std::process::ExitCode {\n    shop::main()\n}"));
}

#[test]
fn json_lists_and_directories_are_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let nested = dir.path().join("a/b");
    std::fs::create_dir_all(&nested).expect("dirs");
    std::fs::write(
        nested.join("list.json"),
        r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"api"}}]}"#,
    )
    .expect("write");
    std::fs::write(dir.path().join("cm.yaml"), CONFIG_MAP).expect("write");
    std::fs::write(dir.path().join("notes.txt"), "not a manifest").expect("write");
    let out = piceli()
        .args(["import", "yaml"])
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("service_account api;") && text.contains("config_map settings"),
        "{text}"
    );
}

#[test]
fn bad_input_is_a_coded_error_not_a_panic() {
    let out = piceli()
        .args(["import", "yaml", "-"])
        .write_stdin("apiVersion: v1\nkind: [unclosed\n")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.starts_with("error[PCL0181]: <stdin>:"), "{err}");
    assert!(!err.contains("panicked"));

    let out = piceli()
        .args(["import", "yaml", "/nonexistent/manifests", "-o", "json"])
        .assert()
        .code(2);
    let body: serde_json::Value =
        serde_json::from_slice(&out.get_output().stdout).expect("JSON error");
    assert_eq!(body["error"]["code"], "PCL0180");
}

#[test]
fn warnings_are_coded_and_a_crate_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = dir.path().join("my-app");
    let input = format!(
        "{CONFIG_MAP}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: other, namespace: elsewhere}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: db}}\ndata: {{password: c2VjcmV0}}\n"
    );
    let out = piceli()
        .args(["import", "yaml", "-", "--crate"])
        .arg(&app)
        .write_stdin(input)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("warning[PCL0183]: ConfigMap other"), "{err}");
    let main = std::fs::read_to_string(app.join("src/main.rs")).expect("main.rs");
    assert!(
        main.contains("app my-app;") && main.contains("password: from_env(\"DB_PASSWORD\")"),
        "{main}"
    );
    assert!(!main.contains("c2VjcmV0"));
    let env = std::fs::read_to_string(app.join(".env.example")).expect(".env.example");
    assert!(env.contains("DB_PASSWORD="));
    let toml = std::fs::read_to_string(app.join("Cargo.toml")).expect("Cargo.toml");
    // By version (this build's release line) unless `--piceli-path` names a checkout.
    let line = env!("CARGO_PKG_VERSION")
        .rsplit_once('.')
        .map(|(l, _)| l)
        .unwrap_or_default();
    assert!(
        toml.contains(&format!("\npiceli = \"{line}\"\n"))
            && toml.contains("debug = \"line-tables-only\""),
        "{toml}"
    );

    // Never overwritten: a second import into the same crate is refused with its code.
    let out = piceli()
        .args(["import", "yaml", "-", "--crate"])
        .arg(&app)
        .write_stdin(CONFIG_MAP)
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.starts_with("error[PCL0186]"), "{err}");
}

#[test]
fn new_writes_a_starter_crate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = dir.path().join("Hello World");
    piceli().arg("new").arg(&app).assert().success();
    let main = std::fs::read_to_string(app.join("src/main.rs")).expect("main.rs");
    assert!(
        main.contains("app hello-world;") && main.contains("hello_world::main()"),
        "{main}"
    );
    let readme = std::fs::read_to_string(app.join("README.md")).expect("README");
    assert!(readme.contains("cargo run -- render") && readme.contains("piceli import yaml"));
    // By version: the release line of this build, any semver-compatible published piceli.
    let manifest = std::fs::read_to_string(app.join("Cargo.toml")).expect("Cargo.toml");
    let line = env!("CARGO_PKG_VERSION")
        .rsplit_once('.')
        .map(|(l, _)| l)
        .unwrap_or_default();
    assert!(
        manifest.contains(&format!("\npiceli = \"{line}\"\n")),
        "{manifest}"
    );
    piceli().arg("new").arg(&app).assert().code(1);
}

#[test]
fn out_writes_the_module_and_its_files_into_the_crate_around_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"shop\"\n",
    )
    .expect("toml");
    let main = dir.path().join("src/main.rs");
    let input = format!(
        "{CONFIG_MAP}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: other, namespace: elsewhere}}\ndata: {{A: b}}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: db, namespace: shop}}\ndata: {{password: c2VjcmV0}}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {{name: w, namespace: shop}}\nspec: {{size: 3}}\n"
    );
    piceli()
        .args([
            "import",
            "yaml",
            "-",
            "--app",
            "shop",
            "--namespace",
            "shop",
            "--out",
        ])
        .arg(&main)
        .write_stdin(input)
        .assert()
        .success();
    let text = std::fs::read_to_string(&main).expect("main.rs");
    assert!(
        text.contains("target local = local(namespace: \"shop\");"),
        "{text}"
    );
    // The diagnostic is in the code too, above the object it is about.
    assert!(
        text.contains(
            "    // piceli: PCL0183 was in namespace `elsewhere`, now in the target's `shop`\n    config_map other {"
        ),
        "{text}"
    );
    assert!(
        text.contains("include json(\"k8s/imported.json\");"),
        "{text}"
    );
    let env = std::fs::read_to_string(dir.path().join(".env.example")).expect(".env.example");
    assert_eq!(env, "# Secret db, key password\nDB_PASSWORD=\n");
    let included =
        std::fs::read_to_string(dir.path().join("k8s/imported.json")).expect("imported.json");
    assert!(
        included.contains("\"kind\": \"Widget\"") && included.contains("\"size\": 3"),
        "{included}"
    );
}

fn vendored_crds() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/crds")
}

const ROUTE: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: shop}\nspec:\n  ports: [{name: http, port: 80}]\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web, namespace: shop}\nspec:\n  parentRefs: [{name: public, namespace: infra}]\n  rules: [{backendRefs: [{name: api, port: 80}]}]\n";

#[test]
fn crds_make_resource_items_and_a_crate_gets_copies_of_the_files_used() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = dir.path().join("shop");
    piceli()
        .args(["import", "yaml", "-", "--crds"])
        .arg(vendored_crds())
        .arg("--crate")
        .arg(&app)
        .write_stdin(ROUTE)
        .assert()
        .success();
    let text = std::fs::read_to_string(app.join("src/main.rs")).expect("main.rs");
    assert!(text.contains("    crds \"crds/\";\n"), "{text}");
    assert!(
        text.contains("resource gateway.networking.k8s.io/v1/HTTPRoute web {"),
        "{text}"
    );
    let copied: Vec<String> = std::fs::read_dir(app.join("crds"))
        .expect("crds/")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(copied, ["gateway.networking.k8s.io_httproutes.yaml"]);
    let original = std::fs::read(vendored_crds().join(&copied[0])).expect("vendored");
    let copy = std::fs::read(app.join("crds").join(&copied[0])).expect("copy");
    assert!(original == copy, "the CRD file is copied as it is");
    // Printed alone, the module names the file as given; without `--crds` the route is included.
    let out = piceli()
        .args(["import", "yaml", "-", "--crds"])
        .arg(vendored_crds().join("gateway.networking.k8s.io_httproutes.yaml"))
        .write_stdin(ROUTE)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("gateway.networking.k8s.io_httproutes.yaml\";"),
        "{text}"
    );
    let out = piceli()
        .args(["import", "yaml", "-"])
        .write_stdin(ROUTE)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        !text.contains("resource ") && text.contains("include json("),
        "{text}"
    );
}

#[test]
fn a_crds_file_that_is_no_crd_is_a_coded_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("cm.yaml");
    std::fs::write(&f, CONFIG_MAP).expect("write");
    let out = piceli()
        .args(["import", "yaml", "-", "--crds"])
        .arg(&f)
        .write_stdin(ROUTE)
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("PCL0181") && err.contains("CustomResourceDefinition"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}
