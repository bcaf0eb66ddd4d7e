//! Schema-checked blocks (`pod: { … }`, `container: { … }`, `spec: { … }`): API fields as written.
//!
//! A block keeps the API's own field names and every value's location, so the schema check
//! ([`crate::schema::check`]) points at the offending key or value, at compile time and (for values
//! written as Rust expressions) at run time. Rendering merges it under what the DSL generates.
//!
//! In the model the macro embeds, a block is written the way it reads (`block_serde.rs`): its plain JSON,
//! with every location in one compact string next to it, so loading a block costs little more than
//! reading its JSON.

use std::fmt;
use std::sync::OnceLock;

use serde_json::value::RawValue;

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
///
/// A block read from an app binary's embedded model stays as its JSON text until something asks for its
/// entries (run-time checks, an assigned Rust expression): rendering merges the text, parsed once straight
/// into the object, so an app checked at compile time never builds the entries at all (issue 12's render
/// budget). A block built in code (the macro, the builder, tests) has its entries from the start.
#[derive(Clone, Default)]
pub struct Block {
    /// Where the braces are.
    pub at: Loc,
    /// Entries in source order: set when built, parsed from `raw` on first use when read.
    entries: OnceLock<Vec<(Name, BlockValue)>>,
    /// The block as the model wrote it, while nothing changed it.
    raw: Option<Box<RawBlock>>,
}

/// A block as the embedded model wrote it (`block_serde.rs`): its locations and its plain JSON.
#[derive(Clone, Debug)]
pub(super) struct RawBlock {
    /// Every location of the block, the block's own first.
    pub(super) locs: Box<str>,
    /// The block's plain JSON (an object).
    pub(super) body: Box<RawValue>,
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Block")
            .field("at", &self.at)
            .field("entries", &self.entries())
            .finish()
    }
}

/// Equal when the locations and the entries are (whether read from text or built).
impl PartialEq for Block {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.entries() == other.entries()
    }
}

impl Block {
    /// A block of these entries.
    pub fn new(at: Loc, entries: Vec<(Name, BlockValue)>) -> Block {
        Block {
            at,
            entries: OnceLock::from(entries),
            raw: None,
        }
    }

    /// A block read from the model: `at` and the JSON text, its entries parsed when first asked for.
    pub(super) fn from_raw(at: Loc, raw: RawBlock) -> Block {
        Block {
            at,
            entries: OnceLock::new(),
            raw: Some(Box::new(raw)),
        }
    }

    /// A block from its model JSON (`["LOCS", {…}]`), its entries read now: an error when the locations do
    /// not match the values, which reading lazily would show as an empty block.
    pub fn from_model_json(text: &str) -> Result<Block, serde_json::Error> {
        let mut block: Block = serde_json::from_str(text)?;
        if let Some(raw) = block.raw.take() {
            let _ = block.entries.set(super::block_serde::parse_raw(&raw)?);
            block.raw = Some(raw);
        }
        Ok(block)
    }

    /// Entries in source order. A block read from the model is parsed on the first call; the macro
    /// wrote it from the same model type and format (`MODEL_FORMAT`), so it reads back — should it not,
    /// the block reads as empty rather than stopping the program.
    pub fn entries(&self) -> &[(Name, BlockValue)] {
        self.entries.get_or_init(|| {
            self.raw
                .as_deref()
                .and_then(|raw| super::block_serde::parse_raw(raw).ok())
                .unwrap_or_default()
        })
    }

    /// The entries, to change: the block no longer renders from its model text.
    pub fn entries_mut(&mut self) -> &mut Vec<(Name, BlockValue)> {
        self.entries();
        self.raw = None;
        if self.entries.get().is_none() {
            let _ = self.entries.set(Vec::new());
        }
        match self.entries.get_mut() {
            Some(entries) => entries,
            None => unreachable!("the entries were set just above"),
        }
    }

    /// Whether the block sets nothing.
    pub fn is_empty(&self) -> bool {
        match (&self.raw, self.entries.get()) {
            (Some(raw), None) => raw.body.get() == "{}",
            _ => self.entries().is_empty(),
        }
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&BlockValue> {
        self.entries()
            .iter()
            .find(|(k, _)| k.v == key)
            .map(|(_, v)| v)
    }

    /// The value (a string, number, boolean or JSON; not a list or map) located at `at`, anywhere in the
    /// block: where the code `app!` generates puts the value of a Rust expression written in the block.
    /// `None` when no such value is there (a key's location is not a value's).
    pub fn value_at_mut(&mut self, at: Loc) -> Option<&mut BlockValue> {
        self.entries_mut()
            .iter_mut()
            .find_map(|(_, value)| value.value_at_mut(at))
    }

    /// The block's JSON as the model wrote it, parsed now, when nothing changed the block since it was
    /// read: what rendering merges (one parse, straight into the object).
    pub fn model_json(&self) -> Option<serde_json::Value> {
        let raw = self.raw.as_deref()?;
        serde_json::from_str(raw.body.get()).ok()
    }

    /// The string-valued map at `path` (`["selector", "matchLabels"]`), when it is one and not empty:
    /// `None` when the block leaves it unset or a value is not a string (yet: a Rust expression).
    pub fn labels_at(&self, path: &[&str]) -> Option<Vec<(String, String)>> {
        if self.is_empty() {
            return None;
        }
        let json = self.to_json();
        let map = path
            .iter()
            .try_fold(&json, |at, key| at.get(*key))?
            .as_object()?;
        let labels: Option<Vec<(String, String)>> = map
            .iter()
            .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        labels.filter(|l| !l.is_empty())
    }

    /// The block as JSON (keys in source order within serde_json's map).
    pub fn to_json(&self) -> serde_json::Value {
        if let Some(json) = self.model_json() {
            return json;
        }
        serde_json::Value::Object(
            self.entries()
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
            Value::Object(map) => BlockValue::Map(Block::new(
                at,
                map.iter()
                    .filter_map(|(k, v)| {
                        Some((Spanned::new(k.clone(), at), Self::from_json(v, at)?))
                    })
                    .collect(),
            )),
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
