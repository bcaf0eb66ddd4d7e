//! A block's values lowered into the model's [`Block`], over any schema [`Source`] (the API table for
//! built-in items, a CRD's schema for `resource` items): the schema says what a Rust expression must
//! produce (an integer or a string), turns quantities given as numbers (`cpu: 2`) into the API's strings
//! and durations given for `…Seconds` fields (`"30s"`) into seconds. The checks run in
//! `piceli_core::validate`.

use super::{DynamicKind, Lower};
use crate::ast::{Map, Value};
use piceli_core::Code;
use piceli_core::model::{Block, BlockValue};
use piceli_core::schema::source::{Source, View};
use piceli_core::spanned::Spanned;

/// What the keys of a map are read against.
pub enum Within<'s, S: Source<'s>> {
    /// The fields of an object type.
    Object(S::Object),
    /// Values of one schema (a map of them).
    Values(S),
    /// Nothing known: any value.
    Any,
}

impl Lower {
    /// The map `m` as a block, its keys read `within` a schema; `skip` are keys set elsewhere.
    pub(super) fn block_map<'s, S: Source<'s>>(
        &mut self,
        m: &Map,
        within: Within<'s, S>,
        desc: &str,
        skip: &[&str],
    ) -> Block {
        let at = self.loc(m.sp, desc.to_string());
        let mut entries: Vec<(piceli_core::Name, BlockValue)> = Vec::new();
        for (k, v) in &m.entries {
            if skip.contains(&k.text.as_str()) {
                continue;
            }
            if let Some((first, _)) = entries.iter().find(|(seen, _)| seen.v == k.text) {
                let first = self.span_at(first.at);
                self.fail(
                    Code::DuplicateKey,
                    k.sp,
                    format!("`{}` is given twice in {desc}", k.text),
                    super::keep_one(first),
                );
                continue;
            }
            let inner = match &within {
                Within::Object(t) => S::field(*t, &k.text).map(|(node, _)| node),
                Within::Values(s) => Some(*s),
                Within::Any => None,
            };
            let d = format!("{desc} › {}", k.text);
            let key = Spanned::new(k.text.clone(), self.loc(k.sp, d.clone()));
            if let Some(value) = self.block_value(v, inner, &k.text, &d) {
                entries.push((key, value));
            }
        }
        Block::new(at, entries)
    }

    fn block_value<'s, S: Source<'s>>(
        &mut self,
        v: &Value,
        node: Option<S>,
        key: &str,
        desc: &str,
    ) -> Option<BlockValue> {
        let view = node.map(|n| n.view());
        let value = match v {
            Value::Str(s) => {
                let at = self.loc(v.sp(), desc.to_string());
                match view {
                    Some(View::Integer(_)) if key.ends_with("Seconds") => {
                        match piceli_core::rules::duration(&s.value()) {
                            Ok(d) if d.subsec_nanos() == 0 => {
                                BlockValue::Int(Spanned::new(d.as_secs() as i64, at))
                            }
                            Ok(_) => {
                                self.fail(
                                    Code::InvalidValue,
                                    v.sp(),
                                    format!("`{key}` counts whole seconds"),
                                    "write a whole number of seconds, e.g. `30` or \"30s\"",
                                );
                                return None;
                            }
                            Err(e) => {
                                self.fail(Code::InvalidValue, v.sp(), e.message, e.help);
                                return None;
                            }
                        }
                    }
                    _ => BlockValue::Str(Spanned::new(s.value(), at)),
                }
            }
            Value::Int(n, sp) => {
                let at = self.loc(*sp, desc.to_string());
                match view {
                    Some(View::Quantity) => BlockValue::Str(Spanned::new(n.to_string(), at)),
                    _ => BlockValue::Int(Spanned::new(*n, at)),
                }
            }
            Value::Float(x, sp) => {
                let at = self.loc(*sp, desc.to_string());
                match view {
                    Some(View::Quantity) => BlockValue::Str(Spanned::new(x.to_string(), at)),
                    _ => BlockValue::Float(Spanned::new(*x, at)),
                }
            }
            Value::Bool(b, sp) => {
                BlockValue::Bool(Spanned::new(*b, self.loc(*sp, desc.to_string())))
            }
            Value::Map(m) => {
                let within = match view {
                    Some(View::Object(t)) => Within::Object(t),
                    Some(View::Map(s)) => Within::Values(s),
                    _ => Within::Any,
                };
                BlockValue::Map(self.block_map(m, within, desc, &[]))
            }
            Value::List(items, sp) => {
                let at = self.loc(*sp, desc.to_string());
                let item = match view {
                    Some(View::List(item, _)) => Some(item),
                    _ => None,
                };
                let items = items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, x)| self.block_value(x, item, key, &format!("{desc}[{i}]")))
                    .collect();
                BlockValue::List(at, items)
            }
            Value::Expr(e, sp) => {
                let at = self.loc(*sp, desc.to_string());
                match view {
                    Some(View::Integer(_)) => {
                        self.dynamic(at, DynamicKind::Int(e.clone()));
                        BlockValue::Int(Spanned::new(0, at))
                    }
                    Some(
                        View::String(_) | View::Quantity | View::Enum(_) | View::IntOrString(_),
                    ) => {
                        self.dynamic(at, DynamicKind::Str(e.clone()));
                        BlockValue::Str(Spanned::new(String::new(), at))
                    }
                    _ => {
                        self.dynamic(at, DynamicKind::Json(e.clone()));
                        BlockValue::Json(Spanned::new(serde_json::Value::Null, at))
                    }
                }
            }
            Value::Path(segs)
                if self.bare_names
                    && segs.len() == 1
                    && matches!(view, Some(View::String(_) | View::IntOrString(_))) =>
            {
                let at = self.loc(v.sp(), desc.to_string());
                BlockValue::Str(Spanned::new(segs[0].text.clone(), at))
            }
            // `(service api)` where a label selector goes: filled in once the app's items are known.
            Value::Select(s)
                if self.bare_names
                    && matches!(view, Some(View::Object(t)) if S::field(t, "matchLabels").is_some()) =>
            {
                self.selector_placeholder(s, desc)
            }
            Value::Path(_)
            | Value::Call(_)
            | Value::Arrow(..)
            | Value::RustPath(_)
            | Value::Select(_) => {
                let (expected, example) = match &view {
                    Some(View::Enum(values)) => (
                        view.as_ref().map(View::describe).unwrap_or_default(),
                        format!("\"{}\"", values.first().copied().unwrap_or("")),
                    ),
                    Some(other) => (other.describe(), other.example()),
                    None => ("any value".to_string(), "{ … }".to_string()),
                };
                self.fail(
                    Code::ApiFieldType,
                    v.sp(),
                    format!("{desc} takes {expected}, not {}", v.describe()),
                    format!("block values are strings, numbers, booleans, maps and lists: write e.g. `{example}`"),
                );
                return None;
            }
        };
        Some(value)
    }
}
