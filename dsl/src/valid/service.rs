//! Lowering Services, each read by its key table: one to a workload (`service NAME -> WORKLOAD`), and one of
//! no workload (`service NAME { spec: … }`), whose table is the first's without the keys that route to a
//! workload's container ports.

use super::blocks::SERVICE_OWNED;
use super::keys::{self, Key, Reading, annotations, labels};
use super::{Fields, Lower};
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

/// `service NAME -> WORKLOAD { … }`: its keys and their readers (`node_ports:` after the ports it names).
pub const SERVICE: &[Key<Reading<Service>>] = &[
    Key::new(
        "port",
        "one port: `80 => http` (to the container port named `http`, and named `http`), `8080 => 80` or `80` (the same number), without a name",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v
                && let Some(p) = service_port(lw, v, None, &r.owner)
            {
                r.item.ports.push(p);
            }
        }),
    ),
    Key::new(
        "ports",
        "named ports: `{ http: 80 => http, metrics: 9090 => metrics }`",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            let mut pf = Fields::of(lw, Some(v), format!("{} › {key}", r.owner));
            for (k, val) in pf.all() {
                if let Some(p) = service_port(lw, val, Some(k), &r.owner) {
                    r.item.ports.push(p);
                }
            }
        }),
    ),
    Key::new(
        "node_ports",
        "fixed node ports by Service port name: `{ http: 30080 }` (node_port, load_balancer)",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            let owner = &r.owner;
            let mut nf = Fields::of(lw, Some(v), format!("{owner} › {key}"));
            for (k, val) in nf.all() {
                let n = lw.int(val, format!("{owner} › node_port {}", k.text));
                match r.item.ports.iter_mut().find(|p| p.name.v == k.text) {
                    Some(p) => p.node_port = n,
                    None => lw.fail(
                        Code::UnknownServicePort,
                        k.sp,
                        format!("{owner} has no port named `{}`", k.text),
                        "name one of the Service's ports",
                    ),
                }
            }
        }),
    ),
    Key::new(
        "type",
        "`cluster_ip` (default), `headless`, `node_port` or `load_balancer`",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v
                && let Some(t) = service_type(lw, v, &format!("{} › {key}", r.owner))
            {
                r.item.service_type = t;
            }
        }),
    ),
    Key::new(
        "access",
        "`forward(local: 18080, port: http, health: \"/\")`: a loopback port forward for `access` and checks",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.access = access(lw, v, &r.owner);
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of ServiceSpec fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::SERVICE_SPEC;
                r.item.spec = lw.block_of(v, f, key, root, SERVICE_OWNED, &r.owner);
            }
        }),
    ),
];

/// `service NAME { spec: { … } }`: a Service of no workload (ExternalName, its own selector, or none with
/// Endpoints made by hand), rendered as written.
pub const SERVICE_OF_NO_WORKLOAD: &[Key<Reading<Service>>] = &[
    labels(),
    annotations(),
    Key::new(
        "spec",
        "the whole ServiceSpec as written: `type: \"ExternalName\"` with `externalName`, or `ports` (and a `selector` of the pods' own labels)",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                r.item.spec = lw.block_of(v, f, key, schema::SERVICE_SPEC, &[], &r.owner);
            }
        }),
    ),
];

pub(super) fn service(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("service {}", name.v);
    if item.arrow.is_none() {
        return service_of_no_workload(lw, item, name, owner);
    }
    let Some(selects) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Service>::new(owner);
    keys::read(lw, &mut f, SERVICE, &mut r);
    f.finish_keys(lw, SERVICE);
    lw.app.services.push(Service {
        name,
        selects,
        labels: r.labels,
        annotations: r.annotations,
        ..r.item
    });
}

/// `service NAME { labels, annotations, spec: { … } }`: a Service of no workload (ExternalName, a selector
/// of the pods' own labels, or none), rendered as written; its spec is checked in piceli-core (PCL0088).
fn service_of_no_workload(lw: &mut Lower, item: &Item, name: Spanned<String>, owner: String) {
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    // The keys that route to a workload's container ports: a Service without `-> WORKLOAD` has none.
    let routing: Vec<&str> = SERVICE
        .iter()
        .map(|k| k.name)
        .filter(|k| keys::find(SERVICE_OF_NO_WORKLOAD, k).is_none() && f.key(k).is_some())
        .collect();
    if let Some(first) = routing.first() {
        // One error at the name (the item is left out: no follow-on errors about its ports).
        lw.fail(
            Code::MissingKey,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            format!("`{owner}` does not say which workload it is for"),
            format!(
                "`{first}:` routes to a workload's container ports: write `service NAME -> WORKLOAD {{ … }}`; a Service of no workload gives its ports in `spec: {{ ports: [ … ] }}`"
            ),
        );
        for k in &routing {
            f.take(k);
        }
    }
    let mut r = Reading::<Service>::new(owner);
    keys::read(lw, &mut f, SERVICE_OF_NO_WORKLOAD, &mut r);
    f.finish_keys(lw, SERVICE_OF_NO_WORKLOAD);
    if routing.is_empty() {
        lw.app.services.push(Service {
            name,
            labels: r.labels,
            annotations: r.annotations,
            ..r.item
        });
    }
}

/// `cluster_ip`, `node_port`, `load_balancer` or `headless`.
fn service_type(lw: &mut Lower, v: &Value, desc: &str) -> Option<ServiceType> {
    const TYPES: &[&str] = &["cluster_ip", "node_port", "load_balancer", "headless"];
    let t = lw.name(v, desc)?;
    Some(match t.v.as_str() {
        "cluster_ip" => ServiceType::ClusterIp,
        "node_port" => ServiceType::NodePort,
        "load_balancer" => ServiceType::LoadBalancer,
        "headless" => ServiceType::Headless,
        other => {
            let help = match piceli_core::rules::did_you_mean(other, TYPES.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "use cluster_ip, node_port, load_balancer or headless".into(),
            };
            lw.fail(
                Code::InvalidValue,
                v.sp(),
                format!("`{other}` is not a Service type"),
                help,
            );
            ServiceType::ClusterIp
        }
    })
}

/// `80 => http`, `80 => 8080`, or `80` (same number on the pod).
fn service_port(
    lw: &mut Lower,
    v: &Value,
    key: Option<&crate::ast::NameTok>,
    owner: &str,
) -> Option<ServicePort> {
    let desc = format!("{owner} › port");
    let (port_v, target) = match v {
        Value::Arrow(a, b) => (a.as_ref(), lw.port_ref(b, &format!("{desc} › target"))),
        other => (other, None),
    };
    let port = lw.int(port_v, desc.clone())?;
    // `port: 80 => http` is named after its target; `port: 80 => 8080` and `port: 80` have no name (a
    // Service of one port needs none), as a manifest that gave none.
    let name_text = match (key, &target) {
        (Some(k), _) => k.text.clone(),
        (None, Some(PortRef::Name(n))) => n.v.clone(),
        _ => String::new(),
    };
    let name_sp = key.map(|k| k.sp).unwrap_or(v.sp());
    let name = Spanned::new(name_text, lw.loc(name_sp, format!("{desc} name")));
    Some(ServicePort {
        name,
        port,
        target,
        node_port: None,
    })
}

fn access(lw: &mut Lower, v: &Value, owner: &str) -> Option<Access> {
    let call = lw.call(v, &["forward"], "forward(local: 18080, health: \"/\")")?;
    let desc = format!("{owner} › access");
    let mut nf = lw.named(call, &desc);
    let local = match nf.take("local") {
        Some(l) => lw.int(l, format!("{desc} › local")),
        None => {
            lw.fail(
                Code::MissingKey,
                call.sp,
                "a forward needs its local port",
                "write `forward(local: 18080)`",
            );
            None
        }
    };
    let port = nf
        .take("port")
        .and_then(|p| lw.name(p, format!("{desc} › port")));
    let health = nf
        .take("health")
        .and_then(|h| lw.str(h, format!("{desc} › health")));
    nf.finish(lw, &["local", "port", "health"]);
    lw.max_args(call, 0, "forward(local: 18080)");
    Some(Access {
        local_port: local?,
        port,
        health,
    })
}
