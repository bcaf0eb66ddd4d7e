//! Generates `table.rs` from the vendored schema (`core/schema/k8s-1.33.json`); a test keeps them equal.
//!
//! Regenerate after changing the vendored file or [`ENUMS`]: `PICELI_UPDATE_DOCS=1 cargo test -p
//! piceli-core schema_table_is_current`.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// String fields whose allowed values the schema states in the field's description (the JSON has no
/// `enum` for them). The generator checks that every value listed here appears in that description.
const ENUMS: &[(&str, &str, &[&str])] = &[
    (
        "io.k8s.api.core.v1.Container",
        "imagePullPolicy",
        &["Always", "Never", "IfNotPresent"],
    ),
    (
        "io.k8s.api.core.v1.Container",
        "terminationMessagePolicy",
        &["File", "FallbackToLogsOnError"],
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "restartPolicy",
        &["Always", "OnFailure", "Never"],
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "dnsPolicy",
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
    ),
    (
        "io.k8s.api.core.v1.PodSpec",
        "preemptionPolicy",
        &["Never", "PreemptLowerPriority"],
    ),
    (
        "io.k8s.api.core.v1.Toleration",
        "operator",
        &["Exists", "Equal"],
    ),
    (
        "io.k8s.api.core.v1.Toleration",
        "effect",
        &["NoSchedule", "PreferNoSchedule", "NoExecute"],
    ),
    (
        "io.k8s.api.apps.v1.DeploymentStrategy",
        "type",
        &["Recreate", "RollingUpdate"],
    ),
    (
        "io.k8s.api.apps.v1.DaemonSetUpdateStrategy",
        "type",
        &["RollingUpdate", "OnDelete"],
    ),
    (
        "io.k8s.api.apps.v1.StatefulSetSpec",
        "podManagementPolicy",
        &["OrderedReady", "Parallel"],
    ),
    (
        "io.k8s.api.batch.v1.CronJobSpec",
        "concurrencyPolicy",
        &["Allow", "Forbid", "Replace"],
    ),
    (
        "io.k8s.api.batch.v1.JobSpec",
        "completionMode",
        &["NonIndexed", "Indexed"],
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "type",
        &["ExternalName", "ClusterIP", "NodePort", "LoadBalancer"],
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "sessionAffinity",
        &["ClientIP", "None"],
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "externalTrafficPolicy",
        &["Cluster", "Local"],
    ),
    (
        "io.k8s.api.core.v1.ServiceSpec",
        "internalTrafficPolicy",
        &["Cluster", "Local"],
    ),
    (
        "io.k8s.api.core.v1.ContainerPort",
        "protocol",
        &["TCP", "UDP", "SCTP"],
    ),
    (
        "io.k8s.api.core.v1.ServicePort",
        "protocol",
        &["TCP", "UDP", "SCTP"],
    ),
    (
        "io.k8s.api.networking.v1.HTTPIngressPath",
        "pathType",
        &["Exact", "Prefix", "ImplementationSpecific"],
    ),
    (
        "io.k8s.api.core.v1.TopologySpreadConstraint",
        "whenUnsatisfiable",
        &["DoNotSchedule", "ScheduleAnyway"],
    ),
    (
        "io.k8s.api.core.v1.TopologySpreadConstraint",
        "nodeAffinityPolicy",
        &["Honor", "Ignore"],
    ),
    (
        "io.k8s.api.core.v1.TopologySpreadConstraint",
        "nodeTaintsPolicy",
        &["Honor", "Ignore"],
    ),
    (
        "io.k8s.api.core.v1.NodeSelectorRequirement",
        "operator",
        &["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"],
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
        "operator",
        &["In", "NotIn", "Exists", "DoesNotExist"],
    ),
    (
        "io.k8s.api.core.v1.SeccompProfile",
        "type",
        &["Localhost", "RuntimeDefault", "Unconfined"],
    ),
    (
        "io.k8s.api.core.v1.AppArmorProfile",
        "type",
        &["Localhost", "RuntimeDefault", "Unconfined"],
    ),
    (
        "io.k8s.api.autoscaling.v2.MetricSpec",
        "type",
        &[
            "ContainerResource",
            "External",
            "Object",
            "Pods",
            "Resource",
        ],
    ),
    (
        "io.k8s.api.autoscaling.v2.MetricTarget",
        "type",
        &["Utilization", "Value", "AverageValue"],
    ),
];

/// Types that are scalar shapes rather than objects.
fn scalar_type(name: &str) -> Option<&'static str> {
    match name {
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => Some("Shape::Quantity"),
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Some("Shape::IntOrString"),
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => Some("Shape::String"),
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
        | "io.k8s.apimachinery.pkg.runtime.RawExtension" => Some("Shape::Any"),
        _ => None,
    }
}

fn const_name(short: &str) -> String {
    let mut out = String::new();
    for (i, c) in short.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

struct Gen<'a> {
    ids: BTreeMap<&'a str, usize>,
}

impl Gen<'_> {
    fn shape(&self, prop: &Value, owner: &str, field: &str) -> String {
        if let Some(r) = prop.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or(r);
            if let Some(s) = scalar_type(name) {
                return s.to_string();
            }
            let id = self
                .ids
                .get(name)
                .unwrap_or_else(|| panic!("unknown type {name}"));
            return format!("Shape::Object(TypeId({id}))");
        }
        let types: Vec<&str> = match prop.get("type") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if types.contains(&"array") {
            let item = self.shape(&prop["items"], owner, field);
            let kind = match prop.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("map") => {
                    let mut keys: Vec<String> = prop["x-kubernetes-list-map-keys"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default();
                    // The strategic-merge key goes first: it is the one an item must carry.
                    if let Some(k) = prop
                        .get("x-kubernetes-patch-merge-key")
                        .and_then(Value::as_str)
                        && let Some(i) = keys.iter().position(|x| x == k)
                    {
                        let k = keys.remove(i);
                        keys.insert(0, k);
                    }
                    let keys: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
                    format!("ListKind::Map(&[{}])", keys.join(", "))
                }
                Some("set") => "ListKind::Set".to_string(),
                _ => "ListKind::Atomic".to_string(),
            };
            return format!("Shape::List(&{item}, {kind})");
        }
        if types.contains(&"object") {
            return match prop.get("additionalProperties") {
                Some(v) => format!("Shape::Map(&{})", self.shape(v, owner, field)),
                None => "Shape::Any".to_string(),
            };
        }
        if types.contains(&"integer") {
            return "Shape::Integer".into();
        }
        if types.contains(&"number") {
            return "Shape::Number".into();
        }
        if types.contains(&"boolean") {
            return "Shape::Boolean".into();
        }
        if types.contains(&"string") {
            if let Some(values) = prop.get("enum").and_then(Value::as_array) {
                let v: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                return format!("Shape::Enum(&[{}])", v.join(", "));
            }
            if let Some((_, _, values)) = ENUMS.iter().find(|(t, f, _)| *t == owner && *f == field)
            {
                let description = prop
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                for v in *values {
                    assert!(
                        description.contains(v),
                        "{owner}.{field}: `{v}` is not in the schema's description"
                    );
                }
                let v: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
                return format!("Shape::Enum(&[{}])", v.join(", "));
            }
            return "Shape::String".into();
        }
        if prop.get("oneOf").is_some() || prop.as_object().is_some_and(|o| o.len() <= 1) {
            return "Shape::Any".into();
        }
        "Shape::Any".into()
    }
}

/// The text of `table.rs` for the vendored schema.
pub fn generate(schema: &Value) -> String {
    let defs = schema["$defs"].as_object().expect("$defs");
    let objects: Vec<&str> = defs
        .keys()
        .map(String::as_str)
        .filter(|k| scalar_type(k).is_none())
        .collect();
    let ids: BTreeMap<&str, usize> = objects.iter().enumerate().map(|(i, k)| (*k, i)).collect();
    let g = Gen { ids };
    for (t, f, _) in ENUMS {
        assert!(
            defs.get(*t).and_then(|d| d["properties"].get(*f)).is_some(),
            "ENUMS names {t}.{f}, which the schema does not have"
        );
    }
    let mut out = String::from(
        "//! GENERATED by `core/src/schema/generate.rs` from `core/schema/k8s-1.33.json`; do not edit.\n\
         //! Regenerate: `PICELI_UPDATE_DOCS=1 cargo test -p piceli-core schema_table_is_current`.\n\n\
         use super::{Field, ListKind, Shape, TypeDef, TypeId};\n\n",
    );
    for root in schema["roots"].as_array().expect("roots") {
        let name = root.as_str().expect("root name");
        let short = name.rsplit('.').next().unwrap_or(name);
        let _ = writeln!(
            out,
            "/// `{name}`.\npub const {}: TypeId = TypeId({});",
            const_name(short),
            g.ids[name]
        );
    }
    let meta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
    let _ = writeln!(
        out,
        "/// `{meta}`.\npub const OBJECT_META: TypeId = TypeId({});",
        g.ids[meta]
    );
    out.push_str("\n/// Every object type the blocks can reach, by [`TypeId`].\npub static TYPES: &[TypeDef] = &[\n");
    for name in &objects {
        let def = &defs[*name];
        let required: Vec<&str> = def
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    TypeDef {{\n        name: {name:?},\n        fields: &["
        );
        let mut props: Vec<(&String, &Value)> = def
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().collect())
            .unwrap_or_default();
        props.sort_by(|a, b| a.0.cmp(b.0));
        for (field, prop) in props {
            let shape = g.shape(prop, name, field);
            let req = required.contains(&field.as_str());
            let _ = writeln!(
                out,
                "            Field {{ name: {field:?}, shape: {shape}, required: {req} }},"
            );
        }
        out.push_str("        ],\n    },\n");
    }
    out.push_str("];\n");
    out
}

#[test]
fn schema_table_is_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(dir.join("schema/k8s-1.33.json")).expect("vendored schema");
    let schema: Value = serde_json::from_str(&text).expect("schema parses");
    let want = generate(&schema);
    let path = dir.join("src/schema/table.rs");
    if std::env::var_os("PICELI_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).expect("write table.rs");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "core/src/schema/table.rs is stale: run PICELI_UPDATE_DOCS=1 cargo test -p piceli-core schema_table_is_current"
    );
}
