//! Controllers and custom resources: `controller NAME on RESOURCE [(finalizer)] [{ … }] => handler;` and
//! `custom_resource path::Type;` (whose CRD the app renders, as an `include objects(…)`).

use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// Where a controller watches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum ControllerNamespaces {
    /// The operator's own namespace (the default).
    #[default]
    Operator,
    /// `namespaces: all`.
    All,
    /// `namespaces: [a, b]`.
    List(Vec<Spanned<String>>),
}

/// One controller declaration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ControllerDecl {
    /// The name (a DNS label; qualifies its finalizer `<app>.piceli.dev/<name>`).
    pub name: Name,
    /// The resource as written (`configmaps`, `lamps.example.com`).
    pub resource: Spanned<String>,
    /// The resource's API group and plural, resolved at compile time.
    pub group: String,
    /// The plural name.
    pub plural: String,
    /// Whether the resource is one of the app's `custom_resource` types (its scope is the CRD's).
    pub custom: bool,
    /// Namespaced (built-in kinds; custom kinds take their CRD's scope when rendered).
    pub namespaced: bool,
    /// The handler's Rust path as written.
    pub handler: Spanned<String>,
    /// `(finalizer)`: deletion waits for the handler's cleanup.
    pub finalizer: bool,
    /// `namespaces: all | [..]`.
    pub namespaces: ControllerNamespaces,
    /// `labels: { app: web }`, as a label selector (`app=web`).
    pub labels: Option<String>,
    /// `every: "5m"`, in milliseconds.
    pub every_ms: Option<u64>,
    /// `writes: [status]`: the handler writes the watched kind's status.
    pub writes_status: bool,
    /// `writes: [configmaps, deployments.apps]`: (group, plural) of the kinds the handler writes.
    pub writes: Vec<(String, String)>,
    /// `owns: [configmaps, secrets]`: kinds whose objects name an object of the watched kind in their
    /// ownerReferences; a change or deletion of one reconciles its owner.
    #[serde(default)]
    pub owns: Vec<RelatedKind>,
    /// `watches: [secrets => by_label("app")]`: other kinds whose objects map to owners by a rule.
    #[serde(default)]
    pub watches: Vec<(RelatedKind, OwnerMapping)>,
    /// `(finalizer: "example.com/cleanup")`: the finalizer's name, when not `<app>.piceli.dev/<name>`.
    #[serde(default)]
    pub finalizer_name: Option<String>,
    /// `backoff: { base: "200ms", max: "5m" }`: the retry policy's first and longest delay, in
    /// milliseconds (default 200 ms and 5 minutes).
    #[serde(default)]
    pub backoff_ms: Option<(u64, u64)>,
    /// `backoff: ops::my_backoff`: the Rust path of the app's function of the error and the attempt
    /// (instead of `backoff_ms`).
    #[serde(default)]
    pub backoff_fn: Option<Spanned<String>>,
    /// `reconcile_all_on: ops::config_changes`: the Rust path of the app's function giving a stream whose
    /// every item reconciles every object.
    #[serde(default)]
    pub reconcile_all_on: Option<Spanned<String>>,
}

/// A kind a controller watches besides its own (`owns:`, `watches:`), resolved at compile time: built-in
/// kinds from the 1.33 table; for the app's custom resources, the version and scope are their CRD's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RelatedKind {
    /// The resource as written (`configmaps`, `lamps.example.com`).
    pub resource: String,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The version (built-in kinds; a custom kind's is its CRD's storage version).
    pub version: String,
    /// The kind (`ConfigMap`).
    pub kind: String,
    /// The plural name.
    pub plural: String,
    /// Namespaced (built-in kinds; a custom kind's scope is its CRD's).
    pub namespaced: bool,
    /// One of the app's `custom_resource` types.
    pub custom: bool,
}

/// How a watched object (`watches:`) names the objects it reconciles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum OwnerMapping {
    /// `by_label("app")`: the owner is named by the value of this label, in the object's namespace.
    Label(String),
    /// `by_name`: the owner has the object's name, in its namespace.
    Name,
}

/// Parses a duration as declarations write it: `500ms`, `30s`, `5m`, `1h` (whole numbers, not zero).
pub fn parse_duration(text: &str) -> Option<std::time::Duration> {
    use std::time::Duration;
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.checked_mul(60)?),
        "h" => Duration::from_secs(n.checked_mul(3600)?),
        _ => return None,
    };
    (!d.is_zero()).then_some(d)
}

/// Why `name` cannot be a finalizer's name, if it cannot: a domain-qualified name (`example.com/cleanup`),
/// as the API server wants one: a DNS subdomain, `/`, and at most 63 letters, digits, `-`, `_` or `.`
/// starting and ending with a letter or digit.
pub fn finalizer_name_problem(name: &str) -> Option<String> {
    let Some((prefix, rest)) = name.split_once('/') else {
        return Some(format!(
            "`{name}` is not domain-qualified (`example.com/cleanup`)"
        ));
    };
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if prefix.len() > 253 || !prefix.split('.').all(label) {
        return Some(format!("`{prefix}` is not a DNS subdomain"));
    }
    let alnum = |c: char| c.is_ascii_alphanumeric();
    let ok = !rest.is_empty()
        && rest.len() <= 63
        && rest
            .chars()
            .all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
        && rest.starts_with(alnum)
        && rest.ends_with(alnum);
    (!ok).then(|| {
        format!("`{rest}` is not a name (at most 63 letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit)")
    })
}

/// The plurals kube's `CustomResource` derive gives a kind by default (`Lamp` → `lamps`, `Policy` →
/// `policies`, `Box` → `boxes`), with the lowercase kind itself.
pub fn default_plurals(kind: &str) -> [String; 2] {
    let lower = kind.to_ascii_lowercase();
    let plural = if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with('z')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    };
    [plural, lower]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_parse_as_declarations_write_them() {
        assert_eq!(parse_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("0s"), None);
        assert_eq!(parse_duration("5"), None);
        assert_eq!(parse_duration("5 min"), None);
        assert_eq!(parse_duration("m"), None);
    }

    #[test]
    fn finalizer_names_are_domain_qualified() {
        assert_eq!(finalizer_name_problem("example.com/cleanup"), None);
        assert_eq!(finalizer_name_problem("lamps.piceli.dev/lamp"), None);
        assert!(finalizer_name_problem("cleanup").is_some());
        assert!(finalizer_name_problem("Example.com/cleanup").is_some());
        assert!(finalizer_name_problem("example.com/").is_some());
        assert!(finalizer_name_problem("example.com/-x").is_some());
    }

    #[test]
    fn kinds_pluralize_as_kube_derive_does() {
        assert_eq!(default_plurals("Lamp")[0], "lamps");
        assert_eq!(default_plurals("Policy")[0], "policies");
        assert_eq!(default_plurals("Gateway")[0], "gateways");
        assert_eq!(default_plurals("Box")[0], "boxes");
    }
}
