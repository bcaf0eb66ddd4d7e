//! Both apps render the shared fragments: the team's labels and ConfigMap, and the log-shipper sidecar.

use assert_cmd::Command;

fn render(bin: &str) -> String {
    let home = tempfile::tempdir().expect("temp dir");
    let out = Command::new(bin)
        .env_remove("KUBECONFIG")
        .env("HOME", home.path())
        .arg("render")
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).expect("utf-8")
}

#[test]
fn both_apps_render_the_shared_fragments() {
    let api = render(env!("CARGO_BIN_EXE_shop-api"));
    let worker = render(env!("CARGO_BIN_EXE_shop-worker"));
    for yaml in [&api, &worker] {
        assert!(yaml.contains("name: log-shipper"), "{yaml}");
        assert!(yaml.contains("team: shop"), "{yaml}");
        assert!(yaml.contains("LOG_FORMAT: json"), "{yaml}");
    }
    insta::assert_snapshot!("shop_api_render", api);
    insta::assert_snapshot!("shop_worker_render", worker);
}
