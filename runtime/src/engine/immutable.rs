//! The built-in fields Kubernetes refuses to change in place, as a table with the 1.33 validation each
//! rule comes from, and the comparison that tells whether applying a desired object would change one of
//! them on its live object.
//!
//! The comparison asks what a server-side apply would do to the field: a value the app sets that differs
//! from the live one changes it, and so does a value the app set before (its managed fields, read back
//! with [`super::owned::applied`]) and no longer sets. What the server defaulted or another manager added
//! is never a change, so a plan does not propose replacing an object that would in fact be left as it is.
//! What this table misses, the server's dry run still refuses: planning turns such a refusal into the
//! same decision ([`from_server_message`]).

use piceli_core::rules::parse_quantity;
use serde_json::{Map, Value};

/// When a rule's field may not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Never once the object exists.
    Always,
    /// Once set: a value the live object has may not change to another value (the app may leave it
    /// out: the server keeps it). For a list, its first (primary) element.
    OnceSet,
    /// When the live object has `immutable: true` (ConfigMap, Secret).
    MarkedImmutable,
    /// When the live CustomResourceDefinition is `Established`.
    Established,
    /// It may only grow (a PersistentVolumeClaim's storage request).
    NoShrink,
}

/// One immutable field of a built-in kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The API group (`""` for the core group).
    pub group: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The field, as a JSON pointer (`/spec/selector`).
    pub path: &'static str,
    /// Fields under `path` that may change (JSON pointers).
    pub except: &'static [&'static str],
    /// When it may not change.
    pub when: When,
    /// Where Kubernetes (1.33) refuses the change.
    pub source: &'static str,
}

const fn rule(
    group: &'static str,
    kind: &'static str,
    path: &'static str,
    when: When,
    source: &'static str,
) -> Rule {
    Rule {
        group,
        kind,
        path,
        except: &[],
        when,
        source,
    }
}

const APPS_STS: &str = "k8s.io/kubernetes pkg/apis/apps/validation ValidateStatefulSetUpdate";
const JOB: &str = "k8s.io/kubernetes pkg/apis/batch/validation ValidateJobSpecUpdate";
const SERVICE: &str = "k8s.io/kubernetes pkg/apis/core/validation ValidateServiceUpdate (validateServiceClusterIPsRelatedFields)";
const PVC: &str = "k8s.io/kubernetes pkg/apis/core/validation ValidatePersistentVolumeClaimUpdate";
const CONFIGMAP: &str = "k8s.io/kubernetes pkg/apis/core/validation ValidateConfigMapUpdate";
const SECRET: &str = "k8s.io/kubernetes pkg/apis/core/validation ValidateSecretUpdate";
const BINDING: &str = "k8s.io/kubernetes pkg/apis/rbac/validation ValidateRoleBindingUpdate / ValidateClusterRoleBindingUpdate";
const STORAGE_CLASS: &str =
    "k8s.io/kubernetes pkg/apis/storage/validation ValidateStorageClassUpdate";
const CRD: &str = "k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation ValidateCustomResourceDefinitionSpecUpdate";

/// The built-in immutable fields (Kubernetes 1.33).
pub const RULES: &[Rule] = &[
    rule(
        "apps",
        "Deployment",
        "/spec/selector",
        When::Always,
        "k8s.io/kubernetes pkg/registry/apps/deployment/strategy.go ValidateUpdate (apps/v1)",
    ),
    rule(
        "apps",
        "ReplicaSet",
        "/spec/selector",
        When::Always,
        "k8s.io/kubernetes pkg/registry/apps/replicaset/strategy.go ValidateUpdate (apps/v1)",
    ),
    rule(
        "apps",
        "DaemonSet",
        "/spec/selector",
        When::Always,
        "k8s.io/kubernetes pkg/registry/apps/daemonset/strategy.go ValidateUpdate (apps/v1)",
    ),
    rule(
        "apps",
        "StatefulSet",
        "/spec/selector",
        When::Always,
        APPS_STS,
    ),
    rule(
        "apps",
        "StatefulSet",
        "/spec/volumeClaimTemplates",
        When::Always,
        APPS_STS,
    ),
    rule(
        "apps",
        "StatefulSet",
        "/spec/serviceName",
        When::Always,
        APPS_STS,
    ),
    rule(
        "apps",
        "StatefulSet",
        "/spec/podManagementPolicy",
        When::Always,
        APPS_STS,
    ),
    rule("batch", "Job", "/spec/template", When::Always, JOB),
    rule("batch", "Job", "/spec/selector", When::Always, JOB),
    rule("batch", "Job", "/spec/completions", When::Always, JOB),
    rule("batch", "Job", "/spec/completionMode", When::Always, JOB),
    rule("batch", "Job", "/spec/podFailurePolicy", When::Always, JOB),
    rule(
        "batch",
        "Job",
        "/spec/backoffLimitPerIndex",
        When::Always,
        JOB,
    ),
    rule("batch", "Job", "/spec/managedBy", When::Always, JOB),
    rule("batch", "Job", "/spec/successPolicy", When::Always, JOB),
    rule("", "Service", "/spec/clusterIP", When::OnceSet, SERVICE),
    rule("", "Service", "/spec/clusterIPs", When::OnceSet, SERVICE),
    rule("", "Service", "/spec/ipFamilies", When::OnceSet, SERVICE),
    Rule {
        group: "",
        kind: "PersistentVolumeClaim",
        path: "/spec",
        except: &[
            "/spec/resources/requests/storage",
            "/spec/volumeAttributesClassName",
        ],
        when: When::Always,
        source: PVC,
    },
    rule(
        "",
        "PersistentVolumeClaim",
        "/spec/resources/requests/storage",
        When::NoShrink,
        PVC,
    ),
    rule("", "ConfigMap", "/data", When::MarkedImmutable, CONFIGMAP),
    rule(
        "",
        "ConfigMap",
        "/binaryData",
        When::MarkedImmutable,
        CONFIGMAP,
    ),
    rule(
        "",
        "ConfigMap",
        "/immutable",
        When::MarkedImmutable,
        CONFIGMAP,
    ),
    rule("", "Secret", "/data", When::MarkedImmutable, SECRET),
    rule("", "Secret", "/immutable", When::MarkedImmutable, SECRET),
    rule("", "Secret", "/type", When::OnceSet, SECRET),
    rule(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        "/roleRef",
        When::Always,
        BINDING,
    ),
    rule(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        "/roleRef",
        When::Always,
        BINDING,
    ),
    rule(
        "storage.k8s.io",
        "StorageClass",
        "/provisioner",
        When::Always,
        STORAGE_CLASS,
    ),
    rule(
        "storage.k8s.io",
        "StorageClass",
        "/parameters",
        When::Always,
        STORAGE_CLASS,
    ),
    rule(
        "storage.k8s.io",
        "StorageClass",
        "/reclaimPolicy",
        When::Always,
        STORAGE_CLASS,
    ),
    rule(
        "storage.k8s.io",
        "StorageClass",
        "/volumeBindingMode",
        When::Always,
        STORAGE_CLASS,
    ),
    rule(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "/spec/group",
        When::Always,
        CRD,
    ),
    rule(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "/spec/names/plural",
        When::Always,
        CRD,
    ),
    rule(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "/spec/scope",
        When::Established,
        CRD,
    ),
    rule(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        "/spec/names/kind",
        When::Established,
        CRD,
    ),
];

/// Kinds that hold data, or everything in them: never deleted to be replaced, whatever changes.
pub const NEVER_REPLACED: &[&str] = &[
    "PersistentVolumeClaim",
    "PersistentVolume",
    "Namespace",
    "CustomResourceDefinition",
];

/// What deleting an object of a never-replaced kind would lose, in words.
pub fn data_lost(kind: &str) -> &'static str {
    match kind {
        "PersistentVolumeClaim" => {
            "deleting a PersistentVolumeClaim releases its volume, and with the default reclaim policy \
             (Delete) its data is gone"
        }
        "PersistentVolume" => "deleting a PersistentVolume can delete the storage behind it",
        "Namespace" => "deleting a Namespace deletes everything in it",
        "CustomResourceDefinition" => {
            "deleting a CustomResourceDefinition deletes every custom resource of it"
        }
        _ => "deleting it loses what it holds",
    }
}

/// An immutable field a desired object changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The field, dotted (`spec.volumeClaimTemplates`).
    pub field: String,
    /// The rule's source.
    pub source: &'static str,
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → ``).
fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The paths the table's rules for the kind of `object` compare (JSON pointers).
pub fn paths(object: &Value) -> Vec<&'static str> {
    let kind = object["kind"].as_str().unwrap_or_default();
    let group = group_of(object["apiVersion"].as_str().unwrap_or_default());
    RULES
        .iter()
        .filter(|r| r.kind == kind && r.group == group)
        .map(|r| r.path)
        .collect()
}

/// Whether the table has rules for the kind of `object` (a cheap test before any comparison).
pub fn has_rules(object: &Value) -> bool {
    let kind = object["kind"].as_str().unwrap_or_default();
    let group = group_of(object["apiVersion"].as_str().unwrap_or_default());
    RULES.iter().any(|r| r.kind == kind && r.group == group)
}

/// The immutable fields that applying `desired` would change on `live`; `applied` is what this app last
/// applied to it (see the module's comparison). A rule whose condition does not hold (a ConfigMap not
/// marked immutable) finds nothing.
pub fn changed(desired: &Value, live: &Value, applied: &Value) -> Vec<Found> {
    let kind = desired["kind"].as_str().unwrap_or_default();
    let group = group_of(desired["apiVersion"].as_str().unwrap_or_default());
    if live["kind"].as_str() != Some(kind) {
        return Vec::new();
    }
    let desired = with_string_data(desired);
    let mut out: Vec<Found> = Vec::new();
    for r in RULES.iter().filter(|r| r.kind == kind && r.group == group) {
        let (d, l, a) = (
            desired.pointer(r.path),
            live.pointer(r.path),
            applied.pointer(r.path),
        );
        let hit = match r.when {
            When::Always => changes_except(d, l, a, r.path, r.except),
            When::OnceSet => changes_once_set(d, l),
            When::MarkedImmutable => live["immutable"] == true && changes(d, l, a),
            When::Established => established(live) && changes(d, l, a),
            When::NoShrink => shrinks(d, l),
        };
        if hit && !out.iter().any(|f| f.field == dotted(r.path)) {
            out.push(Found {
                field: dotted(r.path),
                source: r.source,
            });
        }
    }
    out
}

/// `/spec/volumeClaimTemplates` → `spec.volumeClaimTemplates`.
pub fn dotted(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// A Secret's `stringData` as the `data` the server stores it as (base64), for the comparison; values
/// still to generate are left out (the live Secret keeps its own).
fn with_string_data(desired: &Value) -> std::borrow::Cow<'_, Value> {
    use base64::Engine as _;
    let generated = |m: &Map<String, Value>| m.values().any(|v| v == super::secrets::TO_GENERATE);
    let has_string_data = desired.get("stringData").is_some_and(Value::is_object);
    let to_generate = desired["data"].as_object().is_some_and(generated);
    if desired["kind"] != "Secret" || !(has_string_data || to_generate) {
        return std::borrow::Cow::Borrowed(desired);
    }
    let mut out = desired.clone();
    let strings = out
        .as_object_mut()
        .and_then(|m| m.remove("stringData"))
        .and_then(|s| s.as_object().cloned())
        .unwrap_or_default();
    if let Some(map) = out.as_object_mut() {
        let data = map
            .entry("data")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(data) = data.as_object_mut() {
            data.retain(|_, v| v != super::secrets::TO_GENERATE);
            for (k, v) in strings {
                if let Some(s) = v.as_str() {
                    data.insert(
                        k,
                        Value::String(base64::engine::general_purpose::STANDARD.encode(s)),
                    );
                }
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

fn established(live: &Value) -> bool {
    live["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True")
}

/// [`changes`] without the fields `except` names (pointers under `base`).
fn changes_except(
    d: Option<&Value>,
    l: Option<&Value>,
    a: Option<&Value>,
    base: &str,
    except: &[&str],
) -> bool {
    if except.is_empty() {
        return changes(d, l, a);
    }
    let strip = |v: Option<&Value>| {
        v.map(|v| {
            let mut v = v.clone();
            for e in except {
                if let Some(rest) = e.strip_prefix(base) {
                    remove_pointer(&mut v, rest);
                }
            }
            v
        })
    };
    changes(strip(d).as_ref(), strip(l).as_ref(), strip(a).as_ref())
}

fn remove_pointer(v: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let parent = if parent.is_empty() {
        Some(v)
    } else {
        v.pointer_mut(parent)
    };
    if let Some(map) = parent.and_then(Value::as_object_mut) {
        map.remove(last);
    }
}

/// Whether a server-side apply of the desired value `d` would change the live value `l`, when the app
/// last applied `a` there: a value set that differs, or one the app set before and no longer sets.
pub fn changes(d: Option<&Value>, l: Option<&Value>, a: Option<&Value>) -> bool {
    let l = l.filter(|l| !l.is_null());
    match (d, l) {
        (None, None) => false,
        // The app stops setting what it set: the apply removes it.
        (None, Some(_)) => a.is_some(),
        (Some(Value::Null), l) => l.is_some(),
        (Some(_), None) => true,
        (Some(d), Some(l)) => differs(d, l, a),
    }
}

fn differs(d: &Value, l: &Value, a: Option<&Value>) -> bool {
    // What the app applied, equal to the whole live value below here: an atomic field (its managed fields
    // own it whole, server defaults included) or one the app alone fills. A value the desired one leaves
    // out may then be a default as well as the app's: not known to be removed (the dry run still tells).
    let a = a.filter(|a| *a != l);
    match (d, l) {
        (Value::Object(dm), Value::Object(lm)) => {
            let am = a.and_then(Value::as_object);
            dm.iter()
                .any(|(k, dv)| changes(Some(dv), lm.get(k), am.and_then(|am| am.get(k))))
                || am.is_some_and(|am| {
                    am.iter()
                        .any(|(k, av)| !dm.contains_key(k) && changes(None, lm.get(k), Some(av)))
                })
        }
        (Value::Array(da), Value::Array(la)) => {
            let aa = a.and_then(Value::as_array);
            let name = |v: &Value| {
                v.get("name")
                    .or_else(|| v.pointer("/metadata/name"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let named = !da.is_empty() && da.iter().all(|v| name(v).is_some());
            if named {
                // Elements known by name (containers, volume claim templates, ports): another manager's
                // element is not the app's change; one the app applied and dropped is.
                let find = |list: &[Value], n: &str| {
                    list.iter().find(|v| name(v).as_deref() == Some(n)).cloned()
                };
                let dropped = aa.is_some_and(|aa| {
                    aa.iter().filter_map(name).any(|n| {
                        find(da, &n).is_none() && la.iter().any(|v| name(v).as_deref() == Some(&n))
                    })
                });
                dropped
                    || da.iter().any(|dv| {
                        let n = name(dv).unwrap_or_default();
                        match find(la, &n) {
                            None => true,
                            Some(lv) => {
                                let av = aa.and_then(|aa| find(aa, &n));
                                differs(dv, &lv, av.as_ref())
                            }
                        }
                    })
            } else {
                let aligned = aa.filter(|aa| aa.len() == la.len());
                da.len() != la.len()
                    || da
                        .iter()
                        .zip(la)
                        .enumerate()
                        .any(|(i, (dv, lv))| differs(dv, lv, aligned.and_then(|aa| aa.get(i))))
            }
        }
        (Value::String(ds), Value::String(ls)) => ds != ls && !same_quantity(ds, ls),
        (Value::Number(dn), Value::Number(ln)) => dn.as_f64() != ln.as_f64(),
        _ => d != l,
    }
}

/// `1Gi` and `1024Mi`: the same quantity, written two ways (the server keeps a canonical form).
fn same_quantity(a: &str, b: &str) -> bool {
    let starts_numeric = |s: &str| s.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    starts_numeric(a)
        && starts_numeric(b)
        && matches!((parse_quantity(a), parse_quantity(b)), (Ok(x), Ok(y)) if x == y)
}

/// A set value changed to another set value (for a list, its first element).
fn changes_once_set(d: Option<&Value>, l: Option<&Value>) -> bool {
    let first = |v: Option<&Value>| -> Option<Value> {
        match v? {
            Value::Array(items) => items.first().cloned(),
            Value::String(s) if s.is_empty() => None,
            other => Some(other.clone()),
        }
    };
    match (first(d), first(l)) {
        (Some(d), Some(l)) => d != l,
        _ => false,
    }
}

/// A quantity made smaller.
fn shrinks(d: Option<&Value>, l: Option<&Value>) -> bool {
    let q = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .and_then(|s| parse_quantity(s).ok())
    };
    matches!((q(d), q(l)), (Some(d), Some(l)) if d < l)
}

/// What a server says when it refuses to change a field in place.
const IMMUTABLE_PHRASES: &[&str] = &[
    "field is immutable",
    "may not change once set",
    "updates to statefulset spec for fields other than",
    "is immutable after creation",
    "cannot change roleRef",
    "updates to parameters are forbidden",
    "updates to provisioner are forbidden",
    "updates to reclaimPolicy are forbidden",
    "updates to volumeBindingMode are forbidden",
    "pod updates may not change fields other than",
];

/// The fields a server's refusal names as immutable, or `None` when it refuses for another reason:
/// `spec.selector: Invalid value: …: field is immutable`, a StatefulSet's `spec: Forbidden: updates to
/// statefulset spec for fields other than …`, a Service's `spec.clusterIPs[0]: Invalid value: …: may not
/// change once set`, a PersistentVolumeClaim's `spec: Forbidden: spec is immutable after creation …`.
pub fn from_server_message(message: &str) -> Option<Vec<String>> {
    let markers = [": Invalid value: ", ": Forbidden: "];
    // Every `FIELD: Invalid value: …` / `FIELD: Forbidden: …` clause: where its marker starts and ends.
    let mut at: Vec<(usize, usize)> = markers
        .iter()
        .flat_map(|m| message.match_indices(m).map(|(i, m)| (i, i + m.len())))
        .collect();
    at.sort_unstable();
    let mut fields: Vec<String> = Vec::new();
    let mut any = false;
    for (n, &(start, end)) in at.iter().enumerate() {
        let tail_end = at.get(n + 1).map_or(message.len(), |next| next.0);
        let tail = &message[end..tail_end];
        if !IMMUTABLE_PHRASES.iter().any(|p| tail.contains(p)) {
            continue;
        }
        any = true;
        let field = message[..start]
            .rsplit([' ', ','])
            .next()
            .unwrap_or_default();
        let field = field.trim_start_matches('[');
        let field = field.split('[').next().unwrap_or_default();
        if !field.is_empty() && !fields.iter().any(|f| f == field) {
            fields.push(field.to_string());
        }
    }
    if !any && IMMUTABLE_PHRASES.iter().any(|p| message.contains(p)) {
        any = true;
    }
    any.then_some(fields)
}

#[cfg(test)]
mod tests;
