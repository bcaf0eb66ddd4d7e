//! Ports without names stay without one (issue 29): `ports: [8080]` on a workload and `port: 80 => 8080` on
//! a Service render no `name`, as a manifest that gave none, and port forwards (`access`, checks) still
//! resolve them by number.

use piceli::runtime::access::spec::forwards;
use piceli::runtime::forward::port_target;
use piceli::runtime::render::{Options, render, to_yaml};
use serde_json::{Value, json};

piceli::app! {
    app plain;
    target local = local(namespace: "plain");

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: [8080, port(9053, protocol: "UDP")],
        ready: http_get("/", port: 8080),
    }
    service web -> web { port: 80 => 8080, access: forward(local: 18080, health: "/") }

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: [9000],
    }
    service api -> api { port: 9000 }
    check http(web, "/", expect: 200);
}

fn objects() -> Vec<Value> {
    render(&plain::app(), &Options::default())
        .expect("renders")
        .objects
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

#[test]
fn ports_without_names_render_without_one() {
    let objects = objects();
    let web = find(&objects, "Deployment", "web");
    assert_eq!(
        web["spec"]["template"]["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 8080}, {"containerPort": 9053, "protocol": "UDP"}])
    );
    assert_eq!(
        find(&objects, "Service", "web")["spec"]["ports"],
        json!([{"port": 80, "targetPort": 8080}])
    );
    assert_eq!(
        find(&objects, "Service", "api")["spec"]["ports"],
        json!([{"port": 9000}])
    );
    insta::assert_snapshot!("unnamed_ports", to_yaml(&objects).expect("yaml"));
}

#[test]
fn forwards_resolve_unnamed_ports_by_number() {
    let app = plain::app();
    // `access` (and checks, which forward to the Service) reach the container port the Service targets.
    let spec = forwards(&app, &[], &[]).expect("forwards");
    assert_eq!(
        (
            spec[0].name.as_str(),
            spec[0].service_port,
            spec[0].local_port
        ),
        ("web", 80, 18080)
    );
    let to = |target: &str| port_target(&app, target, None).expect("resolves");
    assert_eq!((to("web").workload.as_str(), to("web").port), ("web", 8080));
    assert_eq!((to("api").workload.as_str(), to("api").port), ("api", 9000));
}
