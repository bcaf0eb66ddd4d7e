//! Ingresses of every shape the API takes render first-class: a default backend (alone, or beside rules),
//! several TLS entries (one per Secret, each for the hosts it lists), and paths of mixed types (the
//! Ingress's `path_type:` for every path, `exact(…)`, `prefix(…)`, `implementation_specific(…)` for one).

use piceli::runtime::render::{Options, render};
use serde_json::{Value, json};

piceli::app! {
    app edge;
    target local = local(namespace: "shop");

    external secret shop-tls;
    external secret api-tls;
    external service billing;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }
    service web -> web { port: 80 => http }

    ingress fallback { class: "nginx", default: web => http }

    ingress edge {
        rules: {
            "shop.example.com": {
                "/": web,
                "/healthz": exact(web => http),
                "/static": implementation_specific(web => 80),
            },
            "api.example.com": { "/": billing => 8080 },
        },
        path_type: "Prefix",
        tls: { shop-tls: ["shop.example.com"], api-tls: ["api.example.com", "*.api.example.com"] },
        default: billing => http,
    }

    ingress exact {
        host: "shop.example.com",
        path_type: "Exact",
        paths: { "/": web, "/docs": prefix(web) },
        tls: { shop-tls: [] },
    }
}

fn find(objects: &[Value], name: &str) -> Value {
    objects
        .iter()
        .find(|o| o["kind"] == "Ingress" && o["metadata"]["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no Ingress {name}"))
}

#[test]
fn ingresses_of_every_shape_render_first_class() {
    let objects = render(&edge::app(), &Options::default())
        .expect("renders")
        .objects;
    assert_eq!(
        find(&objects, "fallback")["spec"],
        json!({
            "ingressClassName": "nginx",
            "defaultBackend": { "service": { "name": "web", "port": { "name": "http" } } },
        })
    );
    assert_eq!(
        find(&objects, "edge")["spec"],
        json!({
            "defaultBackend": { "service": { "name": "billing", "port": { "name": "http" } } },
            "rules": [
                { "host": "shop.example.com", "http": { "paths": [
                    { "path": "/", "pathType": "Prefix",
                      "backend": { "service": { "name": "web", "port": { "number": 80 } } } },
                    { "path": "/healthz", "pathType": "Exact",
                      "backend": { "service": { "name": "web", "port": { "name": "http" } } } },
                    { "path": "/static", "pathType": "ImplementationSpecific",
                      "backend": { "service": { "name": "web", "port": { "number": 80 } } } },
                ] } },
                { "host": "api.example.com", "http": { "paths": [
                    { "path": "/", "pathType": "Prefix",
                      "backend": { "service": { "name": "billing", "port": { "number": 8080 } } } },
                ] } },
            ],
            "tls": [
                { "hosts": ["shop.example.com"], "secretName": "shop-tls" },
                { "hosts": ["api.example.com", "*.api.example.com"], "secretName": "api-tls" },
            ],
        })
    );
    let exact = find(&objects, "exact");
    let types: Vec<&Value> = exact["spec"]["rules"][0]["http"]["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .map(|p| &p["pathType"])
        .collect();
    assert_eq!(types, [&json!("Exact"), &json!("Prefix")]);
    assert_eq!(exact["spec"]["tls"], json!([{ "secretName": "shop-tls" }]));
}
