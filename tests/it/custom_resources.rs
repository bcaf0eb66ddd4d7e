//! Custom resources of other projects (`crds` and `resource`), end to end (in process, on the local
//! cluster or the real control plane of `PICELI_REAL_KUBECONFIG`): an app with a Gateway API HTTPRoute
//! a GRPCRoute and an `http_route` attached to the app's Gateway and a Prometheus Operator ServiceMonitor selecting its
//! Service with `(service api)`, whose vendored CRDs (`tests/crds/`) it installs, renders them in apply
//! order (a snapshot), deploys, and re-plans to no change; the selectors `(service …)` and `(pods …)`
//! render labels that select exactly the rendered Service and pods; an app whose CRD the cluster does not
//! serve is refused at plan with PCL0238 naming the CRD, before anything is applied; a value from Rust that
//! the CRD's schema refuses is refused when the app runs, with the code the macro would give.

use piceli::runtime::Coded;
use piceli::runtime::engine::session::Session;
use piceli::runtime::render::{Options, render, to_yaml};
use piceli_test_support::Cluster;

use crate::cluster_session::options;

fn port() -> i64 {
    80
}

mod installed {
    use super::port;
    piceli::app! {
        app gateway-test;
        target local = local(namespace: "gateway");
        crds "tests/crds/" { install: true };

        service api {
            spec: { selector: { app: "api" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
        }
        service admin {
            spec: { selector: { app: "admin" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
        }
        resource Gateway public {
            spec: { gatewayClassName: "public", listeners: [{ name: http, port: 80, protocol: "HTTP" }] },
        }
        resource gateway.networking.k8s.io/v1/HTTPRoute web {
            labels: { tier: "edge" },
            spec: {
                parentRefs: [{ name: public }],
                hostnames: ["shop.example.com"],
                rules: [{
                    matches: [{ path: { type: "PathPrefix", value: "/" } }],
                    backendRefs: [{ name: "api", port: (port()) }],
                }],
            },
        }
        http_route shop { host: "shop.example.com", gateway: public, listener: http, paths: { "/": api:http } }
        resource GRPCRoute orders {
            spec: {
                parentRefs: [{ name: public, sectionName: http }],
                rules: [{ matches: [{ method: { service: "shop.Orders" } }], backendRefs: [{ name: api, port: 80 }] }],
            },
        }
        resource ServiceMonitor api {
            spec: {
                selector: (service api),
                endpoints: [{ port: http, interval: "30s" }],
            },
        }
    }
}

mod selectors {
    piceli::app! {
        app shop;
        crds "tests/crds/monitoring.coreos.com_podmonitors.yaml";
        crds "tests/crds/monitoring.coreos.com_servicemonitors.yaml";

        deployment api {
            image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
            ports: { http: 8080, metrics: 9090 },
            pod_labels: { team: "shop" },
        }
        deployment web {
            image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
            ports: { http: 8080 },
            pod_labels: { team: "shop" },
        }
        service api -> api { labels: { tier: "api" }, ports: { http: 80 => http, metrics: 9090 => metrics } }
        service web -> web { port: 80 => http }

        resource ServiceMonitor api { spec: { selector: (service api), endpoints: [{ port: metrics }] } }
        resource ServiceMonitor web { spec: { selector: (service web), endpoints: [{ port: http }] } }
        resource PodMonitor api { spec: { selector: (pods api), podMetricsEndpoints: [{ port: metrics }] } }
    }
}

/// Whether `selector`'s `matchLabels` are all among `labels`.
fn selects(selector: &serde_json::Value, labels: &serde_json::Value) -> bool {
    let wanted = selector["matchLabels"].as_object().expect("matchLabels");
    !wanted.is_empty() && wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
}

#[test]
fn selectors_select_exactly_the_rendered_service_or_pods() {
    let app = selectors::shop::app();
    let rendered = render(&app, &Options::default()).expect("render");
    let find = |kind: &str, name: &str| {
        rendered
            .objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{kind} {name}"))
            .clone()
    };
    let services = ["api", "web"].map(|n| find("Service", n));
    let pods = ["api", "web"]
        .map(|n| find("Deployment", n)["spec"]["template"]["metadata"]["labels"].clone());
    for (i, name) in ["api", "web"].iter().enumerate() {
        let selector = &find("ServiceMonitor", name)["spec"]["selector"];
        let chosen: Vec<bool> = services
            .iter()
            .map(|s| selects(selector, &s["metadata"]["labels"]))
            .collect();
        assert_eq!(chosen, [i == 0, i == 1], "{name}: {selector}");
    }
    // `api`'s own `tier` tells it apart; `web` has no label of its own, so it gets one.
    assert_eq!(
        find("ServiceMonitor", "api")["spec"]["selector"]["matchLabels"],
        serde_json::json!({ "app.kubernetes.io/name": "shop", "tier": "api" })
    );
    assert_eq!(
        services[1]["metadata"]["labels"]["piceli.dev/service"],
        "web"
    );
    let selector = &find("PodMonitor", "api")["spec"]["selector"];
    assert!(
        selects(selector, &pods[0]) && !selects(selector, &pods[1]),
        "{selector}"
    );
    // Core checks with the labels the render writes.
    for (w, labels) in app.workloads.iter().zip(&pods) {
        let rendered: std::collections::BTreeMap<String, String> =
            serde_json::from_value(labels.clone()).expect("labels");
        assert_eq!(rendered, piceli::core::validate::pod_labels(&app, w));
    }
}

mod not_installed {
    piceli::app! {
        app gateway-test;
        target local = local(namespace: "gateway-missing");
        crds "tests/ui/fixtures/other-certificate-crd.yaml";

        resource certs.example.com/v1/Certificate shop {
            spec: { host: "shop.example.com" },
        }
    }
}

fn hostnames() -> Vec<String> {
    vec!["shop.example.com".into(), "Not_A_Host".into()]
}

mod checked_at_run_time {
    use super::hostnames;
    piceli::app! {
        app gateway-test;
        crds "tests/crds/gateway.networking.k8s.io_httproutes.yaml";
        external service api;

        resource gateway.networking.k8s.io/v1/HTTPRoute web {
            spec: { hostnames: (hostnames()), rules: [{ backendRefs: [{ name: "api", port: 80 }] }] },
        }
    }
}

#[test]
fn a_value_from_rust_is_checked_against_the_crd_schema_when_the_app_runs() {
    let err = render(
        &checked_at_run_time::gateway_test::app(),
        &Options::default(),
    )
    .expect_err("a hostname the schema's pattern refuses");
    assert_eq!(err.code().as_str(), "PCL0233", "{err}");
    let message = err.to_string();
    assert!(
        message.contains("spec › hostnames[1] must match") && message.contains("`Not_A_Host`"),
        "{message}"
    );
}

#[test]
fn custom_resources_render_after_their_crds_with_the_app_labels() {
    let rendered = render(&installed::gateway_test::app(), &Options::default()).expect("render");
    let kinds: Vec<&str> = rendered
        .objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "CustomResourceDefinition",
            "CustomResourceDefinition",
            "CustomResourceDefinition",
            "CustomResourceDefinition",
            "CustomResourceDefinition",
            "CustomResourceDefinition",
            "CustomResourceDefinition",
            "Gateway",
            "HTTPRoute",
            "GRPCRoute",
            "ServiceMonitor",
            "HTTPRoute",
            "Service",
            "Service",
        ]
    );
    // A ServiceMonitor's selector is checked against the labels core says a Service carries: the
    // rendered ones.
    let app = installed::gateway_test::app();
    let service = rendered
        .objects
        .iter()
        .find(|o| o["kind"] == "Service" && o["metadata"]["name"] == "api")
        .expect("the Service");
    let labels: std::collections::BTreeMap<String, String> =
        serde_json::from_value(service["metadata"]["labels"].clone()).expect("labels");
    assert_eq!(
        labels,
        piceli::core::validate::service_labels(&app, &app.services[0])
    );
    // The CRDs are long: the snapshot keeps the app's own objects.
    let own: Vec<serde_json::Value> = rendered
        .objects
        .into_iter()
        .filter(|o| o["kind"] != "CustomResourceDefinition")
        .collect();
    insta::assert_snapshot!("custom_resources", to_yaml(&own).expect("yaml"));
}

/// The live object `kind/name` in `namespace`, as JSON.
fn live(cluster: &Cluster, kind: &str, namespace: &str, name: &str) -> serde_json::Value {
    let out = cluster
        .kubectl()
        .args(["get", kind, name, "-n", namespace, "-o", "json"])
        .output()
        .expect("kubectl runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_installs_its_crds_and_deploys_a_route_and_a_monitor() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());

    // Not installed, not served: refused at plan, naming the CRD.
    let session = Session::open(not_installed::gateway_test::app(), &opts)
        .await
        .expect("session");
    let err = session.plan(vec![], false).await.expect_err("refused");
    assert_eq!(err.code().as_str(), "PCL0238", "{err}");
    let message = err.to_string();
    assert!(
        message.contains("certificates.certs.example.com")
            && message.contains("resource certs.example.com/v1/Certificate shop"),
        "{message}"
    );
    assert!(err.help().contains("install: true"), "{}", err.help());

    let session = Session::open(installed::gateway_test::app(), &opts)
        .await
        .expect("session");
    let plan = session.plan(vec![], false).await.expect("plan");
    session.apply(&plan.hash).await.expect("apply");
    let route = live(
        &cluster,
        "httproutes.gateway.networking.k8s.io",
        "gateway",
        "web",
    );
    assert_eq!(route["metadata"]["labels"]["tier"], "edge");
    assert_eq!(
        route["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "piceli"
    );
    assert_eq!(route["spec"]["rules"][0]["backendRefs"][0]["port"], 80);
    assert_eq!(route["spec"]["hostnames"][0], "shop.example.com");
    let gateway = live(
        &cluster,
        "gateways.gateway.networking.k8s.io",
        "gateway",
        "public",
    );
    assert_eq!(gateway["spec"]["gatewayClassName"], "public");
    let monitor = live(
        &cluster,
        "servicemonitors.monitoring.coreos.com",
        "gateway",
        "api",
    );
    assert_eq!(monitor["spec"]["endpoints"][0]["port"], "http");
    // `(service api)`: the live Service `api` carries the labels it selects, `admin` does not.
    let selector = &monitor["spec"]["selector"];
    let api = live(&cluster, "service", "gateway", "api");
    let admin = live(&cluster, "service", "gateway", "admin");
    assert!(selects(selector, &api["metadata"]["labels"]), "{selector}");
    assert!(
        !selects(selector, &admin["metadata"]["labels"]),
        "{selector}"
    );
    let grpc = live(
        &cluster,
        "grpcroutes.gateway.networking.k8s.io",
        "gateway",
        "orders",
    );
    assert_eq!(grpc["spec"]["rules"][0]["backendRefs"][0]["port"], 80);
    // `http_route`: the Service port `http` resolved to its number.
    let shop = live(
        &cluster,
        "httproutes.gateway.networking.k8s.io",
        "gateway",
        "shop",
    );
    assert_eq!(shop["spec"]["rules"][0]["backendRefs"][0]["port"], 80);
    assert_eq!(shop["spec"]["parentRefs"][0]["sectionName"], "http");
    // A re-plan changes nothing.
    let again = session.plan(vec![], false).await.expect("re-plan");
    assert!(!again.has_changes(), "{:?}", again.actions);
}
