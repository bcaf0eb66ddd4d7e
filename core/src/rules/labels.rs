//! Label and annotation rules: qualified keys (`[prefix/]name`), label
//! values, and the labels the engine manages itself.

use super::RuleError;
use super::names::dns1123_subdomain;

/// Longest key name part and label value.
pub const LABEL_NAME_MAX: usize = 63;

/// Labels the engine sets on every object; users must not override them. The other recommended labels
/// (`app.kubernetes.io/instance`, `…/part-of`, `…/version`, `…/component` of an object) and `helm.sh/chart`
/// are the user's to write.
pub const MANAGED_LABELS: [&str; 2] = ["app.kubernetes.io/name", "app.kubernetes.io/managed-by"];

/// The help of a label Piceli sets (PCL0021).
pub const MANAGED_LABEL_HELP: &str = "remove it: Piceli sets `app.kubernetes.io/name` (the app's name) and `app.kubernetes.io/managed-by` on every object itself; `app.kubernetes.io/instance`, `part-of`, `version` and `helm.sh/chart` are yours to set";

/// True for a label the engine sets itself (see [`MANAGED_LABELS`]).
pub fn is_managed_label(key: &str) -> bool {
    MANAGED_LABELS.contains(&key)
}

const KEY_HELP: &str = "use an optional DNS subdomain prefix and '/', then up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, e.g. `example.com/tier` or `tier`";
const VALUE_HELP: &str = "use up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit (or leave it empty), e.g. `v1.2`";

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63; `None` if valid.
fn name_problem(s: &str) -> Option<String> {
    if s.len() > LABEL_NAME_MAX {
        return Some(format!(
            "is {} characters, over the limit of {LABEL_NAME_MAX}",
            s.len()
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Some(format!("contains {c:?}"));
    }
    let edge_ok = |c: char| c.is_ascii_alphanumeric();
    if !s.starts_with(edge_ok) || !s.ends_with(edge_ok) {
        return Some("must start and end with a letter or digit".into());
    }
    None
}

fn qualified(s: &str, what: &str, lowercase_prefix: bool) -> Result<(), RuleError> {
    let err = |m: String| Err(RuleError::new(format!("{what} `{s}` {m}"), KEY_HELP));
    if s.is_empty() {
        return Err(RuleError::new(
            format!("{what} must not be empty"),
            KEY_HELP,
        ));
    }
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            return err("has an empty prefix before '/'".into());
        }
        let lowered = if lowercase_prefix {
            p.to_ascii_lowercase()
        } else {
            p.to_string()
        };
        if let Err(e) = dns1123_subdomain(&lowered) {
            return err(format!(
                "has an invalid prefix `{p}`: {}",
                e.message.trim_start_matches("name ")
            ));
        }
    }
    if name.is_empty() {
        return err("has an empty name after '/'".into());
    }
    if name.contains('/') {
        return err("has more than one '/'".into());
    }
    match name_problem(name) {
        Some(m) if prefix.is_some() => err(format!("has an invalid name `{name}`: it {m}")),
        Some(m) => err(m),
        None => Ok(()),
    }
}

/// A label key: optional DNS-1123 subdomain prefix (≤253) and '/', then a
/// name of at most 63 `[A-Za-z0-9-_.]`, starting and ending alphanumeric.
pub fn label_key(s: &str) -> Result<(), RuleError> {
    qualified(s, "label key", false)
}

/// An annotation key: the same rule as [`label_key`], except that, as in
/// Kubernetes, the prefix is checked case-insensitively.
pub fn annotation_key(s: &str) -> Result<(), RuleError> {
    qualified(s, "annotation key", true)
}

/// A label value: empty, or at most 63 `[A-Za-z0-9-_.]` starting and ending
/// alphanumeric.
pub fn label_value(s: &str) -> Result<(), RuleError> {
    if s.is_empty() {
        return Ok(());
    }
    match name_problem(s) {
        Some(m) => Err(RuleError::new(format!("label value `{s}` {m}"), VALUE_HELP)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_accepted() {
        let long_prefix = format!("{}.{}", "a".repeat(126), "b".repeat(126));
        let k253 = format!("{long_prefix}/{}", "n".repeat(63));
        let x63 = "x".repeat(63);
        let plain = "app|tier|A|a.b_c-D|example.com/tier|app.kubernetes.io/name|kubernetes.io/os|k8s.io/x|a/b|1";
        for s in plain.split('|').chain([x63.as_str(), k253.as_str()]) {
            assert!(label_key(s).is_ok(), "{s}: {:?}", label_key(s));
            assert!(annotation_key(s).is_ok(), "{s}");
        }
    }

    #[test]
    fn keys_rejected() {
        let long_prefix = format!("{}/n", "a".repeat(254));
        let x64 = "x".repeat(64);
        let plain = "|/a|a/|a/b/c|-a|a-|_a|a.|a b|é|Example.com/a|ex_ample.com/a|example.com/-a";
        for s in plain.split('|').chain([x64.as_str(), long_prefix.as_str()]) {
            assert!(label_key(s).is_err(), "{s} should be rejected");
        }
        let e = label_key("example.com/a b").unwrap_err();
        assert_eq!(
            e.message,
            "label key `example.com/a b` has an invalid name `a b`: it contains ' '"
        );
        assert!(e.help.contains("example.com/tier"));
        let e = label_key("Ex.com/a").unwrap_err();
        assert!(
            e.message
                .starts_with("label key `Ex.com/a` has an invalid prefix `Ex.com`"),
            "{e:?}"
        );
    }

    #[test]
    fn annotation_prefix_case_insensitive() {
        assert!(annotation_key("Example.com/note").is_ok());
        assert!(label_key("Example.com/note").is_err());
        assert!(annotation_key("a/b/c").is_err());
        assert!(annotation_key("ex ample.com/a").is_err());
    }

    #[test]
    fn values() {
        for s in ["", "a", "v1.2", "A_b-C.d", "1", &"v".repeat(63)] {
            assert!(label_value(s).is_ok(), "{s}");
        }
        for s in ["-a", "a-", ".a", "a.", "a b", "a/b", "é", &"v".repeat(64)] {
            assert!(label_value(s).is_err(), "{s}");
        }
        assert!(label_value("a/b").unwrap_err().message.contains("`a/b`"));
    }

    #[test]
    fn managed_labels() {
        assert!(is_managed_label("app.kubernetes.io/name"));
        assert!(is_managed_label("app.kubernetes.io/managed-by"));
        for yours in [
            "app.kubernetes.io/instance",
            "app.kubernetes.io/part-of",
            "app.kubernetes.io/version",
            "helm.sh/chart",
        ] {
            assert!(!is_managed_label(yours), "{yours}");
        }
        assert!(!is_managed_label("app"));
        assert!(!is_managed_label("APP.kubernetes.io/name"));
    }
}
