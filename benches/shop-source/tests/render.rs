//! `shop-source render`, as a user runs it: offline, never building, every image of the app (the admin
//! Deployment shares the API's) shows as the placeholder of the fixture package `deploy` builds it from.

use assert_cmd::Command;

#[test]
fn every_built_image_renders_as_its_placeholder() {
    let home = tempfile::tempdir().expect("home");
    let out = Command::cargo_bin("shop-source")
        .expect("the app's binary")
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("KUBECONFIG")
        .args(["render", "-o", "json"])
        .assert()
        .success();
    let list: serde_json::Value =
        serde_json::from_slice(&out.get_output().stdout).expect("a JSON List");
    let items = list["items"].as_array().expect("items");
    let images: Vec<&str> = items
        .iter()
        .filter_map(|o| {
            let pod = match o["kind"].as_str()? {
                "CronJob" => &o["spec"]["jobTemplate"]["spec"]["template"]["spec"],
                _ => &o["spec"]["template"]["spec"],
            };
            pod["containers"][0]["image"].as_str()
        })
        .collect();
    assert_eq!(
        images,
        [
            "build:shop-api",
            "build:shop-web",
            "build:shop-worker",
            "build:shop-report",
            "build:shop-api",
        ]
    );
    assert!(items.len() >= 19, "shop-sized: {} objects", items.len());
    assert!(
        !home.path().join(".piceli").exists(),
        "render touches no state directory"
    );
}
