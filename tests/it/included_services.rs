//! Services of included files can be referred to like the app's own: an Ingress routes to one by port name
//! or number (or its first port), a check and `access` reach the pods of the workload it selects, and
//! nothing of it is rendered twice.

use piceli::runtime::forward::port_target;
use piceli::runtime::render::{Options, render};

piceli::app! {
    app included-services;
    target local = local(namespace: "shop");
    include yaml("tests/fixtures/included-web.yaml");
    ingress site {
        host: "shop.example.com",
        paths: { "/": web => http, "/metrics": web => 9090, "/any": web },
    }
    check http(web, "/", port: http);
}

#[test]
fn an_ingress_routes_to_a_service_of_an_included_file() {
    let objects = render(&included_services::app(), &Options::default())
        .expect("renders")
        .objects;
    let services = objects.iter().filter(|o| o["kind"] == "Service").count();
    assert_eq!(services, 1, "the included Service only, as written");
    let ingress = objects
        .iter()
        .find(|o| o["kind"] == "Ingress")
        .expect("the Ingress");
    let paths = &ingress["spec"]["rules"][0]["http"]["paths"];
    let port = |i: usize| &paths[i]["backend"]["service"]["port"];
    assert_eq!(paths[0]["backend"]["service"]["name"], "web");
    assert_eq!(port(0), &serde_json::json!({ "name": "http" }));
    assert_eq!(port(1), &serde_json::json!({ "number": 9090 }));
    assert_eq!(
        port(2),
        &serde_json::json!({ "number": 80 }),
        "its first port"
    );
}

#[test]
fn checks_and_access_reach_the_pods_of_the_workload_the_service_selects() {
    let app = included_services::app();
    for (port, expected) in [(None, 8000), (Some("http"), 8000), (Some("metrics"), 9091)] {
        let port = port.map(|p| {
            piceli::core::model::PortRef::Name(piceli::core::spanned::Spanned::bare(p.to_string()))
        });
        let target = port_target(&app, "web", port.as_ref()).expect("a target");
        assert_eq!(target.workload, "web");
        assert_eq!(target.port, expected);
    }
}
