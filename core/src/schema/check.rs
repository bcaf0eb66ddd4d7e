//! Checking a block against its API type: unknown fields (with did-you-mean), value types, enum values,
//! required fields and list-item keys, quantities and percentages by the DSL's own rules, and the limits
//! a CRD's schema sets (`pattern`, `format`, `minimum`, `maxLength`, …).
//!
//! One walk over any [`Source`]: the static API table or a CRD's schema. One problem per mistake: a field
//! that is unknown or has the wrong type is not looked into further.

use super::source::{Limits, Source, View};
use super::{Shape, TypeId};
use crate::codes::Code;
use crate::diag::Diagnostic;
use crate::model::{Block, BlockValue};
use crate::rules::{self, did_you_mean};
use crate::spanned::Name;

/// Every problem in `block`, read as an object of type `root`; `what` names the block in messages
/// (`deployment web › pod`). Required fields are not asked for in the root nor in the objects at
/// `generated` (dotted field paths, e.g. `jobTemplate.spec`): the DSL generates those (a PodSpec's
/// `containers`, a Container's `name`, a CronJob's job template).
pub fn check(
    block: &Block,
    root: TypeId,
    what: &str,
    generated: &[&str],
    out: &mut Vec<Diagnostic>,
) {
    check_in::<&'static Shape>(block, root, what, generated, out);
}

/// [`check`] over any schema: `root` is an object type of `S`. The root's own required fields are
/// asked for unless `""` is in `generated`.
pub fn check_in<'s, S: Source<'s>>(
    block: &Block,
    root: S::Object,
    what: &str,
    generated: &[&str],
    out: &mut Vec<Diagnostic>,
) {
    let cx = Walk { generated };
    cx.fields::<S>(block, root, what, "", out);
}

/// [`check_in`] that also asks for the root's required fields (a custom resource's `spec`).
pub fn check_object<'s, S: Source<'s>>(
    block: &Block,
    root: S::Object,
    what: &str,
    generated: &[&str],
    out: &mut Vec<Diagnostic>,
) {
    let cx = Walk { generated };
    cx.object::<S>(block, root, what, "", out);
}

struct Walk<'g> {
    generated: &'g [&'g str],
}

impl Walk<'_> {
    fn fields<'s, S: Source<'s>>(
        &self,
        block: &Block,
        ty: S::Object,
        what: &str,
        path: &str,
        out: &mut Vec<Diagnostic>,
    ) {
        for (key, value) in block.entries() {
            let inner = if path.is_empty() {
                key.v.clone()
            } else {
                format!("{path}.{}", key.v)
            };
            match S::field(ty, &key.v) {
                Some((node, _)) => self.value(
                    node,
                    Some(&key.v),
                    value,
                    &format!("{what} › {}", key.v),
                    &inner,
                    out,
                ),
                None if S::open(ty) => {}
                None => out.push(unknown::<S>(key, ty, what)),
            }
        }
    }

    fn object<'s, S: Source<'s>>(
        &self,
        block: &Block,
        ty: S::Object,
        what: &str,
        path: &str,
        out: &mut Vec<Diagnostic>,
    ) {
        self.fields::<S>(block, ty, what, path, out);
        if self.generated.contains(&path) {
            return;
        }
        // A misspelled required field is reported once, as unknown with its name as the suggestion.
        let misspelled = |name: &str| {
            block
                .entries()
                .iter()
                .any(|(k, _)| S::field(ty, &k.v).is_none() && did_you_mean(&k.v, [name]).is_some())
        };
        let missing: Vec<(&str, S)> = S::field_names(ty)
            .into_iter()
            .filter_map(|name| S::field(ty, name).map(|f| (name, f)))
            .filter(|(name, (_, required))| {
                *required && block.get(name).is_none() && !misspelled(name)
            })
            .map(|(name, (node, _))| (name, node))
            .collect();
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|(m, _)| format!("`{m}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let example = missing
                .iter()
                .map(|(name, node)| format!("{name}: {}", node.view().example()))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(Diagnostic::new(
                Code::ApiFieldMissing,
                block.at,
                format!("{what} lacks {list} (required in {})", S::type_name(ty)),
                format!("add {example}"),
            ));
        }
    }
}

fn unknown<'s, S: Source<'s>>(key: &Name, ty: S::Object, what: &str) -> Diagnostic {
    let names = S::field_names(ty);
    let squashed = key.v.replace(['_', '-'], "");
    let help = match did_you_mean(&key.v, names.iter().copied()).or_else(|| {
        names
            .iter()
            .copied()
            .find(|n| n.eq_ignore_ascii_case(&squashed))
    }) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!(
            "the fields of {} are: {}",
            S::type_name(ty),
            names.join(", ")
        ),
    };
    Diagnostic::new(
        Code::UnknownApiField,
        key.at,
        format!("{} has no field `{}` (in {what})", S::type_name(ty), key.v),
        help,
    )
}

impl Walk<'_> {
    fn value<'s, S: Source<'s>>(
        &self,
        node: S,
        key: Option<&str>,
        v: &BlockValue,
        what: &str,
        path: &str,
        out: &mut Vec<Diagnostic>,
    ) {
        if let BlockValue::Json(j) = v {
            // A Rust expression's value: unknown at compile time, checked as written once known.
            if let Some(tree) = BlockValue::from_json(&j.v, j.at) {
                self.value(node, key, &tree, what, path, out);
            }
            return;
        }
        match (node.view(), v) {
            (View::Any, _)
            | (View::Boolean, BlockValue::Bool(_))
            | (View::Quantity, BlockValue::Int(_) | BlockValue::Float(_)) => {}
            (View::String(limits), BlockValue::Str(s)) => {
                super::limits::string(&limits, s, what, out);
            }
            (View::Integer(limits), BlockValue::Int(n)) => {
                super::limits::number(&limits, n.v as f64, n.at, what, out);
            }
            (View::Number(limits), BlockValue::Int(n)) => {
                super::limits::number(&limits, n.v as f64, n.at, what, out);
            }
            (View::Number(limits), BlockValue::Float(n)) => {
                super::limits::number(&limits, n.v, n.at, what, out);
            }
            (View::IntOrString(limits), BlockValue::Int(n)) => {
                super::limits::number(&limits, n.v as f64, n.at, what, out);
            }
            (View::Quantity, BlockValue::Str(s)) => {
                let bytes = matches!(key, Some("memory" | "storage" | "ephemeral-storage"));
                let verdict = if bytes {
                    rules::memory_quantity(&s.v).map(|_| ())
                } else {
                    rules::parse_quantity(&s.v).map(|_| ())
                };
                if let Err(e) = verdict {
                    let code = if bytes && s.v.ends_with('m') && rules::parse_quantity(&s.v).is_ok()
                    {
                        Code::MilliMemory
                    } else {
                        Code::InvalidQuantity
                    };
                    out.push(Diagnostic::new(code, s.at, e.message, e.help));
                }
            }
            (View::IntOrString(limits), BlockValue::Str(s)) => {
                if matches!(
                    key,
                    Some("maxSurge" | "maxUnavailable" | "minAvailable" | "partition")
                ) && let Err(e) = rules::percent_or_int(&s.v)
                {
                    out.push(Diagnostic::new(Code::InvalidValue, s.at, e.message, e.help));
                }
                let limits = Limits {
                    format: None,
                    ..limits
                };
                super::limits::string(&limits, s, what, out);
            }
            (View::Enum(values), BlockValue::Str(s)) => {
                if !values.contains(&s.v.as_str()) {
                    let listed = values
                        .iter()
                        .map(|v| format!("\"{v}\""))
                        .collect::<Vec<_>>()
                        .join(", ");
                    let help = match did_you_mean(&s.v, values.iter().copied()) {
                        Some(best) => {
                            format!("did you mean \"{best}\"? ({what} is one of {listed})")
                        }
                        None => format!("{what} is one of {listed}"),
                    };
                    out.push(Diagnostic::new(
                        Code::ApiEnumValue,
                        s.at,
                        format!("\"{}\" is not a value of {what}", s.v),
                        help,
                    ));
                }
            }
            (View::Object(t), BlockValue::Map(m)) => self.object::<S>(m, t, what, path, out),
            (View::Map(inner), BlockValue::Map(m)) => {
                for (k, item) in m.entries() {
                    let at = format!("{what} › {}", k.v);
                    self.value(inner, Some(&k.v), item, &at, path, out);
                }
            }
            (View::List(item, merge_key), BlockValue::List(_, items)) => {
                for (i, entry) in items.iter().enumerate() {
                    let at = format!("{what}[{i}]");
                    if let (Some(merge_key), BlockValue::Map(m)) = (merge_key, entry)
                        && m.get(merge_key).is_none()
                        && !item_requires(item, merge_key)
                    {
                        out.push(Diagnostic::new(
                            Code::ApiFieldMissing,
                            m.at,
                            format!("this item of {what} has no `{merge_key}`"),
                            format!(
                                "items of {what} are identified by `{merge_key}`: add `{merge_key}: {}`",
                                item_field(item, merge_key)
                                    .map(|f| f.view().example())
                                    .unwrap_or_else(|| "…".into())
                            ),
                        ));
                    }
                    self.value(item, None, entry, &at, path, out);
                }
            }
            (expected, found) => out.push(Diagnostic::new(
                Code::ApiFieldType,
                found.at(),
                format!(
                    "{what} takes {}, not {}",
                    expected.describe(),
                    describe(found)
                ),
                format!("write e.g. `{}`", expected.example()),
            )),
        }
    }
}

/// The item type's own `required` already reports a missing key; do not report it twice.
fn item_requires<'s, S: Source<'s>>(item: S, key: &str) -> bool {
    match item.view() {
        View::Object(t) => S::field(t, key).is_some_and(|(_, required)| required),
        _ => false,
    }
}

fn item_field<'s, S: Source<'s>>(item: S, key: &str) -> Option<S> {
    match item.view() {
        View::Object(t) => S::field(t, key).map(|(node, _)| node),
        _ => None,
    }
}

fn describe(v: &BlockValue) -> &'static str {
    match v {
        BlockValue::Str(_) => "a string",
        BlockValue::Int(_) => "an integer",
        BlockValue::Float(_) => "a decimal number",
        BlockValue::Bool(_) => "a boolean",
        BlockValue::List(..) => "a list",
        BlockValue::Map(_) => "a map",
        BlockValue::Json(_) => "a Rust expression",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{CONTAINER, DEPLOYMENT_SPEC, POD_SPEC};
    use crate::spanned::{Loc, Spanned};

    fn key(k: &str, at: u32) -> Name {
        Spanned::new(k.to_string(), Loc(at))
    }
    fn s(v: &str, at: u32) -> BlockValue {
        BlockValue::Str(Spanned::new(v.to_string(), Loc(at)))
    }
    fn map(at: u32, entries: Vec<(Name, BlockValue)>) -> BlockValue {
        BlockValue::Map(Block::new(Loc(at), entries))
    }
    fn run(root: TypeId, entries: Vec<(Name, BlockValue)>) -> Vec<(Code, u32, String, String)> {
        let mut out = Vec::new();
        check(&Block::new(Loc(0), entries), root, "x", &[], &mut out);
        out.into_iter()
            .map(|d| (d.code, d.at.0, d.message, d.help))
            .collect()
    }

    #[test]
    fn rust_expression_values_are_checked_once_known() {
        let json = |v: serde_json::Value| BlockValue::Json(Spanned::new(v, Loc(2)));
        // At compile time the value is unknown (`null`): nothing to check.
        let got = run(
            POD_SPEC,
            vec![(key("tolerations", 1), json(serde_json::Value::Null))],
        );
        assert!(got.is_empty(), "{got:?}");
        // At run time: every problem, at the expression's location.
        let value =
            serde_json::json!([{ "key": "a", "operater": "Exists" }, { "effect": "Sometimes" }]);
        let got = run(POD_SPEC, vec![(key("tolerations", 1), json(value))]);
        let codes: Vec<(Code, u32)> = got.iter().map(|g| (g.0, g.1)).collect();
        assert_eq!(
            codes,
            [(Code::UnknownApiField, 2), (Code::ApiEnumValue, 2)],
            "{got:?}"
        );
        assert_eq!(got[0].3, "did you mean `operator`?");
        let got = run(
            POD_SPEC,
            vec![(
                key("securityContext", 1),
                json(serde_json::json!({ "runAsUser": "root" })),
            )],
        );
        assert_eq!(got[0].0, Code::ApiFieldType, "{got:?}");
    }

    #[test]
    fn unknown_field_suggests_the_schema_name() {
        let got = run(
            POD_SPEC,
            vec![(key("tolerationz", 1), BlockValue::List(Loc(2), vec![]))],
        );
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, Code::UnknownApiField);
        assert_eq!(got[0].1, 1);
        assert_eq!(got[0].3, "did you mean `tolerations`?");
        let got = run(
            CONTAINER,
            vec![(key("image_pull_policy", 1), s("Always", 2))],
        );
        assert_eq!(got[0].3, "did you mean `imagePullPolicy`?");
    }

    #[test]
    fn wrong_type_enum_and_required() {
        let sc = map(2, vec![(key("runAsUser", 3), s("root", 4))]);
        let got = run(CONTAINER, vec![(key("securityContext", 1), sc)]);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].0, got[0].1), (Code::ApiFieldType, 4));
        assert!(
            got[0].2.contains("takes an integer, not a string"),
            "{}",
            got[0].2
        );

        let got = run(
            CONTAINER,
            vec![(key("imagePullPolicy", 1), s("Allways", 2))],
        );
        assert_eq!((got[0].0, got[0].1), (Code::ApiEnumValue, 2));
        assert!(
            got[0].3.starts_with("did you mean \"Always\"?"),
            "{}",
            got[0].3
        );

        let tsc = map(
            3,
            vec![(key("maxSkew", 4), BlockValue::Int(Spanned::new(1, Loc(5))))],
        );
        let got = run(
            POD_SPEC,
            vec![(
                key("topologySpreadConstraints", 1),
                BlockValue::List(Loc(2), vec![tsc]),
            )],
        );
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].0, got[0].1), (Code::ApiFieldMissing, 3));
        assert!(
            got[0].2.contains("`topologyKey`, `whenUnsatisfiable`"),
            "{}",
            got[0].2
        );
    }

    #[test]
    fn list_items_need_their_merge_key_and_quantities_are_checked() {
        let vol = map(3, vec![(key("emptyDir", 4), map(5, vec![]))]);
        let got = run(
            POD_SPEC,
            vec![(key("volumes", 1), BlockValue::List(Loc(2), vec![vol]))],
        );
        // `name` is required by Volume itself: one error, not two.
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!((got[0].0, got[0].1), (Code::ApiFieldMissing, 3));
        let port = map(3, vec![(key("name", 4), s("http", 5))]);
        let got = run(
            CONTAINER,
            vec![(key("ports", 1), BlockValue::List(Loc(2), vec![port]))],
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].2.contains("`containerPort`"), "{}", got[0].2);
        let limits = map(3, vec![(key("memory", 4), s("512m", 5))]);
        let res = map(2, vec![(key("limits", 6), limits)]);
        let got = run(CONTAINER, vec![(key("resources", 1), res)]);
        assert_eq!((got[0].0, got[0].1), (Code::MilliMemory, 5));
        let strategy = map(
            2,
            vec![(
                key("rollingUpdate", 3),
                map(4, vec![(key("maxSurge", 5), s("120%", 6))]),
            )],
        );
        let got = run(DEPLOYMENT_SPEC, vec![(key("strategy", 1), strategy)]);
        assert_eq!((got[0].0, got[0].1), (Code::InvalidValue, 6));
    }
}
