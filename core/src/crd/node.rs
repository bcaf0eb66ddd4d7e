//! A CRD version's `openAPIV3Schema` as a tree the checking walk reads ([`Source`]): built from the
//! schema's JSON when the macro runs, and kept in the app's model (serialized, small: no descriptions)
//! when a value of a `resource` is a Rust expression, so the runtime checks that value the same way.

use crate::schema::source::{Limits, Source, View};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The type a schema node declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ty {
    /// `type: string`.
    String,
    /// `type: integer`.
    Integer,
    /// `type: number`.
    Number,
    /// `type: boolean`.
    Boolean,
    /// `type: object`: properties, or values (`additionalProperties`).
    Object,
    /// `type: array`.
    Array,
    /// `x-kubernetes-int-or-string: true`.
    IntOrString,
    /// No type (`x-kubernetes-preserve-unknown-fields` alone): anything.
    Any,
}

/// One node of the schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Its type.
    #[serde(rename = "t")]
    pub ty: Ty,
    /// For objects, a name for messages: the kind and the path (`HTTPRoute.spec.rules`).
    #[serde(rename = "n", default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// An object's properties, sorted by name.
    #[serde(rename = "p", default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<NodeField>,
    /// An array's items, or an object's values (`additionalProperties`).
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Node>>,
    /// `x-kubernetes-preserve-unknown-fields: true`: fields not listed are kept.
    #[serde(rename = "o", default, skip_serializing_if = "is_false")]
    pub open: bool,
    /// `enum`: the values a string may take.
    #[serde(rename = "e", default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// `pattern`.
    #[serde(rename = "re", default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `format`.
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `minimum`, `maximum`.
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    pub range: Option<(Option<f64>, Option<f64>)>,
    /// `minLength`, `maxLength`.
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    pub length: Option<(Option<u64>, Option<u64>)>,
    /// `x-kubernetes-list-map-keys`: what identifies an item of a map list.
    #[serde(rename = "k", default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
}

/// A property of an object node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeField {
    /// Its name.
    #[serde(rename = "n")]
    pub name: String,
    /// Listed in the object's `required`.
    #[serde(rename = "r", default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// Its schema.
    #[serde(rename = "s")]
    pub node: Node,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Node {
    /// The node of a JSON schema (`openAPIV3Schema` or one of its properties); `name` names it in messages.
    pub fn from_schema(schema: &Value, name: &str) -> Node {
        let flag = |k: &str| schema[k].as_bool().unwrap_or(false);
        let open = flag("x-kubernetes-preserve-unknown-fields");
        let ty = if flag("x-kubernetes-int-or-string") {
            Ty::IntOrString
        } else {
            match schema["type"].as_str() {
                Some("string") => Ty::String,
                Some("integer") => Ty::Integer,
                Some("number") => Ty::Number,
                Some("boolean") => Ty::Boolean,
                Some("array") => Ty::Array,
                Some("object") => Ty::Object,
                _ if schema.get("properties").is_some() => Ty::Object,
                _ => Ty::Any,
            }
        };
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut fields: Vec<NodeField> = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| NodeField {
                name: k.clone(),
                required: required.contains(&k.as_str()),
                node: Node::from_schema(v, &format!("{name}.{k}")),
            })
            .collect();
        fields.sort_by(|a, b| a.name.cmp(&b.name));
        let items = match ty {
            Ty::Array => schema
                .get("items")
                .map(|i| Box::new(Node::from_schema(i, name))),
            Ty::Object => schema
                .get("additionalProperties")
                .filter(|a| a.is_object())
                .map(|a| Box::new(Node::from_schema(a, name))),
            _ => None,
        };
        let text = |k: &str| schema[k].as_str().map(str::to_string);
        let range = (schema["minimum"].as_f64(), schema["maximum"].as_f64());
        let length = (schema["minLength"].as_u64(), schema["maxLength"].as_u64());
        Node {
            ty,
            name: if ty == Ty::Object {
                name.to_string()
            } else {
                String::new()
            },
            fields,
            items,
            open,
            values: schema["enum"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            pattern: text("pattern"),
            format: text("format"),
            range: (range != (None, None)).then_some(range),
            length: (length != (None, None)).then_some(length),
            keys: schema["x-kubernetes-list-map-keys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        }
    }

    /// The property `name`.
    pub fn field(&self, name: &str) -> Option<&NodeField> {
        self.fields
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.fields[i])
    }

    fn limits(&self) -> Limits<'_> {
        let (minimum, maximum) = self.range.unwrap_or_default();
        let (min_length, max_length) = self.length.unwrap_or_default();
        Limits {
            pattern: self.pattern.as_deref(),
            format: self.format.as_deref(),
            minimum,
            maximum,
            min_length,
            max_length,
        }
    }
}

/// The CRD's schema: a node is a [`Node`], and so is an object type.
impl<'s> Source<'s> for &'s Node {
    type Object = &'s Node;

    fn view(self) -> View<'s, Self> {
        match self.ty {
            Ty::String if !self.values.is_empty() => {
                View::Enum(self.values.iter().map(String::as_str).collect())
            }
            Ty::String => View::String(self.limits()),
            Ty::Integer => View::Integer(self.limits()),
            Ty::Number => View::Number(self.limits()),
            Ty::Boolean => View::Boolean,
            Ty::IntOrString => View::IntOrString(self.limits()),
            Ty::Array => match &self.items {
                Some(item) => View::List(item, self.keys.first().map(String::as_str)),
                None => View::Any,
            },
            Ty::Object if self.fields.is_empty() => match &self.items {
                Some(value) => View::Map(value),
                None if self.open => View::Any,
                // An object with no properties and no `additionalProperties`: the API server prunes
                // whatever it holds, so it takes an empty map.
                None => View::Object(self),
            },
            Ty::Object => View::Object(self),
            Ty::Any => View::Any,
        }
    }

    fn field(ty: &'s Node, name: &str) -> Option<(Self, bool)> {
        ty.field(name).map(|f| (&f.node, f.required))
    }

    fn field_names(ty: &'s Node) -> Vec<&'s str> {
        ty.fields.iter().map(|f| f.name.as_str()).collect()
    }

    fn type_name(ty: &'s Node) -> &'s str {
        &ty.name
    }

    fn open(ty: &'s Node) -> bool {
        ty.open
    }
}
