//! The options block of `controller NAME on RESOURCE { … }`: `labels`, `namespaces`, `every`, `writes`,
//! `owns`, `watches`, `backoff` and `reconcile_all_on`, read into the declaration (resources are resolved
//! with the controller, once every `custom_resource` is known; the app's functions are kept as Rust paths
//! for the expansion, which registers them at their spans).

use super::keys::{self, Key, Reading};
use super::{Fields, Lower};
use crate::ast::controller::ControllerTail;
use crate::ast::{NameTok, Sp, Value};
use piceli_core::Code;
use piceli_core::model::{ControllerDecl, ControllerNamespaces, OwnerMapping, parse_duration};
use piceli_core::rules::did_you_mean;
use piceli_core::rules::is_dns1123_label;
use piceli_core::spanned::Spanned;

/// The block's options; returns the resources `writes:`, `owns:` and `watches:` name, resolved with the
/// controller.
pub fn options(
    lw: &mut Lower,
    tail: &ControllerTail,
    owner: &str,
    decl: &mut ControllerDecl,
) -> Options {
    let Some(map) = &tail.options else {
        return Options::default();
    };
    let value = Value::Map(map.clone());
    let mut f = Fields::of(lw, Some(&value), format!("{owner} options"));
    let mut r = Reading::<Options>::new(owner.to_string());
    r.item.decl = std::mem::take(decl);
    keys::read(lw, &mut f, CONTROLLER_OPTIONS, &mut r);
    f.finish_keys(lw, CONTROLLER_OPTIONS);
    *decl = std::mem::take(&mut r.item.decl);
    r.item
}

/// A controller's options being read: the declaration, and the resources `writes:`, `owns:` and
/// `watches:` name.
#[derive(Default)]
pub struct Options {
    decl: ControllerDecl,
    /// `writes: [configmaps]`.
    pub writes: Vec<(NameTok, Sp)>,
    /// `owns: [configmaps, secrets]`.
    pub owns: Vec<NameTok>,
    /// `watches: [secrets => by_label("app")]`.
    pub watches: Vec<(NameTok, OwnerMapping)>,
    /// `backoff: ops::my_backoff`.
    pub backoff_fn: Option<syn::Path>,
    /// `reconcile_all_on: ops::config_changes`.
    pub reconcile_all_on: Option<syn::Path>,
}

/// The options of `controller … { … }`: their keys and their readers.
pub const CONTROLLER_OPTIONS: &[Key<Reading<Options>>] = &[
    Key::new(
        "labels",
        "labels an object must have to be reconciled: `{ key: \"value\" }` or a selector string",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            r.item.decl.labels = match v {
                Value::Str(s) => Some(s.value()),
                other => {
                    let labels = lw.labels(other, &format!("{} › {key}", r.owner));
                    let terms: Vec<String> = labels
                        .iter()
                        .map(|(k, v)| format!("{}={}", k.v, v.v))
                        .collect();
                    (!terms.is_empty()).then(|| terms.join(","))
                }
            };
        }),
    ),
    Key::new(
        "namespaces",
        "`all` or `[a, b]`: the namespaces it watches (default: the operator's)",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.decl.namespaces = namespaces(lw, v, &format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "every",
        "a periodic reconcile, as a duration (`\"5m\"`)",
        Some(|lw, r, _, _, v| match v {
            Some(v @ Value::Str(s)) => match parse_duration(&s.value()) {
                Some(d) => r.item.decl.every_ms = Some(d.as_millis() as u64),
                None => lw.fail(
                    Code::ControllerOption,
                    v.sp(),
                    format!("`every: {:?}` is not a duration", s.value()),
                    "write a whole number with `ms`, `s`, `m` or `h`, e.g. `every: \"5m\"`",
                ),
            },
            Some(other) => lw.wrong_type(other, "a duration string", "every: \"5m\""),
            None => {}
        }),
    ),
    Key::new(
        "owns",
        "kinds whose objects it owns (ownerReferences): a change or deletion of one reconciles its owner",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                r.item.owns = resources(lw, v, "owns: [configmaps, secrets]");
            }
        }),
    ),
    Key::new(
        "watches",
        "other kinds that reconcile the object they name: `[secrets => by_label(\"app\"), configmaps => by_name]`",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                watches(lw, v, &mut r.item);
            }
        }),
    ),
    Key::new(
        "backoff",
        "how failures are retried: `{ base: \"200ms\", max: \"5m\" }` (doubling, ±20% jitter), or the app's `fn(&HandlerError, u32) -> Duration`",
        Some(|lw, r, _, key, v| match v {
            Some(Value::Map(_)) => {
                if let Some(v) = v {
                    r.item.decl.backoff_ms = backoff(lw, v, &r.owner);
                }
            }
            Some(v) => {
                const EXAMPLE: &str =
                    "backoff: { base: \"200ms\", max: \"5m\" }` or `backoff: ops::my_backoff";
                if let Some((path, text)) = function(lw, v, EXAMPLE) {
                    let at = lw.loc(v.sp(), format!("{} › {key}", r.owner));
                    r.item.decl.backoff_fn = Some(Spanned::new(text, at));
                    r.item.backoff_fn = Some(path);
                }
            }
            None => {}
        }),
    ),
    Key::new(
        "reconcile_all_on",
        "the app's `fn() -> impl Stream<Item = ()>`: each item reconciles every object",
        Some(|lw, r, _, key, v| {
            let Some(v) = v else { return };
            if let Some((path, text)) = function(lw, v, "reconcile_all_on: ops::config_changes") {
                let at = lw.loc(v.sp(), format!("{} › {key}", r.owner));
                r.item.decl.reconcile_all_on = Some(Spanned::new(text, at));
                r.item.reconcile_all_on = Some(path);
            }
        }),
    ),
    Key::new(
        "writes",
        "what else it may write: `status` and further resources, for its RBAC",
        Some(|lw, r, _, _, v| {
            if let Some(v) = v {
                writes(lw, v, &mut r.item);
            }
        }),
    ),
];

/// A Rust path to one of the app's functions (`ops::config_changes`, or a name in scope), and its text.
fn function(lw: &mut Lower, v: &Value, example: &str) -> Option<(syn::Path, String)> {
    let path: syn::Path = match v {
        Value::RustPath(p) => p.clone(),
        Value::Path(parts)
            if parts.len() == 1 && syn::parse_str::<syn::Ident>(&parts[0].text).is_ok() =>
        {
            syn::Path::from(syn::Ident::new(&parts[0].text, parts[0].sp.start))
        }
        other => {
            lw.wrong_type(other, "the path of a Rust function", example);
            return None;
        }
    };
    let text = quote::quote!(#path).to_string().replace(' ', "");
    Some((path, text))
}

/// `namespaces: all` or `[team-a, team-b]`.
fn namespaces(lw: &mut Lower, v: &Value, desc: &str) -> ControllerNamespaces {
    match v {
        Value::Path(p) if p.len() == 1 && p[0].text == "all" => ControllerNamespaces::All,
        Value::List(items, _) => {
            let mut names = Vec::new();
            for item in items {
                if let Some(n) = lw.name(item, desc) {
                    if !is_dns1123_label(&n.v) {
                        lw.fail(
                            Code::ControllerOption,
                            item.sp(),
                            format!("`{}` is not a namespace name", n.v),
                            "namespaces are DNS labels, e.g. `team-a`",
                        );
                    }
                    names.push(n);
                }
            }
            ControllerNamespaces::List(names)
        }
        other => {
            lw.fail(
                Code::ControllerOption,
                other.sp(),
                "`namespaces:` is `all` or a list of namespaces",
                "write `namespaces: all` or `namespaces: [team-a, team-b]` (default: the operator's own)",
            );
            ControllerNamespaces::Operator
        }
    }
}

/// `writes: [status, configmaps]`: `status` is a flag of the declaration, the rest resolved later.
fn writes(lw: &mut Lower, v: &Value, o: &mut Options) {
    match v {
        Value::List(items, _) => {
            for item in items {
                match item {
                    Value::Path(parts) if !parts.is_empty() => {
                        let text: Vec<&str> = parts.iter().map(|p| p.text.as_str()).collect();
                        let sp = item.sp();
                        if text == ["status"] {
                            o.decl.writes_status = true;
                        } else {
                            let tok = NameTok {
                                text: text.join("."),
                                sp,
                                parts: parts.iter().map(|p| p.sp).collect(),
                            };
                            o.writes.push((tok, sp));
                        }
                    }
                    other => lw.wrong_type(other, "a resource name", "writes: [configmaps]"),
                }
            }
        }
        other => lw.wrong_type(other, "a list of resources", "writes: [status, configmaps]"),
    }
}

/// A resource as written in a list: `configmaps`, `deployments.apps`.
fn resource(lw: &mut Lower, item: &Value, example: &str) -> Option<NameTok> {
    match item {
        Value::Path(parts) if !parts.is_empty() => Some(NameTok {
            text: parts
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
                .join("."),
            sp: item.sp(),
            parts: parts.iter().map(|p| p.sp).collect(),
        }),
        other => {
            lw.wrong_type(other, "a resource name", example);
            None
        }
    }
}

/// `owns: [configmaps, secrets]`.
fn resources(lw: &mut Lower, v: &Value, example: &str) -> Vec<NameTok> {
    match v {
        Value::List(items, _) => items
            .iter()
            .filter_map(|item| resource(lw, item, example))
            .collect(),
        other => {
            lw.wrong_type(other, "a list of resources", example);
            Vec::new()
        }
    }
}

/// `watches: [secrets => by_label("app"), configmaps => by_name]`.
fn watches(lw: &mut Lower, v: &Value, o: &mut Options) {
    const EXAMPLE: &str = "watches: [secrets => by_label(\"app\")]";
    let Value::List(items, _) = v else {
        lw.wrong_type(
            v,
            "a list of `RESOURCE => by_label(\"KEY\")` or `RESOURCE => by_name`",
            EXAMPLE,
        );
        return;
    };
    for item in items {
        let Value::Arrow(what, how) = item else {
            lw.fail(
                Code::ControllerOption,
                item.sp(),
                "a watched resource needs the rule that names the objects it reconciles",
                "write `secrets => by_label(\"app\")` (the owner is named by the label `app`) or `secrets => by_name` (the owner has the object's name)",
            );
            continue;
        };
        let Some(tok) = resource(lw, what, EXAMPLE) else {
            continue;
        };
        if let Some(mapping) = mapping(lw, how) {
            o.watches.push((tok, mapping));
        }
    }
}

/// `by_label("app")` or `by_name`.
fn mapping(lw: &mut Lower, how: &Value) -> Option<OwnerMapping> {
    const RULES: [&str; 2] = ["by_label", "by_name"];
    match how {
        Value::Path(p) if p.len() == 1 && p[0].text == "by_name" => Some(OwnerMapping::Name),
        Value::Call(c) if c.name.text == "by_label" => {
            lw.max_args(c, 1, "by_label(\"app\")");
            let arg = lw.arg(c, 0, "the label's key", "by_label(\"app\")")?;
            let key = lw.str(arg, "watches › by_label")?;
            if key.v.is_empty() || key.v.contains(['=', '!', ',', ' ']) {
                lw.fail(
                    Code::ControllerOption,
                    arg.sp(),
                    format!("`{}` is not a label key", key.v),
                    "write the key alone, like `by_label(\"app\")`: the object's value of it names its owner",
                );
                return None;
            }
            Some(OwnerMapping::Label(key.v))
        }
        other => {
            let written = match other {
                Value::Path(p) if p.len() == 1 => Some(p[0].text.as_str()),
                Value::Call(c) => Some(c.name.text.as_str()),
                _ => None,
            };
            let help = match written.and_then(|w| did_you_mean(w, RULES)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "write `by_label(\"app\")` (the owner is named by that label) or `by_name` (the owner has the object's name)".into(),
            };
            lw.fail(
                Code::ControllerOption,
                other.sp(),
                "a watched resource maps to its owner `by_label(\"KEY\")` or `by_name`",
                help,
            );
            None
        }
    }
}

/// `backoff: { base: "200ms", max: "5m" }`, in milliseconds.
fn backoff(lw: &mut Lower, v: &Value, owner: &str) -> Option<(u64, u64)> {
    const EXAMPLE: &str = "backoff: { base: \"200ms\", max: \"5m\" }";
    let Value::Map(map) = v else {
        lw.wrong_type(v, "a map with `base` and `max`", EXAMPLE);
        return None;
    };
    let (mut base, mut max) = (200u64, 300_000u64);
    for (key, value) in &map.entries {
        let slot = match key.text.as_str() {
            "base" => &mut base,
            "max" => &mut max,
            other => {
                let help = match did_you_mean(other, ["base", "max"]) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("write `{EXAMPLE}`"),
                };
                lw.fail(
                    Code::ControllerOption,
                    key.sp,
                    format!("`{other}` is not a backoff setting of {owner}"),
                    help,
                );
                continue;
            }
        };
        match value {
            Value::Str(s) => match parse_duration(&s.value()) {
                Some(d) => *slot = u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
                None => lw.fail(
                    Code::ControllerOption,
                    value.sp(),
                    format!("`{}: {:?}` is not a duration", key.text, s.value()),
                    "write a whole number with `ms`, `s`, `m` or `h`, e.g. `\"200ms\"`",
                ),
            },
            other => lw.wrong_type(other, "a duration string", EXAMPLE),
        }
    }
    if base > max {
        lw.fail(
            Code::ControllerOption,
            map.sp,
            "the backoff's `base` is longer than its `max`",
            "the first retry waits `base`, doubling up to `max`: make `base` at most `max`",
        );
        return None;
    }
    Some((base, max))
}
