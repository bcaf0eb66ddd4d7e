//! Values written as Rust expressions land at their places in the model — scalars in structs, in enum
//! variants (an env value, a probe's path, a kubeconfig's context), in blocks (written there or put there
//! by a shortcut such as `grace:`), file contents — assigned by
//! the code `app!` generates after the model is loaded, and render as if written in the DSL.

use piceli::core::model::{Cluster, ConfigValue, EnvValue, ProbeAction};
use piceli::runtime::render;

fn image() -> String {
    format!("docker.io/library/nginx:1.27@sha256:{}", "ab".repeat(32))
}

fn namespace() -> &'static str {
    "places"
}

fn mode() -> String {
    "prod".into()
}

piceli::app! {
    app expression-places;
    target local = local(namespace: (namespace()));
    target dev = kubeconfig("dev.kubeconfig", context: (format!("{}-ctx", "dev")), namespace: "dev");
    deployment web {
        image: (image()),
        replicas: (1_u8 + 2),
        ports: { http: (8000 + 80_u16) },
        ready: http_get((format!("/{}", "healthz")), port: http),
        env: { MODE: (mode()), FIXED: "1" },
        resources: { cpu: ("250m") },
        pod_labels: { tier: ("web") },
        pod: { terminationGracePeriodSeconds: (20 + 10_i32), priorityClassName: (String::from("high")) },
        container: { workingDir: ("/srv") },
    }
    service web -> web { port: 80 => http }
    deployment worker {
        image: (image()),
        grace: (15_u8),
        priority: (["l", "ow"].concat()),
        strategy: rolling(max_surge: (format!("{}%", 25)), max_unavailable: 0),
    }
    config_map settings { mode: (mode()), "monitoring.yaml": file("tests/fixtures/monitoring.yaml") }
}

#[test]
fn every_value_is_at_its_place_in_the_model() {
    let app = expression_places::app();
    assert_eq!(app.load_error, None);
    assert_eq!(
        app.target("local").map(|t| t.namespace.v.as_str()),
        Some("places")
    );
    match &app.target("dev").map(|t| &t.cluster) {
        Some(Cluster::Kubeconfig { context, .. }) => assert_eq!(context.v, "dev-ctx"),
        other => panic!("a kubeconfig target, not {other:?}"),
    }
    let web = app.workload("web").expect("web");
    assert_eq!(web.replicas.as_ref().map(|r| r.v), Some(3));
    let c = &web.containers[0];
    assert_eq!(c.image.v, image());
    assert_eq!(c.ports[0].number.v, 8080);
    match &c.readiness.as_ref().map(|p| &p.action) {
        Some(ProbeAction::Http { path, .. }) => assert_eq!(path.v, "/healthz"),
        other => panic!("an http probe, not {other:?}"),
    }
    match &c.env[0].value {
        EnvValue::Literal(v) => assert_eq!(v.v, "prod"),
        other => panic!("a literal, not {other:?}"),
    }
    let settings = &app.config_maps[0];
    let data: Vec<(&str, &str)> = settings
        .data
        .iter()
        .map(|(k, v)| match v {
            ConfigValue::Literal(s) => (k.v.as_str(), s.v.as_str()),
            ConfigValue::File { contents, .. } => (k.v.as_str(), contents.v.as_str()),
        })
        .collect();
    assert_eq!(data[0], ("mode", "prod"));
    assert_eq!(
        data[1],
        (
            "monitoring.yaml",
            include_str!("../fixtures/monitoring.yaml")
        )
    );
}

#[test]
fn the_assigned_values_render_as_written_ones() {
    let out =
        render::render(&expression_places::app(), &render::Options::default()).expect("renders");
    assert_eq!(out.namespace, "places");
    let deploy = out
        .objects
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("the deployment");
    assert_eq!(deploy["spec"]["replicas"], 3);
    let pod = &deploy["spec"]["template"];
    assert_eq!(pod["metadata"]["labels"]["tier"], "web");
    assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["spec"]["priorityClassName"], "high");
    let c = &pod["spec"]["containers"][0];
    assert_eq!(c["image"], image());
    assert_eq!(c["ports"][0]["containerPort"], 8080);
    assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(c["env"][0]["value"], "prod");
    assert_eq!(c["resources"]["requests"]["cpu"], "250m");
    assert_eq!(c["workingDir"], "/srv");
    // Shortcuts put their values into the blocks: assigned there.
    let worker = out
        .objects
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == "worker")
        .expect("the worker");
    assert_eq!(
        worker["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "25%"
    );
    assert_eq!(
        worker["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"],
        0
    );
    let pod = &worker["spec"]["template"]["spec"];
    assert_eq!(pod["terminationGracePeriodSeconds"], 15);
    assert_eq!(pod["priorityClassName"], "low");
    let service = out
        .objects
        .iter()
        .find(|o| o["kind"] == "Service")
        .expect("the service");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], "http");
}
