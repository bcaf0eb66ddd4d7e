//! Kubernetes' YAML: a document read as `kubectl` and Helm read it (YAML 1.1 as sigs.k8s.io/yaml does).
//!
//! Where YAML 1.1 and 1.2 differ, the 1.1 reading wins: `0744` is octal (484), `yes`/`no`/`on`/`off`/`y`/`n`
//! are booleans, `~` is null, a plain mapping key that reads as a boolean or number becomes its JSON text
//! (`on:` is the key `"true"`, `0744:` the key `"484"`), and a float with no fraction is the integer JSON
//! writes for it (`1e3` is `1000`, `08` is `8`). Quoted scalars stay strings.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// Parse one YAML document into JSON as Kubernetes reads it.
pub fn from_str(doc: &str) -> Result<Value, serde_saphyr::Error> {
    let options = serde_saphyr::options! { legacy_octal_numbers: true };
    let node: Node = serde_saphyr::from_str_with_options(doc, options)?;
    node.into_json()
        .map_err(<serde_saphyr::Error as de::Error>::custom)
}

/// A YAML node whose mapping keys keep the type they resolved to.
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    fn into_json(self) -> Result<Value, String> {
        Ok(match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Int(i) => Value::from(i),
            Node::Uint(u) => Value::from(u),
            Node::Float(f) => float(f)?,
            Node::Str(s) => Value::String(s),
            Node::Seq(items) => Value::Array(
                items
                    .into_iter()
                    .map(Node::into_json)
                    .collect::<Result<_, _>>()?,
            ),
            Node::Map(entries) => {
                let mut map = Map::new();
                for (k, v) in entries {
                    map.insert(k.into_key()?, v.into_json()?);
                }
                Value::Object(map)
            }
        })
    }

    /// A mapping key as sigs.k8s.io/yaml writes it into JSON.
    fn into_key(self) -> Result<String, String> {
        match self {
            Node::Str(s) => Ok(s),
            Node::Bool(b) => Ok(b.to_string()),
            Node::Int(i) => Ok(i.to_string()),
            Node::Uint(u) => Ok(u.to_string()),
            Node::Float(f) => Ok(match float(f)? {
                Value::Number(n) => n.to_string(),
                other => other.to_string(),
            }),
            Node::Null => Err("a mapping key cannot be null".into()),
            Node::Seq(_) | Node::Map(_) => Err("a mapping key must be a scalar".into()),
        }
    }
}

/// A float as Go's `encoding/json` writes it: without a fraction when it has none.
fn float(f: f64) -> Result<Value, String> {
    if !f.is_finite() {
        return Err(format!("{f} is not a JSON number"));
    }
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        return Ok(Value::from(f as i64));
    }
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| format!("{f} is not a JSON number"))
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML node")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        i64::try_from(v)
            .map(Node::Int)
            .or_else(|_| u64::try_from(v).map(Node::Uint))
            .map_err(|_| E::custom(format!("{v} is out of range")))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(i64::try_from(v).map_or(Node::Uint(v), Node::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        u64::try_from(v)
            .map(|v| i64::try_from(v).map_or(Node::Uint(v), Node::Int))
            .map_err(|_| E::custom(format!("{v} is out of range")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(scalar: &str) -> Value {
        from_str(&format!("v: {scalar}\n"))
            .ok()
            .and_then(|v| v.get("v").cloned())
            .unwrap_or(json!("<error>"))
    }

    #[test]
    fn leading_zero_integers_are_octal() {
        assert_eq!(value("0744"), json!(484));
        assert_eq!(value("0644"), json!(420));
        assert_eq!(value("-0744"), json!(-484));
        assert_eq!(value("0"), json!(0));
        assert_eq!(value("0o744"), json!(484));
        assert_eq!(value("0x1F"), json!(31));
        // Not octal (an 8): YAML 1.1 reads a float, which JSON writes without a fraction.
        assert_eq!(value("08"), json!(8));
        assert_eq!(value("'0744'"), json!("0744"));
        assert_eq!(value("\"0744\""), json!("0744"));
    }

    #[test]
    fn yaml_1_1_booleans() {
        for t in [
            "yes", "Yes", "YES", "on", "On", "ON", "y", "Y", "true", "True",
        ] {
            assert_eq!(value(t), json!(true), "{t}");
        }
        for f in [
            "no", "No", "NO", "off", "Off", "OFF", "n", "N", "false", "FALSE",
        ] {
            assert_eq!(value(f), json!(false), "{f}");
        }
        assert_eq!(value("'yes'"), json!("yes"));
        assert_eq!(value("\"off\""), json!("off"));
    }

    #[test]
    fn nulls() {
        for n in ["~", "null", "Null", "NULL", ""] {
            assert_eq!(value(n), Value::Null, "{n:?}");
        }
        assert_eq!(value("'~'"), json!("~"));
    }

    #[test]
    fn numbers_as_json_writes_them() {
        assert_eq!(value("1e3"), json!(1000));
        assert_eq!(value("1.0"), json!(1));
        assert_eq!(value("1.5"), json!(1.5));
        assert_eq!(value("1_000"), json!(1000));
        assert_eq!(value("+12"), json!(12));
        // Sexagesimal and timestamps are strings to sigs.k8s.io/yaml.
        assert_eq!(value("1:20"), json!("1:20"));
        assert_eq!(value("2001-12-14"), json!("2001-12-14"));
        assert_eq!(value(".inf"), json!("<error>"));
    }

    #[test]
    fn keys_are_the_json_text_of_what_they_resolve_to() {
        let v = from_str("on: a\n0744: b\n1.5: d\nplain: e\n").ok();
        assert_eq!(
            v,
            Some(json!({"true": "a", "484": "b", "1.5": "d", "plain": "e"}))
        );
        assert_eq!(from_str("'on': c\n").ok(), Some(json!({"on": "c"})));
        assert!(from_str("~: a\n").is_err());
    }

    #[test]
    fn anchors_and_merge_keys() {
        let v = from_str("base: &b {x: 1}\nderived:\n  <<: *b\n  z: 2\n").ok();
        assert_eq!(
            v,
            Some(json!({"base": {"x": 1}, "derived": {"x": 1, "z": 2}}))
        );
    }
}
