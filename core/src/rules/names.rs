//! Name rules: DNS-1123 labels and subdomains, RFC 1035 labels (Service
//! names), IANA service names (port names), environment variable names,
//! ConfigMap/Secret keys, and length limits for names that Kubernetes extends
//! with a generated suffix (CronJob → Job, StatefulSet → Pod, Deployment → Pod).

use super::RuleError;

/// Maximum length of a DNS-1123 label (most object names, pod hostnames).
pub const DNS1123_LABEL_MAX: usize = 63;
/// Maximum length of a DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Maximum length of an IANA service name (container port names).
pub const PORT_NAME_MAX: usize = 15;
/// Maximum length of a ConfigMap or Secret key.
pub const CONFIG_KEY_MAX: usize = 253;

/// Characters a CronJob's Jobs add to its name: `-` plus a 10-digit
/// scheduled-time stamp.
pub const JOB_NAME_SUFFIX_LEN: usize = 11;
/// Longest CronJob name: 63 minus [`JOB_NAME_SUFFIX_LEN`]; the API server
/// rejects longer ones.
pub const CRONJOB_NAME_MAX: usize = DNS1123_LABEL_MAX - JOB_NAME_SUFFIX_LEN;
/// Characters a StatefulSet's `controller-revision-hash` label adds to its
/// name: `-` plus a 10-character hash; the label value must fit in 63.
pub const STATEFULSET_REVISION_SUFFIX_LEN: usize = 11;
/// Longest StatefulSet name whose pods can still be created (52).
pub const STATEFULSET_NAME_MAX: usize = DNS1123_LABEL_MAX - STATEFULSET_REVISION_SUFFIX_LEN;
/// Characters a Deployment's pods add to its name: `-` plus the
/// pod-template hash (up to 10) for the ReplicaSet, then `-` plus 5 random
/// characters for the pod.
pub const DEPLOYMENT_POD_SUFFIX_LEN: usize = 17;
/// Longest Deployment name whose pod names (and hostnames) stay within 63
/// characters without truncation (46).
pub const DEPLOYMENT_NAME_MAX: usize = DNS1123_LABEL_MAX - DEPLOYMENT_POD_SUFFIX_LEN;

/// Characters a StatefulSet pod adds to its name for `replicas` replicas:
/// `-` plus the highest ordinal (`replicas - 1`) in decimal.
pub fn statefulset_ordinal_suffix_len(replicas: u32) -> usize {
    1 + replicas.saturating_sub(1).to_string().len()
}

const LABEL_HELP: &str = "use lowercase letters, digits and '-', starting and ending with a letter or digit, e.g. `web-api`";
const RFC1035_HELP: &str = "use lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, e.g. `web-api`";
const SUBDOMAIN_HELP: &str = "use dot-separated parts of lowercase letters, digits and '-', each starting and ending with a letter or digit, e.g. `example.com`";

/// Lowercases and replaces invalid characters with '-', for a "try `x`" hint.
fn sanitize(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn with_try(help: &str, s: &str, valid: fn(&str) -> bool) -> String {
    if s.len() > DNS1123_LABEL_MAX {
        return format!("shorten it to at most {DNS1123_LABEL_MAX} characters");
    }
    let t = sanitize(s);
    if !t.is_empty() && t != s && valid(&t) {
        format!("{help}; try `{t}`")
    } else {
        help.to_string()
    }
}

/// Shared DNS label check; `letter_first` selects RFC 1035 (Service names).
fn label_like(s: &str, what: &str, letter_first: bool) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("{what} must not be empty"));
    }
    if s.len() > DNS1123_LABEL_MAX {
        return Err(format!(
            "{what} `{s}` is {} characters, over the limit of {DNS1123_LABEL_MAX}",
            s.len()
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        let kind = if c.is_ascii_uppercase() {
            "uppercase letter "
        } else {
            ""
        };
        return Err(format!("{what} `{s}` contains {kind}{c:?}"));
    }
    if letter_first && !s.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(format!("{what} `{s}` must start with a letter"));
    }
    if s.starts_with('-') {
        return Err(format!("{what} `{s}` must not start with '-'"));
    }
    if s.ends_with('-') {
        return Err(format!("{what} `{s}` must not end with '-'"));
    }
    Ok(())
}

/// A DNS-1123 label: at most 63 of `[a-z0-9-]`, starting and ending
/// alphanumeric (most object names, namespaces, container names).
pub fn dns1123_label(s: &str) -> Result<(), RuleError> {
    label_like(s, "name", false).map_err(|m| {
        RuleError::new(
            m,
            with_try(LABEL_HELP, s, |t| label_like(t, "", false).is_ok()),
        )
    })
}

/// Whether `s` is a DNS-1123 label ([`dns1123_label`] without building an error): for checks that only
/// need the answer, such as the controller and webhook registries and the local cluster's validation.
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// An RFC 1035 label: like [`dns1123_label`] but starting with a letter
/// (Service names).
pub fn rfc1035_label(s: &str) -> Result<(), RuleError> {
    label_like(s, "name", true).map_err(|m| {
        RuleError::new(
            m,
            with_try(RFC1035_HELP, s, |t| label_like(t, "", true).is_ok()),
        )
    })
}

/// A DNS-1123 subdomain as Kubernetes' `IsDNS1123Subdomain`: at most 253
/// characters, dot-separated non-empty parts of `[a-z0-9-]`, each starting
/// and ending alphanumeric.
pub fn dns1123_subdomain(s: &str) -> Result<(), RuleError> {
    let err = |m: String| RuleError::new(m, SUBDOMAIN_HELP);
    if s.is_empty() {
        return Err(err("name must not be empty".into()));
    }
    if s.len() > DNS1123_SUBDOMAIN_MAX {
        return Err(RuleError::new(
            format!(
                "name `{s}` is {} characters, over the limit of {DNS1123_SUBDOMAIN_MAX}",
                s.len()
            ),
            format!("shorten it to at most {DNS1123_SUBDOMAIN_MAX} characters"),
        ));
    }
    for part in s.split('.') {
        if part.is_empty() {
            return Err(err(format!(
                "name `{s}` has an empty part (leading, trailing or doubled '.')"
            )));
        }
        // Per-part length is not limited by IsDNS1123Subdomain, only the total.
        if let Some(c) = part
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
        {
            let lower = s.to_ascii_lowercase();
            if c.is_ascii_uppercase() && dns1123_subdomain(&lower).is_ok() {
                return Err(RuleError::new(
                    format!("name `{s}` contains uppercase letter {c:?}"),
                    format!("use lowercase letters: `{lower}`"),
                ));
            }
            return Err(err(format!("name `{s}` contains {c:?}")));
        }
        if part.starts_with('-') || part.ends_with('-') {
            return Err(err(format!(
                "name `{s}`: part `{part}` must start and end with a letter or digit"
            )));
        }
    }
    Ok(())
}

/// A path segment name (what Kubernetes accepts for RBAC objects, e.g. `system:aggregate-to-view`):
/// not empty, not `.` or `..`, and without `/` or `%`.
pub fn path_segment(s: &str) -> Result<(), RuleError> {
    let help = "RBAC names may hold any character but '/' and '%', and may not be '.' or '..'";
    if s.is_empty() {
        return Err(RuleError::new("name must not be empty", help));
    }
    if s == "." || s == ".." {
        return Err(RuleError::new(format!("name `{s}` is not allowed"), help));
    }
    if let Some(c) = s.chars().find(|c| matches!(c, '/' | '%')) {
        return Err(RuleError::new(format!("name `{s}` contains {c:?}"), help));
    }
    Ok(())
}

/// The name rule the API server applies to an object of a built-in kind: an RFC 1035 label for Services,
/// a DNS-1123 label for Namespaces, a path segment for RBAC objects, a DNS-1123 subdomain for the rest.
/// `None` for kinds of other API groups (custom resources), whose rules the CRD's server decides.
pub fn object_name(api_version: &str, kind: &str, name: &str) -> Option<Result<(), RuleError>> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let built_in = group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io");
    if !built_in {
        return None;
    }
    Some(match (group, kind) {
        ("", "Service") => rfc1035_label(name),
        ("", "Namespace") => dns1123_label(name),
        ("rbac.authorization.k8s.io", _) => path_segment(name),
        _ => dns1123_subdomain(name),
    })
}

/// An IANA service name (container/Service port names): 1–15 of `[a-z0-9-]`,
/// at least one letter, no leading/trailing '-', no "--".
pub fn port_name(s: &str) -> Result<(), RuleError> {
    let help = "use at most 15 lowercase letters, digits and '-', with at least one letter, e.g. `http` or `grpc-api`";
    let err = |m: String| Err(RuleError::new(m, help));
    if s.is_empty() {
        return err("port name must not be empty".into());
    }
    if s.len() > PORT_NAME_MAX {
        return err(format!(
            "port name `{s}` is {} characters, over the limit of {PORT_NAME_MAX}",
            s.len()
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return err(format!("port name `{s}` contains {c:?}"));
    }
    if !s.chars().any(|c| c.is_ascii_lowercase()) {
        return err(format!("port name `{s}` must contain at least one letter"));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return err(format!("port name `{s}` must not start or end with '-'"));
    }
    if s.contains("--") {
        return err(format!("port name `{s}` must not contain \"--\""));
    }
    Ok(())
}

/// Kubernetes' `hasChDirPrefix`: ".", ".." and a leading ".." are rejected.
fn chdir_prefix(s: &str, what: &str) -> Option<String> {
    if s == "." || s == ".." {
        Some(format!("{what} `{s}` is not allowed"))
    } else if s.starts_with("..") {
        Some(format!("{what} `{s}` must not start with \"..\""))
    } else {
        None
    }
}

/// An environment variable name as Kubernetes' `IsEnvVarName`:
/// `[-._a-zA-Z][-._a-zA-Z0-9]*`, and not ".", ".." or starting with "..".
pub fn env_var_name(s: &str) -> Result<(), RuleError> {
    let help =
        "use letters, digits, '_', '-' and '.', not starting with a digit, e.g. `DATABASE_URL`";
    let err = |m: String| Err(RuleError::new(m, help));
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
    let Some(first) = s.chars().next() else {
        return err("environment variable name must not be empty".into());
    };
    if first.is_ascii_digit() {
        return err(format!(
            "environment variable name `{s}` must not start with a digit"
        ));
    }
    if let Some(c) = s.chars().find(|c| !ok(*c)) {
        return err(format!("environment variable name `{s}` contains {c:?}"));
    }
    match chdir_prefix(s, "environment variable name") {
        Some(m) => err(m),
        None => Ok(()),
    }
}

/// A ConfigMap or Secret key: 1–253 of `[-._a-zA-Z0-9]`, not ".", ".." or
/// starting with "..".
pub fn config_key(s: &str) -> Result<(), RuleError> {
    let help = "use letters, digits, '-', '_' and '.', e.g. `config.yaml`";
    let err = |m: String| Err(RuleError::new(m, help));
    if s.is_empty() {
        return err("key must not be empty".into());
    }
    if s.len() > CONFIG_KEY_MAX {
        return Err(RuleError::new(
            format!(
                "key `{s}` is {} characters, over the limit of {CONFIG_KEY_MAX}",
                s.len()
            ),
            format!("shorten it to at most {CONFIG_KEY_MAX} characters"),
        ));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
    {
        return err(format!("key `{s}` contains {c:?}"));
    }
    match chdir_prefix(s, "key") {
        Some(m) => err(m),
        None => Ok(()),
    }
}

/// Checks that `name` plus a generated suffix of `suffix_len` characters fits
/// in `max_len` (e.g. `name_with_suffix(n, JOB_NAME_SUFFIX_LEN, 63, "CronJob")`).
/// Only the length is checked; validate the characters separately.
pub fn name_with_suffix(
    name: &str,
    suffix_len: usize,
    max_len: usize,
    what: &str,
) -> Result<(), RuleError> {
    let total = name.len() + suffix_len;
    if total <= max_len {
        return Ok(());
    }
    let limit = max_len.saturating_sub(suffix_len);
    Err(RuleError::new(
        format!(
            "{what} name `{name}` is {} characters; with the {suffix_len}-character suffix Kubernetes adds it becomes {total}, over the limit of {max_len}",
            name.len()
        ),
        format!("shorten the {what} name to at most {limit} characters"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_label_accepts() {
        for s in "a|0|web|web-api|a1-b2|1abc".split('|') {
            assert!(dns1123_label(s).is_ok(), "{s}");
        }
        assert!(dns1123_label(&"a".repeat(63)).is_ok());
    }

    #[test]
    fn dns1123_label_rejects() {
        let long = "a".repeat(64);
        for s in "|-a|a-|Web|web_api|a.b|a b|é"
            .split('|')
            .chain([long.as_str()])
        {
            let e = dns1123_label(s).unwrap_err();
            assert!(
                e.message.contains(&format!("`{s}`")) || s.is_empty(),
                "{e:?}"
            );
            assert!(e.help.contains("web-api") || e.help.contains("at most 63"));
        }
        let e = dns1123_label("Web_API").unwrap_err();
        assert!(e.message.contains("uppercase letter 'W'"), "{e:?}");
        assert!(e.help.ends_with("try `web-api`"), "{e:?}");
    }

    #[test]
    fn rfc1035_label_requires_letter_first() {
        assert!(rfc1035_label("web").is_ok());
        assert!(rfc1035_label("a-1").is_ok());
        assert!(
            rfc1035_label("1web")
                .unwrap_err()
                .message
                .contains("start with a letter")
        );
        assert!(rfc1035_label("").is_err());
        assert!(rfc1035_label("web-").is_err());
        assert!(rfc1035_label(&"a".repeat(64)).is_err());
    }

    #[test]
    fn subdomain() {
        for s in "a|example.com|a-b.c-d.e|1.2.3|a-b.0.xn--bcher-kva".split('|') {
            assert!(dns1123_subdomain(s).is_ok(), "{s}");
        }
        let long = vec!["a".repeat(63); 4].join("."); // 255
        for s in "|.a|a.|a..b|-a.b|a.b-|A.b|a_b|a/b"
            .split('|')
            .chain([long.as_str()])
        {
            assert!(dns1123_subdomain(s).is_err(), "{s}");
        }
        let e = dns1123_subdomain("Example.com").unwrap_err();
        assert_eq!(e.help, "use lowercase letters: `example.com`");
        let ok253 = format!("{}.{}", "a".repeat(126), "b".repeat(126));
        assert!(dns1123_subdomain(&ok253).is_ok(), "parts may exceed 63");
    }

    #[test]
    fn port_names() {
        for s in "http|grpc-api|h2c|a|metrics-9090abc".split('|') {
            assert!(port_name(s).is_ok(), "{s}");
        }
        for s in "|8080|-http|http-|a--b|HTTP|http_x|abcdefghijklmnop".split('|') {
            assert!(port_name(s).is_err(), "{s}");
        }
    }

    #[test]
    fn env_var_names() {
        for s in "PATH|my.env-name|MY_ENV.NAME|MyEnvName1|_x|-x|.a".split('|') {
            assert!(env_var_name(s).is_ok(), "{s}");
        }
        for s in "|1ABC|A=B|A B|É|.|..|..a".split('|') {
            assert!(env_var_name(s).is_err(), "{s}");
        }
    }

    #[test]
    fn config_keys() {
        for s in "config.yaml|a|1|.env|a..b|A_B-c".split('|') {
            assert!(config_key(s).is_ok(), "{s}");
        }
        for s in "|.|..|..x|a/b|a b".split('|') {
            assert!(config_key(s).is_err(), "{s}");
        }
        assert!(config_key(&"k".repeat(253)).is_ok());
        assert!(config_key(&"k".repeat(254)).is_err());
    }

    #[test]
    fn suffix_limits() {
        assert_eq!(CRONJOB_NAME_MAX, 52);
        assert_eq!(STATEFULSET_NAME_MAX, 52);
        assert_eq!(DEPLOYMENT_NAME_MAX, 46);
        let n52 = "a".repeat(52);
        assert!(name_with_suffix(&n52, JOB_NAME_SUFFIX_LEN, 63, "CronJob").is_ok());
        let e = name_with_suffix(&"a".repeat(53), JOB_NAME_SUFFIX_LEN, 63, "CronJob").unwrap_err();
        assert!(e.message.contains("becomes 64"), "{e:?}");
        assert!(e.help.contains("at most 52"), "{e:?}");
        assert!(name_with_suffix("", 100, 63, "x").is_err());
        assert!(name_with_suffix("abc", 0, 3, "x").is_ok());
    }

    #[test]
    fn ordinal_suffix() {
        assert_eq!(statefulset_ordinal_suffix_len(0), 2);
        assert_eq!(statefulset_ordinal_suffix_len(1), 2);
        assert_eq!(statefulset_ordinal_suffix_len(10), 2);
        assert_eq!(statefulset_ordinal_suffix_len(11), 3);
    }
}
