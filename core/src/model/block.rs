//! Schema-checked blocks (`pod: { … }`, `container: { … }`, `spec: { … }`): API fields as written.
//!
//! A block keeps the API's own field names and every value's location, so the schema check
//! ([`crate::schema::check`]) points at the offending key or value, at compile time and (for values
//! written as Rust expressions) at run time. Rendering merges it under what the DSL generates.
//!
//! In the model the macro embeds, a block is written the way it reads (`block_serde.rs`): its plain JSON,
//! with every location in one compact string next to it, so loading a block costs little more than
//! reading its JSON.

use crate::spanned::{Loc, Name, Spanned};

/// A value in a block.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockValue {
    /// A string (also a Rust expression giving one).
    Str(Spanned<String>),
    /// An integer (also a Rust expression giving one).
    Int(Spanned<i64>),
    /// A decimal number.
    Float(Spanned<f64>),
    /// `true` or `false`.
    Bool(Spanned<bool>),
    /// `[ … ]`.
    List(Loc, Vec<BlockValue>),
    /// `{ key: value, … }`, keys as written.
    Map(Block),
    /// A Rust expression giving a map, a list or an object (any `serde::Serialize`, e.g. k8s-openapi's
    /// `Vec<Toleration>`), as JSON: `null` until run time, then checked by the same schema rules.
    Json(Spanned<serde_json::Value>),
}

/// A map in a block: `{ key: value, … }`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Block {
    /// Where the braces are.
    pub at: Loc,
    /// Entries in source order.
    pub entries: Vec<(Name, BlockValue)>,
}

impl Block {
    /// Whether the block sets nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&BlockValue> {
        self.entries
            .iter()
            .find(|(k, _)| k.v == key)
            .map(|(_, v)| v)
    }

    /// The value (a string, number, boolean or JSON; not a list or map) located at `at`, anywhere in the
    /// block: where the code `app!` generates puts the value of a Rust expression written in the block.
    /// `None` when no such value is there (a key's location is not a value's).
    pub fn value_at_mut(&mut self, at: Loc) -> Option<&mut BlockValue> {
        self.entries
            .iter_mut()
            .find_map(|(_, value)| value.value_at_mut(at))
    }

    /// The block as JSON (keys in source order within serde_json's map).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.entries
                .iter()
                .map(|(k, v)| (k.v.clone(), v.to_json()))
                .collect(),
        )
    }
}

impl BlockValue {
    /// Where the value is.
    pub fn at(&self) -> Loc {
        match self {
            BlockValue::Str(s) => s.at,
            BlockValue::Int(n) => n.at,
            BlockValue::Float(f) => f.at,
            BlockValue::Bool(b) => b.at,
            BlockValue::List(at, _) => *at,
            BlockValue::Map(m) => m.at,
            BlockValue::Json(j) => j.at,
        }
    }

    /// This value or one inside it, located at `at`, if it is not a list or map (a shortcut's map may
    /// share its location with the value in it).
    fn value_at_mut(&mut self, at: Loc) -> Option<&mut BlockValue> {
        match self {
            BlockValue::List(_, items) => items.iter_mut().find_map(|i| i.value_at_mut(at)),
            BlockValue::Map(m) => m.value_at_mut(at),
            leaf => (leaf.at() == at).then_some(leaf),
        }
    }

    /// A JSON value (from a Rust expression) as a block value, every part at `at`; `None` for `null`
    /// (nothing set). Object keys whose value is `null` are left out, as the API treats them.
    pub fn from_json(v: &serde_json::Value, at: Loc) -> Option<BlockValue> {
        use serde_json::Value;
        Some(match v {
            Value::Null => return None,
            Value::Bool(b) => BlockValue::Bool(Spanned::new(*b, at)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => BlockValue::Int(Spanned::new(i, at)),
                None => BlockValue::Float(Spanned::new(n.as_f64().unwrap_or_default(), at)),
            },
            Value::String(s) => BlockValue::Str(Spanned::new(s.clone(), at)),
            Value::Array(items) => BlockValue::List(
                at,
                items
                    .iter()
                    .filter_map(|i| Self::from_json(i, at))
                    .collect(),
            ),
            Value::Object(map) => BlockValue::Map(Block {
                at,
                entries: map
                    .iter()
                    .filter_map(|(k, v)| {
                        Some((Spanned::new(k.clone(), at), Self::from_json(v, at)?))
                    })
                    .collect(),
            }),
        })
    }

    /// The value as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            BlockValue::Str(s) => Value::String(s.v.clone()),
            BlockValue::Int(n) => Value::from(n.v),
            BlockValue::Float(f) => serde_json::Number::from_f64(f.v)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            BlockValue::Bool(b) => Value::Bool(b.v),
            BlockValue::List(_, items) => Value::Array(items.iter().map(Self::to_json).collect()),
            BlockValue::Map(m) => m.to_json(),
            BlockValue::Json(j) => j.v.clone(),
        }
    }
}
