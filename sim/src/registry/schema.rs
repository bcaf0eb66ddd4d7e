//! Schema lookups over the embedded Kubernetes 1.33 definitions and CRD schemas: how each field
//! merges (list types and keys, atomic maps) and which fields exist.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::registry::{ResourceType, SchemaSource};

static RAW: &str = include_str!("../../schema/k8s-1.33-schemas.json");
static DESCRIPTIONS_GZ: &[u8] = include_bytes!("../../schema/k8s-1.33-descriptions.json.gz");
static DESCRIPTIONS: OnceLock<Map<String, Value>> = OnceLock::new();
static DEFS: OnceLock<Map<String, Value>> = OnceLock::new();
static EMPTY: OnceLock<Value> = OnceLock::new();

/// Every built-in definition, keyed like `io.k8s.api.apps.v1.Deployment`.
pub fn definitions() -> &'static Map<String, Value> {
    DEFS.get_or_init(|| match serde_json::from_str::<Value>(RAW) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    })
}

/// Every built-in definition's description and its properties' (`{"": …, "properties": {…}}`),
/// decompressed on first use: what the OpenAPI documents carry for `kubectl explain`.
pub fn descriptions() -> &'static Map<String, Value> {
    DESCRIPTIONS.get_or_init(|| {
        use std::io::Read;
        let mut text = String::new();
        let read = flate2::read::GzDecoder::new(DESCRIPTIONS_GZ).read_to_string(&mut text);
        match read
            .ok()
            .and_then(|_| serde_json::from_str::<Value>(&text).ok())
        {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        }
    })
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// How a list merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced as a whole.
    Atomic,
    /// Elements are scalars identified by value.
    Set,
    /// Elements are objects identified by these keys.
    Map(Vec<String>),
}

/// A position in a schema; `None` means free-form (any value, fields unknown, lists atomic).
#[derive(Debug, Clone, Copy)]
pub struct Node<'a> {
    schema: Option<&'a Value>,
    root: bool,
    /// Under a custom resource's schema: decoded as unstructured JSON, where every object is a map
    /// (no Go structs nested by value).
    unstructured: bool,
    /// The definition this node's schema came from (`io.k8s.api.core.v1.Container`), when known.
    def: Option<&'a str>,
}

/// The definition a schema refers to (`$ref`, or the one `allOf` entry's).
fn ref_name(v: &Value) -> Option<&str> {
    let r = v.get("$ref").or_else(|| match v.get("allOf") {
        Some(Value::Array(all)) if all.len() == 1 => all[0].get("$ref"),
        _ => None,
    })?;
    r.as_str()?.rsplit('/').next()
}

fn resolve(v: &Value) -> &Value {
    let mut cur = v;
    for _ in 0..16 {
        if let Some(r) = cur.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or("");
            match definitions().get(name) {
                Some(d) => cur = d,
                None => return EMPTY.get_or_init(|| Value::Object(Map::new())),
            }
        } else if let Some(Value::Array(all)) = cur.get("allOf") {
            match all.first() {
                Some(first) if all.len() == 1 => cur = first,
                _ => return cur,
            }
        } else {
            return cur;
        }
    }
    cur
}

impl<'a> Node<'a> {
    /// The root of a type's schema.
    pub fn root(rt: &'a ResourceType) -> Node<'a> {
        let schema = match &rt.schema {
            SchemaSource::Builtin(name) => definitions().get(*name),
            SchemaSource::Crd(v) if v.is_object() => Some(v),
            SchemaSource::Crd(_) => None,
        };
        Node {
            schema: schema.map(resolve),
            root: true,
            unstructured: matches!(rt.schema, SchemaSource::Crd(_)),
            def: match &rt.schema {
                SchemaSource::Builtin(name) => Some(name),
                SchemaSource::Crd(_) => None,
            },
        }
    }

    /// A free-form node.
    pub fn free() -> Node<'static> {
        Node {
            schema: None,
            root: false,
            unstructured: false,
            def: None,
        }
    }

    fn of(v: &'a Value, unstructured: bool) -> Node<'a> {
        Node {
            schema: Some(resolve(v)),
            root: false,
            unstructured,
            def: ref_name(v),
        }
    }

    /// Whether any value is allowed here and its fields are not known.
    pub fn is_free(&self) -> bool {
        match self.schema {
            None => true,
            Some(s) => {
                s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
                    || (s.get("properties").is_none()
                        && s.get("additionalProperties").is_none()
                        && s.get("items").is_none()
                        && s.get("type")
                            .and_then(Value::as_str)
                            .is_none_or(|t| t == "object"))
            }
        }
    }

    /// Whether this is a struct (an object with declared properties), whose own path field
    /// ownership never records: structured-merge-diff tracks maps and list elements as members, and
    /// a struct only through its fields.
    pub fn is_struct(&self) -> bool {
        !self.unstructured
            && self
                .schema
                .is_some_and(|s| s.get("properties").is_some_and(Value::is_object))
    }

    /// The schema of field `name` of an object; `None` if the field is not declared.
    pub fn field(&self, name: &str) -> Option<Node<'a>> {
        if self.root && (name == "apiVersion" || name == "kind") {
            return Some(Node {
                schema: None,
                root: false,
                unstructured: self.unstructured,
                def: None,
            });
        }
        if self.root && name == "metadata" {
            return Some(Node {
                schema: definitions().get(OBJECT_META).map(resolve),
                root: false,
                unstructured: false,
                def: Some(OBJECT_META),
            });
        }
        let Some(s) = self.schema else {
            return Some(Node::free());
        };
        if let Some(p) = s.get("properties").and_then(|p| p.get(name)) {
            return Some(Node::of(p, self.unstructured));
        }
        match s.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(Node {
                schema: None,
                root: false,
                unstructured: self.unstructured,
                def: None,
            }),
            Some(ap) => Some(Node::of(ap, self.unstructured)),
            None if self.is_free() => Some(Node {
                schema: None,
                root: false,
                unstructured: self.unstructured,
                def: None,
            }),
            None => None,
        }
    }

    /// The schema of field `name`, or a free-form node when it is not declared.
    pub fn field_or_free(&self, name: &str) -> Node<'a> {
        self.field(name).unwrap_or(Node {
            schema: None,
            root: false,
            unstructured: self.unstructured,
            def: None,
        })
    }

    /// The schema of a list's elements.
    pub fn items(&self) -> Node<'a> {
        match self.schema.and_then(|s| s.get("items")) {
            Some(i) => Node::of(i, self.unstructured),
            None => Node {
                schema: None,
                root: false,
                unstructured: self.unstructured,
                def: None,
            },
        }
    }

    fn ext(&self, key: &str) -> Option<&'a Value> {
        self.schema.and_then(|s| s.get(key))
    }

    /// How the list at this node merges under server-side apply.
    pub fn list_kind(&self) -> ListKind {
        let keys = || -> Vec<String> {
            match self.ext("x-kubernetes-list-map-keys") {
                Some(Value::Array(k)) => k
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                _ => Vec::new(),
            }
        };
        match self.ext("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("map") => return ListKind::Map(keys()),
            Some("set") => return ListKind::Set,
            Some(_) => return ListKind::Atomic,
            None => {}
        }
        let merge = self
            .ext("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
            .is_some_and(|s| s.split(',').any(|p| p == "merge"));
        match (merge, self.patch_merge_key()) {
            (true, Some(k)) => ListKind::Map(vec![k.to_string()]),
            (true, None) => ListKind::Set,
            _ => ListKind::Atomic,
        }
    }

    /// Whether this object is replaced as a whole (`x-kubernetes-map-type: atomic`).
    pub fn map_atomic(&self) -> bool {
        self.ext("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
    }

    /// The strategic-merge-patch merge key of a list.
    pub fn patch_merge_key(&self) -> Option<&'a str> {
        self.ext("x-kubernetes-patch-merge-key")
            .and_then(Value::as_str)
    }

    /// The strategic-merge-patch strategies of a field (`merge`, `retainKeys`, `replace`).
    pub fn patch_strategies(&self) -> Vec<&'a str> {
        self.ext("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
            .map(|s| s.split(',').collect())
            .unwrap_or_default()
    }

    /// Whether a boolean extension (e.g. `x-kubernetes-int-or-string`) is set here.
    pub fn schema_flag(&self, key: &str) -> bool {
        self.ext(key) == Some(&Value::Bool(true))
    }

    /// The `format` declared here (`int-or-string`, `date-time`, ...), if any.
    pub fn format(&self) -> Option<&'a str> {
        self.ext("format").and_then(Value::as_str)
    }

    /// Whether this node is the definition `def` itself (reached through a `$ref`).
    pub fn is_definition(&self, def: &Value) -> bool {
        self.schema.is_some_and(|s| std::ptr::eq(s, def))
    }

    /// The Go type of the field as `encoding/json` names it in errors (`int32`, `[]v1.Container`,
    /// `map[string]string`).
    pub fn go_type(&self) -> String {
        if let Some(def) = self.def {
            let mut parts = def.rsplit('.');
            let name = parts.next().unwrap_or(def);
            return match parts.next() {
                Some(pkg) => format!("{pkg}.{name}"),
                None => name.to_string(),
            };
        }
        match self.type_name() {
            Some("string") => "string".into(),
            Some("boolean") => "bool".into(),
            Some("integer") => match self.format() {
                Some(f @ ("int32" | "int64")) => f.into(),
                _ => "int".into(),
            },
            Some("number") => "float64".into(),
            Some("array") => format!("[]{}", self.items().go_type()),
            _ => match self.schema.and_then(|s| s.get("additionalProperties")) {
                Some(ap) if ap.is_object() => {
                    format!("map[string]{}", Node::of(ap, self.unstructured).go_type())
                }
                _ => "interface {}".into(),
            },
        }
    }

    /// The short name of the struct this node is (`ConfigMap`), when it is one of the definitions.
    pub fn struct_name(&self) -> Option<&'a str> {
        self.def.map(|d| d.rsplit('.').next().unwrap_or(d))
    }

    /// The JSON type declared here (`object`, `array`, `string`, ...), if any.
    pub fn type_name(&self) -> Option<&'a str> {
        self.ext("type").and_then(Value::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn containers_merge_by_name_and_ports_by_port_and_protocol() {
        let reg = Registry::default();
        let deploy = reg
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let root = Node::root(&deploy);
        let pod = root
            .field("spec")
            .and_then(|s| s.field("template"))
            .and_then(|t| t.field("spec"))
            .expect("pod spec");
        let containers = pod.field("containers").expect("containers");
        assert_eq!(containers.list_kind(), ListKind::Map(vec!["name".into()]));
        let ports = containers.items().field("ports").expect("ports");
        assert_eq!(
            ports.list_kind(),
            ListKind::Map(vec!["containerPort".into(), "protocol".into()])
        );
        assert_eq!(
            containers.items().field("args").map(|a| a.list_kind()),
            Some(ListKind::Atomic)
        );
        assert!(
            root.field("spec")
                .and_then(|s| s.field("replicaz"))
                .is_none()
        );
        let labels = root
            .field("metadata")
            .and_then(|m| m.field("labels"))
            .expect("labels");
        assert!(labels.field("anything").is_some());
        let finalizers = root
            .field("metadata")
            .and_then(|m| m.field("finalizers"))
            .expect("finalizers");
        assert_eq!(finalizers.list_kind(), ListKind::Set);
        let selector = root
            .field("spec")
            .and_then(|s| s.field("selector"))
            .expect("selector");
        assert!(selector.map_atomic());
    }
}
