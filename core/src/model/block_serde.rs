//! How blocks are written in the model the macro embeds, and read back by the runtime: compactly, so that
//! loading an app with a thousand blocks stays cheap (issue 12's render budget).
//!
//! A [`Block`] is `["LOCS", BODY]`. BODY is the block as plain JSON, keys in source order: a string is a
//! `Str`, an integer an `Int`, a number with a fraction a `Float`, `true`/`false` a `Bool`, an array a
//! `List`, an object a `Map`. LOCS is every location of the block in one string (see `block_locs.rs`): the
//! block's own, then, walking BODY in order, each key's and each value's. A value's entry also says
//! whether it is JSON from a Rust expression (a `Json` value: its whole JSON is taken as is, `null` until
//! run time). So loading a block is one JSON parse and one pass over a short string; the locations follow the
//! keys in the order they are written, so BODY must be read in that order (`serde_json::from_str` does; a
//! `serde_json::Value` without `preserve_order` would not). A value written as a Rust expression is a
//! placeholder here (`""`, `0` or `null`); the code `app!` generates assigns the expression's value after
//! loading ([`Block::value_at_mut`]).
//!
//! The pair is the tuple struct `Block` (JSON writes it as an array), so that a serializer that looks —
//! the macro's, finding where each Rust expression sits in the model — knows a block when it meets one.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, SerializeTupleStruct, Serializer};
use serde::{Deserialize, Serialize};

use serde_json::value::RawValue;

use super::block::{Block, BlockValue, RawBlock};
use super::block_locs::{Reader, Writer};
use crate::spanned::{Loc, Name, Spanned};

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut w = Writer::default();
        w.plain(self.at);
        let entries = self.entries();
        for (key, value) in entries {
            write_locs(&mut w, key, value);
        }
        let mut t = serializer.serialize_tuple_struct("Block", 2)?;
        t.serialize_field(w.as_str())?;
        t.serialize_field(&Entries(entries))?;
        t.end()
    }
}

/// A map entry's locations: the key's, then the value's (and those inside it).
fn write_locs(w: &mut Writer, key: &Name, value: &BlockValue) {
    w.plain(key.at);
    write_value_locs(w, value);
}

fn write_value_locs(w: &mut Writer, value: &BlockValue) {
    w.value(value.at(), matches!(value, BlockValue::Json(_)));
    match value {
        BlockValue::List(_, items) => items.iter().for_each(|i| write_value_locs(w, i)),
        BlockValue::Map(m) => m.entries().iter().for_each(|(k, v)| write_locs(w, k, v)),
        _ => {}
    }
}

/// A map's entries as a plain JSON object.
struct Entries<'a>(&'a [(Name, BlockValue)]);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(&key.v, &Body(value))?;
        }
        map.end()
    }
}

/// A value as plain JSON.
struct Body<'a>(&'a BlockValue);

impl Serialize for Body<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            BlockValue::Str(s) => serializer.serialize_str(&s.v),
            BlockValue::Int(n) => serializer.serialize_i64(n.v),
            BlockValue::Float(f) => serializer.serialize_f64(f.v),
            BlockValue::Bool(b) => serializer.serialize_bool(b.v),
            BlockValue::List(_, items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(&Body(i))?;
                }
                seq.end()
            }
            BlockValue::Map(m) => Entries(m.entries()).serialize(serializer),
            BlockValue::Json(j) => j.v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(BlockVisitor)
    }
}

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Block;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block `[\"LOCS\", {…}]`")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Block, A::Error> {
        let mut locs: Reader = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let at = locs.plain().map_err(de::Error::custom)?;
        let body: Box<RawValue> = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if !body.get().starts_with('{') {
            return Err(de::Error::custom("a block's body is not a map"));
        }
        Ok(Block::from_raw(
            at,
            RawBlock {
                locs: locs.into_text(),
                body,
            },
        ))
    }
}

/// A block's entries from its model text: each key and value with its location. Fails when the
/// locations do not match the values (a model written by another format).
pub(super) fn parse_raw(raw: &RawBlock) -> Result<Vec<(Name, BlockValue)>, serde_json::Error> {
    let mut locs = Reader::borrowed(&raw.locs);
    locs.plain().map_err(de::Error::custom)?;
    let mut de = serde_json::Deserializer::from_str(raw.body.get());
    let entries = MapSeed(&mut locs).deserialize(&mut de)?;
    de.end()?;
    if !locs.is_done() {
        return Err(de::Error::custom(
            "a block's locations do not match its values (more locations than values)",
        ));
    }
    Ok(entries)
}

/// A map's entries, each key and value taking its location from the reader.
struct MapSeed<'a, 'r>(&'a mut Reader<'r>);

impl<'de> DeserializeSeed<'de> for MapSeed<'_, '_> {
    type Value = Vec<(Name, BlockValue)>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for MapSeed<'_, '_> {
    type Value = Vec<(Name, BlockValue)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block's map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<String>()? {
            let key_at = self.0.plain().map_err(de::Error::custom)?;
            let value = map.next_value_seed(ValueSeed(&mut *self.0))?;
            entries.push((Spanned::new(key, key_at), value));
        }
        Ok(entries)
    }
}

/// One value, its location (and whether it is a Rust expression's JSON) from the reader.
struct ValueSeed<'a, 'r>(&'a mut Reader<'r>);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = BlockValue;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let (at, json) = self.0.value().map_err(de::Error::custom)?;
        if json {
            let v = serde_json::Value::deserialize(deserializer)?;
            return Ok(BlockValue::Json(Spanned::new(v, at)));
        }
        deserializer.deserialize_any(ValueVisitor { at, locs: self.0 })
    }
}

struct ValueVisitor<'a, 'r> {
    at: Loc,
    locs: &'a mut Reader<'r>,
}

impl<'de> Visitor<'de> for ValueVisitor<'_, '_> {
    type Value = BlockValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block value: a string, a number, a boolean, a list or a map")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<BlockValue, E> {
        Ok(BlockValue::Str(Spanned::new(v.to_owned(), self.at)))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<BlockValue, E> {
        Ok(BlockValue::Str(Spanned::new(v, self.at)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<BlockValue, E> {
        Ok(BlockValue::Int(Spanned::new(v, self.at)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<BlockValue, E> {
        let v = i64::try_from(v)
            .map_err(|_| E::custom(format!("integer {v} does not fit a block's i64")))?;
        self.visit_i64(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<BlockValue, E> {
        Ok(BlockValue::Float(Spanned::new(v, self.at)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<BlockValue, E> {
        Ok(BlockValue::Bool(Spanned::new(v, self.at)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BlockValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(ValueSeed(&mut *self.locs))? {
            items.push(item);
        }
        Ok(BlockValue::List(self.at, items))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<BlockValue, A::Error> {
        let entries = MapSeed(self.locs).visit_map(map)?;
        Ok(BlockValue::Map(Block::new(self.at, entries)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Block {
        let s = |v: &str, at| Spanned::new(v.to_string(), Loc(at));
        Block::new(
            Loc(1),
            vec![
                (s("name", 2), BlockValue::Str(s("web", 3))),
                (s("replicas", 4), BlockValue::Int(Spanned::new(3, Loc(5)))),
                (s("ratio", 6), BlockValue::Float(Spanned::new(0.5, Loc(7)))),
                (
                    s("paused", 8),
                    BlockValue::Bool(Spanned::new(false, Loc(9))),
                ),
                (
                    s("args", 10),
                    BlockValue::List(Loc(11), vec![BlockValue::Str(s("-v", 12))]),
                ),
                (
                    s("nested", 13),
                    BlockValue::Map(Block::new(
                        Loc(14),
                        vec![(s("z", 15), BlockValue::Int(Spanned::new(1, Loc(16))))],
                    )),
                ),
                (
                    s("a", 17),
                    BlockValue::Json(Spanned::new(serde_json::Value::Null, Loc(18))),
                ),
            ],
        )
    }

    #[test]
    fn a_block_is_plain_json_with_its_locations_in_one_string() {
        let block = sample();
        let json = serde_json::to_string(&block).expect("serializes");
        assert_eq!(
            json,
            r#"["224242424244242425",{"name":"web","replicas":3,"ratio":0.5,"paused":false,"args":["-v"],"nested":{"z":1},"a":null}]"#
        );
        let back: Block = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, block);
        assert_eq!(Block::from_model_json(&json).expect("parses"), block);
        // Rendering reads the text as the model wrote it, the same JSON as the entries give.
        assert_eq!(back.model_json(), Some(block.to_json()));
        let mut changed = back.clone();
        changed.entries_mut().pop();
        assert_eq!(
            changed.model_json(),
            None,
            "a changed block no longer renders its text"
        );
        // Entries keep source order, not the map's sorted one.
        assert_eq!(back.entries()[1].0.v, "replicas");
        // Also read from a reader (the locations then are copied, not borrowed).
        let read: Block = serde_json::from_reader(json.as_bytes()).expect("parses");
        assert_eq!(read, block);
    }

    #[test]
    fn locations_out_of_order_and_json_from_expressions_round_trip() {
        let s = |v: &str, at| Spanned::new(v.to_string(), Loc(at));
        let block = Block::new(
            Loc(90),
            vec![
                (
                    s("tolerations", 5),
                    BlockValue::Json(Spanned::new(
                        serde_json::json!([{ "key": "gpu", "n": 1.5 }]),
                        Loc(70_000),
                    )),
                ),
                (s("x", Loc::NONE.0), BlockValue::Str(s("y", 0))),
                (s("empty", 3), BlockValue::Map(Block::default())),
            ],
        );
        let json = serde_json::to_string(&block).expect("serializes");
        let back: Block = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, block);
    }

    #[test]
    fn values_are_found_by_their_locations() {
        let mut block = sample();
        assert_eq!(
            block.value_at_mut(Loc(16)),
            Some(&mut BlockValue::Int(Spanned::new(1, Loc(16))))
        );
        assert!(matches!(
            block.value_at_mut(Loc(12)),
            Some(BlockValue::Str(s)) if s.v == "-v"
        ));
        assert!(matches!(
            block.value_at_mut(Loc(18)),
            Some(BlockValue::Json(_))
        ));
        // A key's location is not a value's.
        assert_eq!(block.value_at_mut(Loc(15)), None);
        assert_eq!(block.value_at_mut(Loc(99)), None);
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        for bad in [
            "[]",
            r#"["2"]"#,
            r#"["2","x"]"#,
            "{}",
            r#"["2",{"k":1}]"#,
            r#"["22",{"k":1}]"#,
            r#"["2242",{"k":1}]"#,
            r#"["224",{"k":null}]"#,
            r#"["2\"",{}]"#,
            r#"[2,{}]"#,
            r#"["2",null]"#,
            r#"["[1,{}]"]"#,
        ] {
            assert!(Block::from_model_json(bad).is_err(), "{bad}");
            // Read lazily, a block whose locations do not match reads as empty (never a panic).
            if let Ok(lazy) = serde_json::from_str::<Block>(bad) {
                assert!(lazy.entries().is_empty(), "{bad}");
            }
        }
    }
}
