//! The normaliser: what differs between any two real clusters (times, uids, resourceVersions, generated
//! names, IPs and ports, certificates and tokens, node names, column padding around those) becomes a
//! placeholder, and orders the API does not promise are made stable; everything else is compared as is.

use std::sync::OnceLock;

use regex::Regex;
use serde_json::{Map, Value, json};

use crate::differential::run::Answer;

/// What a target's answers are normalised against: its own address, node name and scratch paths.
pub struct Context {
    /// (literal, placeholder), replaced first.
    pub literals: Vec<(String, &'static str)>,
}

/// The normalised form of one answer: `{code, out, err}`, `out` as JSON when it is JSON.
pub fn answer(a: &Answer, ctx: &Context, kubectl: bool) -> Value {
    json!({
        "code": a.code,
        "out": output(&a.out, ctx, kubectl),
        "err": text(&a.err, ctx, kubectl),
    })
}

fn output(s: &str, ctx: &Context, kubectl: bool) -> Value {
    let t = s.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(s) {
            return json_value(&v, ctx, "");
        }
        // A watch: one event per line.
        let events: Option<Vec<Value>> = s
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        if let Some(events) = events {
            return Value::Array(events.iter().map(|e| json_value(e, ctx, "")).collect());
        }
    }
    Value::String(text(s, ctx, kubectl))
}

/// Keys whose string values differ between any two clusters.
fn placeholder_for(key: &str) -> Option<&'static str> {
    match key {
        "resourceVersion" => Some("<rv>"),
        "uid" => Some("<uid>"),
        "continue" => Some("<continue>"),
        "pod-template-hash" => Some("<hash>"),
        // A binary's build (`/version`): the same release is built by each distribution with its own
        // commit, Go and date.
        "gitCommit" => Some("<build>"),
        "goVersion" => Some("<build>"),
        _ => None,
    }
}

/// Arrays that are sets, or lists whose order the API does not promise — or orders by what the
/// normaliser hides: managedFields entries are sorted by operation, then by their `time` in seconds, then by
/// manager, so two writes in one second or in two seconds come in either order once times are hidden.
fn unordered(key: &str) -> bool {
    matches!(key, "verbs" | "resources" | "managedFields")
}

/// The sort key of an element of an unordered array: its name (or manager) when it has one.
fn sort_key(v: &Value) -> String {
    if let (Some(op), Some(manager)) = (
        v.get("operation").and_then(Value::as_str),
        v.get("manager").and_then(Value::as_str),
    ) {
        return format!("{op}\u{0}{manager}\u{0}{v}");
    }
    for k in ["name", "resource"] {
        if let Some(n) = v.get(k).and_then(Value::as_str) {
            return format!("{n}\u{0}{v}");
        }
    }
    v.to_string()
}

fn json_value(v: &Value, ctx: &Context, key: &str) -> Value {
    if key == "gitVersion"
        && let Some((release, _build)) = v.as_str().and_then(|s| s.split_once('+'))
    {
        // Semver build metadata (`+k3s1`, `+piceli-sim`) names the distribution, not the release.
        return Value::String(release.to_string());
    }
    match v {
        Value::String(s) => match placeholder_for(key) {
            Some(p) if !s.is_empty() => Value::String(p.into()),
            _ => Value::String(text(s, ctx, false)),
        },
        Value::Array(items) => {
            let mut out: Vec<Value> = items.iter().map(|i| json_value(i, ctx, "")).collect();
            if unordered(key) {
                out.sort_by_key(sort_key);
            }
            Value::Array(out)
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(text(k, ctx, false), json_value(&m[k], ctx, k));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("pattern"))
}

/// The alphabet of generated name suffixes and hashes (k8s.io/apimachinery's rand: no vowels, no 0 1 3).
const SAFE: &str = "[bcdfghjklmnpqrstvwxz2456789]";

/// Normalises free text (kubectl's output, messages, string values).
pub fn text(s: &str, ctx: &Context, kubectl: bool) -> String {
    static PEM: OnceLock<Regex> = OnceLock::new();
    static PEM64: OnceLock<Regex> = OnceLock::new();
    static JWT: OnceLock<Regex> = OnceLock::new();
    static TIME: OnceLock<Regex> = OnceLock::new();
    static GOTIME: OnceLock<Regex> = OnceLock::new();
    static UID: OnceLock<Regex> = OnceLock::new();
    static IP: OnceLock<Regex> = OnceLock::new();
    static RV: OnceLock<Regex> = OnceLock::new();
    static TOO_OLD: OnceLock<Regex> = OnceLock::new();
    static HASH: OnceLock<Regex> = OnceLock::new();
    static GEN: OnceLock<Regex> = OnceLock::new();
    static HASH_LABEL: OnceLock<Regex> = OnceLock::new();
    static AGE: OnceLock<Regex> = OnceLock::new();
    static PAD: OnceLock<Regex> = OnceLock::new();
    static KLOG: OnceLock<Regex> = OnceLock::new();
    static TMP: OnceLock<Regex> = OnceLock::new();

    let mut s = s.to_string();
    for (lit, placeholder) in &ctx.literals {
        if !lit.is_empty() {
            s = s.replace(lit.as_str(), placeholder);
        }
    }
    let rules: [(&Regex, &str); 13] = [
        // klog's line header (severity, date, time, pid) on kubectl's stderr.
        (
            re(&KLOG, r"(?m)^([IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+ "),
            "$1<klog> ",
        ),
        // kubectl diff's temporary directories.
        (re(&TMP, r"/(LIVE|MERGED)-\d+/"), "/$1-<n>/"),
        (
            re(
                &PEM,
                r"(?s)-----BEGIN [A-Z ]+-----.*?-----END [A-Z ]+-----\n?",
            ),
            "<cert>",
        ),
        (re(&PEM64, r"LS0tLS1CRUdJT[A-Za-z0-9+/=]+"), "<cert>"),
        (
            re(&JWT, r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+"),
            "<token>",
        ),
        (
            re(
                &TIME,
                r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?( ?Z| ?[+-]\d{2}:?\d{2}( UTC)?)",
            ),
            "<time>",
        ),
        (
            re(
                &GOTIME,
                r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}",
            ),
            "<time>",
        ),
        (
            re(
                &UID,
                r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            ),
            "<uid>",
        ),
        (re(&IP, r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b"), "<ip>"),
        (re(&RV, r#"(resourceVersion"?[:=] ?"?)\d+"#), "${1}<rv>"),
        (
            re(&TOO_OLD, r"too old resource version: (\d+) \(\d+\)"),
            "too old resource version: $1 (<rv>)",
        ),
        (
            re(
                &HASH_LABEL,
                &format!(r"(pod-template-hash[=:] ?){SAFE}{{6,10}}\b"),
            ),
            "${1}<hash>",
        ),
        (
            re(&HASH, &format!(r"([a-z0-9])-{SAFE}{{6,10}}\b")),
            "${1}-<hash>",
        ),
    ];
    for (r, with) in rules {
        s = r.replace_all(&s, with).into_owned();
    }
    s = re(&GEN, &format!(r"([a-z0-9>])-{SAFE}{{5}}\b"))
        .replace_all(&s, "${1}-<gen>")
        .into_owned();
    if kubectl {
        // `rollout status` reports progress as it sees it: how many of these lines come depends on when
        // kubectl looked, on any cluster; the outcome (the last line and the exit code) is compared.
        s = s
            .lines()
            .filter(|l| !l.starts_with("Waiting for "))
            .collect::<Vec<_>>()
            .join("\n");
        // Ages in tables (`5s`, `2m3s`), then the column padding that follows from the widths of the
        // values normalised above.
        s = re(&AGE, r"(?m)(^|\s)\d+(\.\d+)?(s|m|h|d)(\d+(s|m|h))?(\s|$)")
            .replace_all(&s, "${1}<age>${6}")
            .into_owned();
        s = re(&PAD, r"(\S) {2,}").replace_all(&s, "$1  ").into_owned();
        // In a table (a first line of capitalised column headers), an empty first cell pads the
        // row's start to the column's width.
        let table = s.lines().next().is_some_and(|h| {
            h.contains("  ")
                && h.split("  ")
                    .all(|c| c.trim().starts_with(|ch: char| ch.is_ascii_uppercase()))
        });
        if table {
            s = s
                .lines()
                .map(|l| {
                    if l.starts_with("  ") {
                        format!("  {}", l.trim_start())
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        // kubectl sorts rows by name; where generated parts of names were replaced, that order came
        // from them: the rows (after a header) are put in a stable order.
        if s.contains("<hash>") || s.contains("<gen>") {
            let mut lines: Vec<&str> = s.lines().collect();
            let header = usize::from(
                lines
                    .first()
                    .is_some_and(|l| l.starts_with("NAME") || l.starts_with("NAMESPACE")),
            );
            lines[header..].sort_unstable();
            s = lines.join("\n");
        }
    }
    s
}
