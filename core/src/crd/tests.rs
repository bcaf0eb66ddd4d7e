//! Reading the vendored CRDs (`tests/crds/`) and checking blocks against their schemas.

use super::*;
use crate::diag::Diagnostic;
use crate::model::{Block, BlockValue};
use crate::schema::check::check_object;
use crate::spanned::{Loc, Spanned};

const HTTPROUTES: &str =
    include_str!("../../../tests/crds/gateway.networking.k8s.io_httproutes.yaml");
const SERVICEMONITORS: &str =
    include_str!("../../../tests/crds/monitoring.coreos.com_servicemonitors.yaml");
const CERTIFICATES: &str = include_str!("../../../tests/crds/cert-manager.io_certificates.yaml");

fn all() -> Vec<Crd> {
    let mut crds = read(HTTPROUTES, "httproutes.yaml").expect("httproutes");
    crds.extend(read(SERVICEMONITORS, "servicemonitors.yaml").expect("servicemonitors"));
    crds.extend(read(CERTIFICATES, "certificates.yaml").expect("certificates"));
    crds
}

fn key(k: &str, at: u32) -> crate::spanned::Name {
    Spanned::new(k.to_string(), Loc(at))
}
fn s(v: &str, at: u32) -> BlockValue {
    BlockValue::Str(Spanned::new(v.to_string(), Loc(at)))
}
fn int(v: i64, at: u32) -> BlockValue {
    BlockValue::Int(Spanned::new(v, Loc(at)))
}
fn map(at: u32, entries: Vec<(crate::spanned::Name, BlockValue)>) -> BlockValue {
    BlockValue::Map(Block::new(Loc(at), entries))
}
fn list(at: u32, items: Vec<BlockValue>) -> BlockValue {
    BlockValue::List(Loc(at), items)
}

fn check(node: &Node, entries: Vec<(crate::spanned::Name, BlockValue)>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let block = Block::new(Loc(0), entries);
    check_object::<&Node>(&block, node, "resource web", &["metadata"], &mut out);
    out
}

#[test]
fn the_vendored_crds_read() {
    let crds = all();
    let names: Vec<String> = crds
        .iter()
        .flat_map(|c| c.versions.iter().map(move |v| full_name(c, v)))
        .collect();
    assert!(
        names.contains(&"gateway.networking.k8s.io/v1/HTTPRoute".to_string()),
        "{names:?}"
    );
    assert!(names.contains(&"monitoring.coreos.com/v1/ServiceMonitor".to_string()));
    assert!(names.contains(&"cert-manager.io/v1/Certificate".to_string()));
    assert!(crds.iter().all(|c| c.namespaced));
    let route = &crds[0];
    assert_eq!(route.name, "httproutes.gateway.networking.k8s.io");
    let spec = route.versions[0].schema.field("spec").expect("spec");
    assert_eq!(spec.node.name, "HTTPRoute.spec");
}

#[test]
fn kinds_are_found_by_full_or_short_name() {
    let crds = all();
    assert!(matches!(
        find(&crds, "monitoring.coreos.com/v1/ServiceMonitor"),
        Found::One(c, v) if c.kind == "ServiceMonitor" && v.name == "v1"
    ));
    // HTTPRoute is served as v1 and v1beta1: the kind alone is the storage version.
    assert!(matches!(
        find(&crds, "HTTPRoute"),
        Found::One(_, v) if v.name == "v1" && v.storage
    ));
    // Two CRDs of one kind: ambiguous.
    let mut other = crds[0].clone();
    other.group = "example.com".into();
    let two = [crds[0].clone(), other];
    match find(&two, "HTTPRoute") {
        Found::Ambiguous(list) => assert_eq!(
            list,
            [
                "gateway.networking.k8s.io/v1/HTTPRoute",
                "example.com/v1/HTTPRoute"
            ]
        ),
        other => panic!("{other:?}"),
    }
    match find(&crds, "ServiceMonitr") {
        Found::Unknown { closest, .. } => assert_eq!(
            closest.as_deref(),
            Some("monitoring.coreos.com/v1/ServiceMonitor")
        ),
        other => panic!("{other:?}"),
    }
    match find(&crds, "gateway.networking.k8s.io/v2/HTTPRoute") {
        Found::Unknown { closest, .. } => assert_eq!(
            closest.as_deref(),
            Some("gateway.networking.k8s.io/v1/HTTPRoute")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_route_is_checked_against_its_schema() {
    let crds = all();
    let Found::One(_, v1) = find(&crds, "gateway.networking.k8s.io/v1/HTTPRoute") else {
        panic!("no v1")
    };
    let backend = map(
        5,
        vec![(key("name", 6), s("api", 7)), (key("port", 8), int(80, 9))],
    );
    let rule = map(4, vec![(key("backendRefs", 10), list(11, vec![backend]))]);
    let parent = map(12, vec![(key("name", 13), s("public", 14))]);
    let spec = map(
        1,
        vec![
            (key("parentRefs", 2), list(3, vec![parent])),
            (key("rules", 15), list(16, vec![rule])),
        ],
    );
    let got = check(&v1.schema, vec![(key("spec", 0), spec)]);
    assert!(got.is_empty(), "{got:?}");

    // An unknown field, a wrong type, an enum value and a port out of range: each once.
    let backend = map(
        5,
        vec![
            (key("nmae", 6), s("api", 7)),
            (key("port", 8), int(70000, 9)),
            (key("kind", 17), int(1, 18)),
        ],
    );
    let matched = map(
        19,
        vec![(
            key("path", 20),
            map(21, vec![(key("type", 22), s("PathPrefx", 23))]),
        )],
    );
    let rule = map(
        4,
        vec![
            (key("backendRefs", 10), list(11, vec![backend])),
            (key("matches", 24), list(25, vec![matched])),
        ],
    );
    let spec = map(1, vec![(key("rules", 15), list(16, vec![rule]))]);
    let got = check(&v1.schema, vec![(key("spec", 0), spec)]);
    let codes: Vec<(Code, u32)> = got.iter().map(|d| (d.code, d.at.0)).collect();
    assert_eq!(
        codes,
        [
            (Code::UnknownApiField, 6),
            (Code::ApiValueLimit, 9),
            (Code::ApiFieldType, 18),
            // `name` is required, and `nmae` already says so: no second error.
            (Code::ApiEnumValue, 23),
        ],
        "{got:#?}"
    );
    assert_eq!(got[0].help, "did you mean `name`?");
    assert!(
        got[0]
            .message
            .starts_with("HTTPRoute.spec.rules.backendRefs has no field `nmae`"),
        "{}",
        got[0].message
    );
    assert!(
        got[3].help.starts_with("did you mean \"PathPrefix\"?"),
        "{}",
        got[3].help
    );

    // The root requires `spec`.
    let got = check(&v1.schema, vec![]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].code, Code::ApiFieldMissing);
    assert!(got[0].message.contains("`spec`"), "{}", got[0].message);
}

#[test]
fn preserve_unknown_fields_and_int_or_string() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": { "port": { "x-kubernetes-int-or-string": true } }
            },
            "free": { "x-kubernetes-preserve-unknown-fields": true },
            "closed": { "type": "object", "properties": { "a": { "type": "string" } } }
        }
    });
    let node = Node::from_schema(&schema, "Thing");
    let spec = map(
        1,
        vec![
            (key("port", 2), s("http", 3)),
            (key("anything", 4), int(1, 5)),
        ],
    );
    let free = map(6, vec![(key("x", 7), list(8, vec![]))]);
    let got = check(&node, vec![(key("spec", 0), spec), (key("free", 9), free)]);
    assert!(got.is_empty(), "{got:?}");
    let closed = map(10, vec![(key("b", 11), s("x", 12))]);
    let spec = map(
        1,
        vec![(key("port", 2), BlockValue::Bool(Spanned::new(true, Loc(3))))],
    );
    let got = check(
        &node,
        vec![(key("closed", 13), closed), (key("spec", 0), spec)],
    );
    let codes: Vec<Code> = got.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        [Code::UnknownApiField, Code::ApiFieldType],
        "{got:?}"
    );
    // The tree survives the model's JSON.
    let json = serde_json::to_string(&node).expect("json");
    assert_eq!(serde_json::from_str::<Node>(&json).expect("back"), node);
}

#[test]
fn not_a_crd_is_refused() {
    let e = read(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
        "x.yaml",
    )
    .expect_err("not a CRD");
    assert_eq!(e.code(), Code::CrdFile);
    assert!(
        e.to_string().contains("is not an apiextensions.k8s.io/v1"),
        "{e}"
    );
}
