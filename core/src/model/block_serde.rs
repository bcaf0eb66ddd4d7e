//! How blocks are written in the model the macro embeds, and read back by the runtime: compactly, so that
//! loading an app with a thousand blocks stays cheap (issue 12's render budget).
//!
//! A value is `[at, value]`, the value as plain JSON: a string is a `Str`, an integer an `Int`, a number
//! with a fraction a `Float`, `true`/`false` a `Bool`, an array a `List` of such pairs, an object a `Map`
//! whose entries are `"key": [key_at, [at, value]]` in source order. A value from a Rust expression
//! giving JSON is `[at, 0, json]` (the JSON is `null` until run time). A [`Block`] is written as its
//! `Map` value. Values written as Rust expressions take their run-time value at load, as every spanned
//! value does ([`crate::spanned::with_fills`]).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use super::block::{Block, BlockValue};
use crate::spanned::{Loc, Spanned, fill_at};

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (self.at, Entries(&self.entries)).serialize(serializer)
    }
}

struct Entries<'a>(&'a [(crate::spanned::Name, BlockValue)]);

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(&key.v, &(key.at, value))?;
        }
        map.end()
    }
}

impl Serialize for BlockValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            BlockValue::Str(s) => (s.at, &s.v).serialize(serializer),
            BlockValue::Int(n) => (n.at, n.v).serialize(serializer),
            BlockValue::Float(f) => (f.at, f.v).serialize(serializer),
            BlockValue::Bool(b) => (b.at, b.v).serialize(serializer),
            BlockValue::List(at, items) => (at, items).serialize(serializer),
            BlockValue::Map(block) => block.serialize(serializer),
            BlockValue::Json(j) => {
                let mut t = serializer.serialize_tuple(3)?;
                t.serialize_element(&j.at)?;
                t.serialize_element(&0)?;
                t.serialize_element(&j.v)?;
                t.end()
            }
        }
    }
}

/// A value's payload as read, before its location is known to be filled at run time.
enum Payload {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<BlockValue>),
    Map(Vec<(crate::spanned::Name, BlockValue)>),
}

impl<'de> Deserialize<'de> for Payload {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(PayloadVisitor)
    }
}

struct PayloadVisitor;

impl<'de> Visitor<'de> for PayloadVisitor {
    type Value = Payload;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block value: a string, a number, a boolean, a list or a map")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Payload, E> {
        Ok(Payload::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Payload, E> {
        Ok(Payload::Str(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Payload, E> {
        Ok(Payload::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Payload, E> {
        i64::try_from(v)
            .map(Payload::Int)
            .map_err(|_| E::custom(format!("integer {v} does not fit a block's i64")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Payload, E> {
        Ok(Payload::Float(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Payload, E> {
        Ok(Payload::Bool(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Payload, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<BlockValue>()? {
            items.push(item);
        }
        Ok(Payload::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Payload, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<String>()? {
            let (key_at, value): (Loc, BlockValue) = map.next_value()?;
            entries.push((Spanned::new(key, key_at), value));
        }
        Ok(Payload::Map(entries))
    }
}

impl<'de> Deserialize<'de> for BlockValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = BlockValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a block value `[at, value]` or `[at, 0, json]`")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BlockValue, A::Error> {
        let at: Loc = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let payload: Payload = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        if let Some(json) = seq.next_element_seed(JsonSeed)? {
            let v = fill_at(at).unwrap_or(json);
            return Ok(BlockValue::Json(Spanned::new(v, at)));
        }
        let fill = fill_at(at);
        let filled = |what| {
            move |e: serde_json::Error| {
                de::Error::custom(format!("the run-time value at {at:?} is not {what}: {e}"))
            }
        };
        Ok(match payload {
            Payload::Str(v) => BlockValue::Str(Spanned::new(
                match fill {
                    Some(f) => serde_json::from_value(f).map_err(filled("a string"))?,
                    None => v,
                },
                at,
            )),
            Payload::Int(v) => BlockValue::Int(Spanned::new(
                match fill {
                    Some(f) => serde_json::from_value(f).map_err(filled("an integer"))?,
                    None => v,
                },
                at,
            )),
            Payload::Float(v) => BlockValue::Float(Spanned::new(
                match fill {
                    Some(f) => serde_json::from_value(f).map_err(filled("a number"))?,
                    None => v,
                },
                at,
            )),
            Payload::Bool(v) => BlockValue::Bool(Spanned::new(
                match fill {
                    Some(f) => serde_json::from_value(f).map_err(filled("a boolean"))?,
                    None => v,
                },
                at,
            )),
            Payload::List(items) => BlockValue::List(at, items),
            Payload::Map(entries) => BlockValue::Map(Block { at, entries }),
        })
    }
}

/// The third element of a `[at, 0, json]` value, as JSON.
struct JsonSeed;

impl<'de> DeserializeSeed<'de> for JsonSeed {
    type Value = serde_json::Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        serde_json::Value::deserialize(deserializer)
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match BlockValue::deserialize(deserializer)? {
            BlockValue::Map(block) => Ok(block),
            other => Err(de::Error::custom(format!(
                "a block must be a map, found {other:?}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spanned::with_fills;
    use std::collections::HashMap;

    fn sample() -> Block {
        let s = |v: &str, at| Spanned::new(v.to_string(), Loc(at));
        Block {
            at: Loc(1),
            entries: vec![
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
                    BlockValue::Map(Block {
                        at: Loc(14),
                        entries: vec![(s("z", 15), BlockValue::Int(Spanned::new(1, Loc(16))))],
                    }),
                ),
                (
                    s("a", 17),
                    BlockValue::Json(Spanned::new(serde_json::Value::Null, Loc(18))),
                ),
            ],
        }
    }

    #[test]
    fn a_block_round_trips_in_its_compact_form_keeping_order_and_locations() {
        let block = sample();
        let json = serde_json::to_string(&block).expect("serializes");
        assert!(
            json.starts_with(r#"[1,{"name":[2,[3,"web"]],"replicas":[4,[5,3]]"#),
            "{json}"
        );
        assert!(json.contains(r#""a":[17,[18,0,null]]"#), "{json}");
        let back: Block = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, block);
        // Entries keep source order, not the map's sorted one.
        assert_eq!(back.entries[1].0.v, "replicas");
    }

    #[test]
    fn run_time_values_fill_scalars_and_json_at_their_locations() {
        let json = serde_json::to_string(&sample()).expect("serializes");
        let fills = HashMap::from([
            (5, serde_json::json!(7)),
            (18, serde_json::json!([{ "key": "gpu" }])),
        ]);
        let back: Block = with_fills(fills, || serde_json::from_str(&json)).expect("parses");
        assert_eq!(
            back.get("replicas"),
            Some(&BlockValue::Int(Spanned::new(7, Loc(5))))
        );
        assert_eq!(
            back.get("a").map(BlockValue::to_json),
            Some(serde_json::json!([{ "key": "gpu" }]))
        );
        let wrong = HashMap::from([(5, serde_json::json!("seven"))]);
        let err = with_fills(wrong, || serde_json::from_str::<Block>(&json)).expect_err("a string");
        assert!(err.to_string().contains("not an integer"), "{err}");
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        for bad in [
            "[]",
            "[1]",
            r#"[1,"x"]"#,
            "{}",
            r#"[1,{"k":[2]}]"#,
            "[1,null]",
        ] {
            assert!(serde_json::from_str::<Block>(bad).is_err(), "{bad}");
        }
    }
}
