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

const NGINX: &str = "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d";

/// N similar workers, each with its Service, built by a function.
fn workers(n: usize) -> piceli::App {
    (0..n).fold(piceli::App::new("workers"), |app, i| {
        let name = format!("worker-{i}");
        app.with_workload(
            piceli::Workload::deployment(&name, NGINX)
                .port("http", 8080)
                .env("SHARD", i.to_string()),
        )
        .with_service(piceli::Service::to(&name, &name).port(80, "http"))
    })
}

piceli::app! {
    app with-parts;
    target local = local(namespace: "parts");
    deployment web { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d", ports: { http: 80 } }
    include app((workers(2)));
}

piceli::app! {
    app clashing-part;
    deployment worker-0 { image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d" }
    include app((workers(1).with_workload(piceli::Workload::deployment("Bad_Name", NGINX))));
}

#[test]
fn parts_built_in_rust_render_with_the_macros_app() {
    let app = with_parts::app();
    assert!(
        !app.checked_at_compile_time,
        "a merged part is checked at run time"
    );
    let rendered = render::render(&app, &render::Options::default()).expect("renders");
    let names: Vec<(String, String)> = rendered
        .objects
        .iter()
        .map(|o| {
            (
                o["kind"].as_str().unwrap_or_default().to_string(),
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    for (kind, name) in [
        ("Deployment", "web"),
        ("Deployment", "worker-0"),
        ("Deployment", "worker-1"),
        ("Service", "worker-1"),
    ] {
        assert!(
            names.contains(&(kind.to_string(), name.to_string())),
            "{kind}/{name} in {names:?}"
        );
    }
    let worker = rendered
        .objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "worker-1")
        .expect("worker-1");
    let env = &worker["spec"]["template"]["spec"]["containers"][0]["env"];
    assert_eq!(env[0]["value"], "1", "{env}");
    assert_eq!(
        worker["metadata"]["namespace"], "parts",
        "the part deploys into the app's target"
    );
}

#[test]
fn a_part_that_breaks_a_rule_is_refused_with_the_macros_code() {
    let err = render::render(&clashing_part::app(), &render::Options::default())
        .expect_err("a clash and a bad name");
    let text = err.to_string();
    assert!(text.contains("PCL0003"), "the name both declare: {text}");
    assert!(text.contains("PCL0001"), "the part's invalid name: {text}");
}

fn common_env() -> std::collections::BTreeMap<&'static str, u16> {
    std::collections::BTreeMap::from([("PORT", 8080), ("WORKERS", 4)])
}

piceli::app! {
    app env-expressions;
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: (common_env()),
    }
    deployment bad {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        env: ([("not a name", "x")]),
    }
}

#[test]
fn a_whole_env_map_from_rust_is_rendered_and_checked_by_the_same_rules() {
    let app = env_expressions::app();
    let web = app.workload("web").expect("web");
    let env: Vec<(&str, &str)> = web.containers[0]
        .env
        .iter()
        .map(|e| match &e.value {
            piceli::core::model::EnvValue::Literal(v) => (e.name.v.as_str(), v.v.as_str()),
            other => panic!("a literal, not {other:?}"),
        })
        .collect();
    assert_eq!(env, [("PORT", "8080"), ("WORKERS", "4")]);
    let err = render::render(&app, &render::Options::default()).expect_err("a bad name");
    let Error::Invalid(problems) = &err else {
        panic!("expected Invalid, got {err}")
    };
    assert_eq!(problems.len(), 1, "{err}");
    assert_eq!(problems[0].0.code.as_str(), "PCL0029", "{err}");
    assert_eq!(problems[0].1, "deployment bad › container bad › env");
}

fn team_labels() -> Vec<(String, String)> {
    vec![
        ("team".into(), "shop".into()),
        ("tier".into(), "web".into()),
    ]
}

fn flags(port: u16) -> Vec<String> {
    vec!["--port".into(), port.to_string()]
}

piceli::app! {
    app list-expressions;
    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        labels: (team_labels()),
        pod_labels: (team_labels()),
        pod_annotations: ([("prometheus.io/port", 9090)]),
        node_selector: (std::collections::BTreeMap::from([("kubernetes.io/arch", "amd64")])),
        command: ("/bin/web"),
        args: (flags(8080)),
        init_containers: { migrate: {
            image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
            args: (["migrate", "--all"]),
        } },
    }
    deployment bad {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        node_selector: ([("not a label key!", "x")]),
    }
}

#[test]
fn maps_and_lists_from_rust_are_assigned_to_their_fields_and_checked_by_the_same_rules() {
    let mut app = list_expressions::app();
    let err = render::render(&app, &render::Options::default()).expect_err("a bad key");
    let Error::Invalid(problems) = &err else {
        panic!("expected Invalid, got {err}")
    };
    assert_eq!(problems.len(), 1, "{err}");
    assert_eq!(problems[0].1, "deployment bad › node_selector", "{err}");
    app.workloads.retain(|w| w.name.v != "bad");
    let out = render::render(&app, &render::Options::default()).expect("renders");
    let deploy = &out.objects[0];
    assert_eq!(deploy["metadata"]["labels"]["team"], "shop", "{deploy}");
    let template = &deploy["spec"]["template"];
    assert_eq!(template["metadata"]["labels"]["tier"], "web", "{deploy}");
    assert_eq!(
        template["metadata"]["annotations"]["prometheus.io/port"],
        "9090"
    );
    assert_eq!(
        template["spec"]["nodeSelector"]["kubernetes.io/arch"],
        "amd64"
    );
    let web = &template["spec"]["containers"][0];
    assert_eq!(web["command"], serde_json::json!(["/bin/web"]));
    assert_eq!(web["args"], serde_json::json!(["--port", "8080"]));
    let migrate = &template["spec"]["initContainers"][0];
    assert_eq!(migrate["args"], serde_json::json!(["migrate", "--all"]));
}
