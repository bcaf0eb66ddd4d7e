//! Values written as Rust expressions are checked at run time by the same rules, with the same codes,
//! before anything is rendered (or, later, sent to a cluster).

use piceli::runtime::Coded;
use piceli::runtime::{Error, render};

fn image() -> String {
    // Not pinned by digest: only knowable at run time.
    format!("docker.io/library/nginx:{}", 1 + 1)
}

fn replicas() -> i32 {
    -2
}

piceli::app! {
    app runtime-values;
    target local = local(namespace: "rv");
    deployment web {
        image: (image()),
        replicas: (replicas()),
        ports: { http: 80 },
        resources: { memory: ("512m") },
    }
}

piceli::app! {
    app good-values;
    deployment web {
        image: (format!("docker.io/library/nginx:1.27@sha256:{}", "ab".repeat(32))),
        replicas: (1 + 2),
        env: { MODE: (std::env::consts::OS) },
    }
}

piceli::app! {
    app nameless-object;
    include objects((vec![piceli::k8s_openapi::api::core::v1::ConfigMap::default()]));
}

#[test]
fn rust_built_objects_need_kind_and_name() {
    let err =
        render::render(&nameless_object::app(), &render::Options::default()).expect_err("no name");
    assert_eq!(err.code().as_str(), "PCL0036", "{err}");
    assert!(err.to_string().contains("object #1"), "{err}");
    assert!(err.to_string().contains("metadata.name"), "{err}");
}

#[test]
fn expression_values_are_validated_with_the_same_codes() {
    let app = runtime_values::app();
    let err = render::render(&app, &render::Options::default()).expect_err("invalid values");
    let Error::Invalid(problems) = &err else {
        panic!("expected Invalid, got {err}")
    };
    let codes: Vec<&str> = problems.iter().map(|(d, _)| d.code.as_str()).collect();
    assert_eq!(codes, ["PCL0020", "PCL0016", "PCL0018"], "{err}");
    let places: Vec<&str> = problems.iter().map(|(_, at)| at.as_str()).collect();
    assert_eq!(
        places,
        [
            "deployment web › replicas",
            "deployment web › container web › image",
            "deployment web › container web › resources › memory"
        ]
    );
    assert!(err.to_string().contains("help:"), "{err}");
}

#[test]
fn good_expression_values_render() {
    let app = good_values::app();
    let out = render::render(&app, &render::Options::default()).expect("renders");
    assert_eq!(out.namespace, "default");
    let deploy = &out.objects[0];
    assert_eq!(deploy["spec"]["replicas"], 3);
    assert_eq!(
        deploy["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"],
        std::env::consts::OS
    );
}

fn pull_policy() -> String {
    "Sometimes".to_string()
}

piceli::app! {
    app block-values;
    deployment web {
        image: (format!("docker.io/library/nginx:1.27@sha256:{}", "ab".repeat(32))),
        container: { imagePullPolicy: (pull_policy()), resources: { limits: { memory: ("512m") } } },
        pod: { terminationGracePeriodSeconds: (10 + 5) },
    }
}

#[test]
fn expression_values_in_blocks_are_checked_against_the_schema() {
    let err = render::render(&block_values::app(), &render::Options::default())
        .expect_err("invalid block values");
    let Error::Invalid(problems) = &err else {
        panic!("expected Invalid, got {err}")
    };
    let found: Vec<(&str, &str)> = problems
        .iter()
        .map(|(d, at)| (d.code.as_str(), at.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "PCL0047",
                "deployment web › container web › container › imagePullPolicy"
            ),
            (
                "PCL0018",
                "deployment web › container web › container › resources › limits › memory"
            ),
        ],
        "{err}"
    );
}

piceli::app! {
    app all-literal;
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:abababababababababababababababababababababababababababababababab",
        ports: { http: 80 },
    }
}

#[test]
fn only_apps_with_run_time_values_are_checked_again_at_run_time() {
    // Everything was checked by the macro: rendering does not run the rules a second time.
    assert!(all_literal::app().checked_at_compile_time);
    // A value from a Rust expression is known only now: the rules run (and find the bad ones).
    assert!(!good_values::app().checked_at_compile_time);
    assert!(!runtime_values::app().checked_at_compile_time);
    // An app built by hand (not loaded from a macro's model) is always checked.
    let mut hand_made = all_literal::app();
    hand_made.checked_at_compile_time = false;
    hand_made.workloads[0].replicas = Some(piceli::core::Spanned::new(-1, piceli::core::Loc(0)));
    let err = render::render(&hand_made, &Default::default()).expect_err("checked");
    assert_eq!(err.code().as_str(), "PCL0020", "{err}");
}
