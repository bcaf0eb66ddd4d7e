//! Rust expressions giving maps, lists and objects inside schema-checked blocks (`tolerations: (gpu())`):
//! rendered as the expression's JSON, and checked against the Kubernetes schema at run time by the same
//! rules and codes as a value written in the block, before anything is rendered.

use piceli::k8s_openapi::api::core::v1::{Capabilities, EnvVar, SecurityContext, Toleration};
use piceli::runtime::{Error, render};
use serde_json::{Value, json};

/// Shared by every GPU workload: a function, not a copy in each item.
fn gpu() -> Vec<Toleration> {
    vec![Toleration {
        key: Some("nvidia.com/gpu".into()),
        operator: Some("Exists".into()),
        effect: Some("NoSchedule".into()),
        ..Toleration::default()
    }]
}

fn hardened() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Capabilities::default()
        }),
        ..SecurityContext::default()
    }
}

fn common_env() -> Vec<EnvVar> {
    ["REGION", "TEAM"]
        .iter()
        .map(|name| EnvVar {
            name: name.to_string(),
            value: Some(name.to_lowercase()),
            ..EnvVar::default()
        })
        .collect()
}

piceli::app! {
    app block-expressions;
    deployment trainer {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod: {
            tolerations: (gpu()),
            nodeSelector: ([("accelerator", "a100")].into_iter().collect::<std::collections::BTreeMap<_, _>>()),
            affinity: (json!({ "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{ "matchExpressions": [
                    { "key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"] }
                ] }]
            } } })),
        },
        container: { securityContext: (hardened()), env: (common_env()) },
        spec: { strategy: (json!({ "type": "Recreate" })) },
    }
}

/// A typo, a value outside an enum and a wrong type, all from Rust: found at run time, with the codes a
/// block written in the DSL gets at compile time.
fn bad_tolerations() -> Value {
    json!([{ "key": "gpu", "operater": "Exists" }, { "key": "gpu", "effect": "Sometimes" }])
}

piceli::app! {
    app bad-block-expressions;
    deployment trainer {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod: { tolerations: (bad_tolerations()), securityContext: (json!({ "runAsUser": "root" })) },
    }
}

#[test]
fn expression_blocks_render_as_their_json() {
    let out =
        render::render(&block_expressions::app(), &render::Options::default()).expect("renders");
    let deploy = &out.objects[0];
    let pod = &deploy["spec"]["template"]["spec"];
    assert_eq!(
        pod["tolerations"],
        json!([{ "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" }])
    );
    assert_eq!(pod["nodeSelector"], json!({ "accelerator": "a100" }));
    assert_eq!(
        pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchExpressions"][0]["operator"],
        "In"
    );
    let container = &pod["containers"][0];
    assert_eq!(
        container["securityContext"]["capabilities"]["drop"],
        json!(["ALL"])
    );
    assert_eq!(
        container["env"][1],
        json!({ "name": "TEAM", "value": "team" })
    );
    assert_eq!(deploy["spec"]["strategy"], json!({ "type": "Recreate" }));
    insta::assert_snapshot!(render::to_yaml(&out.objects[..1]).expect("yaml"));
}

#[test]
fn expression_blocks_are_checked_against_the_schema_at_run_time() {
    let app = bad_block_expressions::app();
    let err = render::render(&app, &render::Options::default()).expect_err("invalid values");
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
            ("PCL0045", "deployment trainer › pod › tolerations"),
            ("PCL0047", "deployment trainer › pod › tolerations"),
            ("PCL0046", "deployment trainer › pod › securityContext"),
        ],
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains("did you mean `operator`?"), "{text}");
    assert!(text.contains("Sometimes"), "{text}");
    assert!(text.contains("help:"), "{text}");
}
