//! Validation: unknown and mistyped fields against the schema (with `fieldValidation`
//! Strict/Warn/Ignore), and object names.

use serde_json::Value;

use crate::registry::schema::Node;
use crate::status::{ApiError, Cause};

/// What `fieldValidation` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldValidation {
    /// `Strict`: unknown or duplicate fields fail the request.
    Strict,
    /// `Warn`: they are reported as warnings.
    Warn,
    /// `Ignore`: they are dropped silently.
    Ignore,
}

impl FieldValidation {
    /// Parses the query parameter (the server's default is Warn).
    pub fn parse(v: Option<&str>) -> Result<FieldValidation, ApiError> {
        match v {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some(other) => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other}. Supported values are: Ignore, Warn, Strict"
            ))),
        }
    }
}

/// Problems found while checking an object against its schema.
#[derive(Debug, Default)]
pub struct Findings {
    /// `spec.foo` style paths of fields the schema does not declare (already removed from the object).
    pub unknown: Vec<String>,
    /// Type mismatches, worded like Go's JSON decoder.
    pub type_errors: Vec<String>,
}

/// Removes undeclared fields (recording them) and records type mismatches.
pub fn check(object: &mut Value, node: Node<'_>) -> Findings {
    let mut f = Findings::default();
    let owner = node.struct_name().unwrap_or_default().to_string();
    walk(
        object,
        node,
        &mut String::new(),
        &mut GoPath {
            owner,
            fields: String::new(),
        },
        &mut f,
    );
    f
}

/// Where `encoding/json` says a value is: the innermost struct being decoded, and the field names
/// from the top (map keys and list indices left out).
#[derive(Clone)]
struct GoPath {
    owner: String,
    fields: String,
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn walk(v: &mut Value, node: Node<'_>, path: &mut String, go: &mut GoPath, f: &mut Findings) {
    if node.is_free() {
        return;
    }
    let expected = node.type_name();
    let actual = match v {
        Value::Null => return,
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if let Some(exp) = expected {
        let int_or_string = node.format() == Some("int-or-string")
            || node.schema_flag("x-kubernetes-int-or-string");
        let ok = exp == actual
            || (exp == "number" && actual == "integer")
            || (int_or_string && matches!(actual, "integer" | "string"));
        if !ok {
            // Go's UnmarshalTypeError: `into Go struct field Struct.path of type T`.
            f.type_errors
                .push(if go.owner.is_empty() || go.fields.is_empty() {
                    format!(
                        "json: cannot unmarshal {} into Go value of type {} (field {})",
                        go_kind(actual),
                        exp,
                        path
                    )
                } else {
                    format!(
                        "json: cannot unmarshal {} into Go struct field {}.{} of type {}",
                        go_kind(actual),
                        go.owner,
                        go.fields,
                        node.go_type()
                    )
                });
            return;
        }
    }
    match v {
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                let child_path = join(path, &k);
                match node.field(&k) {
                    Some(child) => {
                        if let Some(cv) = m.get_mut(&k) {
                            let mut p = child_path;
                            // A struct's field extends the Go path; a map's key does not.
                            let mut g = go.clone();
                            if node.is_struct() {
                                g.fields = join(&go.fields, &k);
                                if let Some(name) = node.struct_name() {
                                    g.owner = name.to_string();
                                }
                            }
                            walk(cv, child, &mut p, &mut g, f);
                        }
                    }
                    None => {
                        f.unknown.push(child_path);
                        m.remove(&k);
                    }
                }
            }
        }
        Value::Array(items) => {
            let item_node = node.items();
            for (i, item) in items.iter_mut().enumerate() {
                let mut p = format!("{path}[{i}]");
                walk(item, item_node, &mut p, &mut go.clone(), f);
            }
        }
        _ => {}
    }
}

fn go_kind(json_type: &str) -> &'static str {
    match json_type {
        "string" => "string",
        "integer" | "number" => "number",
        "boolean" => "bool",
        "array" => "array",
        _ => "object",
    }
}

/// Whether `s` is a DNS-1123 subdomain (most object names).
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_label_chars)
}

/// Whether `s` is a DNS-1123 label (namespace names, Service names).
pub fn is_dns_label(s: &str) -> bool {
    piceli_core::rules::is_dns1123_label(s)
}

fn is_label_chars(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Which rule an object's name follows (the kind's `ValidateObjectMeta` name function).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// A DNS-1123 subdomain (most kinds, and every custom resource).
    Subdomain,
    /// A DNS-1123 label (Namespaces, Services).
    Label,
    /// A path segment: anything but `.`, `..` or a name containing `/` or `%` (the RBAC kinds).
    PathSegment,
}

fn invalid_name(name: &str, why: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {name:?}: {why}"),
        field: "metadata.name".into(),
    }
}

/// Validates an object's name by its kind's rule, as 422 causes.
pub fn name_causes(rule: NameRule, name: &str) -> Vec<Cause> {
    if name.is_empty() {
        return vec![Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value: name or generateName is required".into(),
            field: "metadata.name".into(),
        }];
    }
    match rule {
        NameRule::Label if !is_dns_label(name) => vec![invalid_name(
            name,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        )],
        NameRule::Subdomain if !is_dns_subdomain(name) => vec![invalid_name(
            name,
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        )],
        NameRule::PathSegment if name == "." || name == ".." => {
            vec![invalid_name(name, &format!("may not be '{name}'"))]
        }
        NameRule::PathSegment => ["/", "%"]
            .iter()
            .filter(|bad| name.contains(*bad))
            .map(|bad| invalid_name(name, &format!("may not contain '{bad}'")))
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;
    use serde_json::json;

    #[test]
    fn finds_and_drops_unknown_fields() {
        let reg = Registry::default();
        let rt = reg
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let mut d = json!({"spec": {"replicaz": 3, "template": {"spec": {"containers": [{"name": "a", "imagee": "x"}]}}}, "metadata": {"labels": {"a": "b"}}});
        let f = check(&mut d, Node::root(&rt));
        assert_eq!(
            f.unknown,
            vec![
                "spec.replicaz".to_string(),
                "spec.template.spec.containers[0].imagee".to_string()
            ]
        );
        assert!(d["spec"].get("replicaz").is_none());
        let svc = reg.lookup("", "v1", "services").expect("services");
        let mut ports = json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 81, "targetPort": "http"}]}});
        let f = check(&mut ports, Node::root(&svc));
        assert!(f.type_errors.is_empty() && f.unknown.is_empty(), "{f:?}");
        let mut bad = json!({"spec": {"replicas": "three"}});
        assert_eq!(check(&mut bad, Node::root(&rt)).type_errors.len(), 1);
    }

    #[test]
    fn names() {
        assert!(name_causes(NameRule::Subdomain, "ok.name-1").is_empty());
        assert_eq!(
            name_causes(NameRule::Subdomain, "Bad_Name")[0].field,
            "metadata.name"
        );
        assert!(!name_causes(NameRule::Label, "has.dot").is_empty());
        assert!(name_causes(NameRule::PathSegment, "system:aggregate-to-view").is_empty());
        assert_eq!(
            name_causes(NameRule::PathSegment, "a/b%c")
                .iter()
                .map(|c| c.message.as_str())
                .collect::<Vec<_>>(),
            [
                "Invalid value: \"a/b%c\": may not contain '/'",
                "Invalid value: \"a/b%c\": may not contain '%'"
            ]
        );
        assert_eq!(name_causes(NameRule::PathSegment, "..").len(), 1);
        // Each kind's rule comes from its strategy; custom resources are subdomains whatever their kind
        // is called (a `ClusterIssuer` was not checked when the rule went by kind names).
        use crate::registry::strategy::for_kind;
        assert_eq!(
            for_kind("", "Namespace", false).name_rule(),
            NameRule::Label
        );
        assert_eq!(for_kind("", "Service", false).name_rule(), NameRule::Label);
        let rbac = "rbac.authorization.k8s.io";
        for kind in ["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"] {
            assert_eq!(
                for_kind(rbac, kind, false).name_rule(),
                NameRule::PathSegment
            );
        }
        assert_eq!(
            for_kind("cert-manager.io", "ClusterIssuer", true).name_rule(),
            NameRule::Subdomain
        );
    }
}

#[cfg(test)]
mod go_errors {
    use serde_json::json;

    use crate::registry::Registry;
    use crate::registry::schema::Node;

    #[test]
    fn type_errors_name_the_go_struct_field_as_encoding_json_does() {
        let reg = Registry::default();
        let cms = reg.lookup("", "v1", "configmaps").expect("configmaps");
        let mut cm = json!({"data": {"n": 5}});
        let f = super::check(&mut cm, Node::root(&cms));
        assert_eq!(
            f.type_errors,
            ["json: cannot unmarshal number into Go struct field ConfigMap.data of type string"]
        );
        let deploys = reg
            .lookup("apps", "v1", "deployments")
            .expect("deployments");
        let mut d = json!({"spec": {"replicas": "three"}});
        let f = super::check(&mut d, Node::root(&deploys));
        assert_eq!(
            f.type_errors,
            [
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
            ]
        );
    }
}
