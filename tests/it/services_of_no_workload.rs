//! Services of no workload render their spec as written (no selector of Piceli's); an Ingress routes to
//! one by a port of its spec, or to its first port when the path names none, and to an `external service`
//! by the port the path names.

use piceli::runtime::render::{Options, render};
use serde_json::{Value, json};

piceli::app! {
    app edge;
    target local = local(namespace: "shop");

    external service billing;

    service payments { spec: { type: "ExternalName", externalName: "payments.example.net" } }
    service legacy { spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }] } }

    ingress edge {
        rules: {
            "shop.example.com": { "/": legacy, "/legacy": legacy => http },
            "pay.example.com": { "/": billing => 8080 },
        },
    }
}

fn find(objects: &[Value], kind: &str, name: &str) -> Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn services_of_no_workload_render_as_written_and_ingresses_reach_them() {
    let objects = render(&edge::app(), &Options::default())
        .expect("renders")
        .objects;
    let payments = find(&objects, "Service", "payments");
    assert_eq!(
        payments["spec"],
        json!({ "type": "ExternalName", "externalName": "payments.example.net" })
    );
    let legacy = find(&objects, "Service", "legacy");
    assert_eq!(
        legacy["spec"],
        json!({ "ports": [{ "name": "http", "port": 80, "targetPort": 8080 }] })
    );
    // No object for the external Service.
    assert!(!objects.iter().any(|o| o["metadata"]["name"] == "billing"));
    let ingress = find(&objects, "Ingress", "edge");
    let backends: Vec<Value> = ingress["spec"]["rules"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["http"]["paths"].as_array().cloned().unwrap_or_default())
        .map(|p| p["backend"]["service"].clone())
        .collect();
    assert_eq!(
        backends,
        [
            json!({ "name": "legacy", "port": { "number": 80 } }),
            json!({ "name": "legacy", "port": { "name": "http" } }),
            json!({ "name": "billing", "port": { "number": 8080 } }),
        ]
    );
}
