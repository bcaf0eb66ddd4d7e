//! `include objects((…))`: objects built in Rust get, when the binary runs, the checks an included file
//! gets at compile time — another namespace than a target's (PCL0073), images without a digest (PCL0074),
//! the 1.33 schema of their spec — unless the include's options accept them, and a `List` is its items.

use piceli::k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use piceli::k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use piceli::k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use piceli::runtime::render::{Options, render};
use piceli::runtime::{Coded, Error};

/// A worker Deployment of another team, in its own namespace, on a moving tag.
fn other_team() -> Vec<Deployment> {
    let labels = std::collections::BTreeMap::from([("app".to_string(), "worker".to_string())]);
    vec![Deployment {
        metadata: ObjectMeta {
            name: Some("worker".into()),
            namespace: Some("batch".into()),
            ..ObjectMeta::default()
        },
        spec: Some(DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "worker".into(),
                        image: Some("docker.io/library/busybox:1.36".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        }),
        ..Deployment::default()
    }]
}

/// Two ConfigMaps as one `v1 List`.
fn listed() -> Vec<piceli::Object> {
    let item = |name: &str| serde_json::json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": name } });
    let list =
        serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": [item("a"), item("b")] });
    vec![piceli::Object(list)]
}

piceli::app! {
    app strict;
    target local = local(namespace: "shop");
    include objects((other_team()));
}

piceli::app! {
    app relaxed;
    target local = local(namespace: "shop");
    include objects((other_team())) { namespace: keep, images: unpinned }
    include objects((listed()));
}

#[test]
fn another_namespace_and_a_moving_tag_are_refused_with_the_file_codes() {
    let err = render(&strict::app(), &Options::default()).expect_err("refused");
    let Error::Invalid(problems) = &err else {
        panic!("expected Invalid, got {err}")
    };
    let mut codes: Vec<&str> = problems.iter().map(|(d, _)| d.code.as_str()).collect();
    codes.sort();
    assert_eq!(codes, ["PCL0073", "PCL0074"], "{err}");
    assert!(
        problems.iter().all(|(_, at)| at == "include objects"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("namespace `batch`, not target `local`'s `shop`"),
        "{text}"
    );
    assert!(text.contains("busybox:1.36"), "{text}");
    assert!(text.contains("{ namespace: keep }"), "{text}");
    assert_eq!(err.code().as_str(), "PCL0073", "{err}");
}

#[test]
fn the_options_accept_them_and_a_list_renders_as_its_items() {
    let objects = render(&relaxed::app(), &Options::default())
        .expect("renders")
        .objects;
    let worker = objects
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("the worker");
    assert_eq!(worker["metadata"]["namespace"], "batch");
    let config_maps: Vec<&str> = objects
        .iter()
        .filter(|o| o["kind"] == "ConfigMap")
        .filter_map(|o| o["metadata"]["name"].as_str())
        .collect();
    assert_eq!(config_maps, ["a", "b"]);
    assert!(!objects.iter().any(|o| o["kind"] == "List"));
}
