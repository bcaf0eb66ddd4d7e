//! Includes: YAML and JSON files, and k8s-openapi objects built in Rust.
//!
//! Fixture paths are relative to the crate trybuild generates; tests/it/ui.rs copies `tests/ui/fixtures/` there.

use piceli::k8s_openapi::api::core::v1::ConfigMap;
use piceli::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn objects() -> Vec<ConfigMap> {
    vec![ConfigMap {
        metadata: ObjectMeta { name: Some("built-in-rust".into()), ..ObjectMeta::default() },
        ..ConfigMap::default()
    }]
}

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    include yaml("fixtures/objects.yaml");
    include json("fixtures/objects.json");
    include objects((objects()));
}

fn main() -> std::process::ExitCode {
    demo::main()
}
