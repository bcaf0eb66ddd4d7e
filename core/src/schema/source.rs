//! What the checking walk ([`super::check`]) reads of a schema, behind one trait: the static API table
//! ([`Shape`] and [`TypeId`], generated from the Kubernetes schema) or a CustomResourceDefinition's
//! `openAPIV3Schema` read when the macro runs ([`crate::crd::Node`]). One walk, two sources: the same
//! codes and messages for a Deployment's `spec:` and an HTTPRoute's.

use super::{ListKind, Shape, TypeId};

/// A node of a schema: what values go at one place.
pub trait Source<'s>: Copy {
    /// An object type of this schema.
    type Object: Copy;
    /// What values the node takes.
    fn view(self) -> View<'s, Self>;
    /// The field `name` of an object type: its node and whether it is required.
    fn field(ty: Self::Object, name: &str) -> Option<(Self, bool)>;
    /// Every field's name, in the schema's order.
    fn field_names(ty: Self::Object) -> Vec<&'s str>;
    /// The short name of an object type for messages (`PodSpec`, `HTTPRoute.spec.rules`).
    fn type_name(ty: Self::Object) -> &'s str;
    /// Fields the schema does not list are kept (`x-kubernetes-preserve-unknown-fields: true`).
    fn open(ty: Self::Object) -> bool;
}

/// Limits a schema puts on a scalar (a CRD's `pattern`, `format`, `minimum`, `maxLength`, …); the API
/// table has none.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits<'s> {
    /// A regular expression the string must match.
    pub pattern: Option<&'s str>,
    /// A format (`int32`, `date-time`, …).
    pub format: Option<&'s str>,
    /// The least value.
    pub minimum: Option<f64>,
    /// The greatest value.
    pub maximum: Option<f64>,
    /// The least length of a string.
    pub min_length: Option<u64>,
    /// The greatest length of a string.
    pub max_length: Option<u64>,
}

/// What values a node takes, as the walk sees it.
pub enum View<'s, S: Source<'s>> {
    /// A string.
    String(Limits<'s>),
    /// An integer.
    Integer(Limits<'s>),
    /// A number (integer or decimal).
    Number(Limits<'s>),
    /// `true` or `false`.
    Boolean,
    /// A resource quantity (`100m`, `1Gi`), by the DSL's rules.
    Quantity,
    /// An integer or a string.
    IntOrString(Limits<'s>),
    /// Anything.
    Any,
    /// A string, one of these values.
    Enum(Vec<&'s str>),
    /// An object of a type.
    Object(S::Object),
    /// A list of items; map lists name the key items are identified by.
    List(S, Option<&'s str>),
    /// A map from strings to values.
    Map(S),
}

impl<'s, S: Source<'s>> View<'s, S> {
    /// A short description for "expected …" messages.
    pub fn describe(&self) -> String {
        match self {
            View::String(_) => "a string".into(),
            View::Integer(_) => "an integer".into(),
            View::Number(_) => "a number".into(),
            View::Boolean => "`true` or `false`".into(),
            View::Quantity => "a quantity (e.g. \"100m\", \"1Gi\")".into(),
            View::IntOrString(_) => "an integer or a string".into(),
            View::Any => "any value".into(),
            View::Enum(values) => format!(
                "one of {}",
                values
                    .iter()
                    .map(|v| format!("\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            View::Object(t) => format!("a map (a {})", S::type_name(*t)),
            View::List(item, _) => format!("a list of {}", item.view().describe_plural()),
            View::Map(v) => format!("a map of {}", v.view().describe_plural()),
        }
    }

    fn describe_plural(&self) -> String {
        match self {
            View::String(_) | View::Enum(_) => "strings".into(),
            View::Integer(_) => "integers".into(),
            View::Object(t) => format!("{} maps", S::type_name(*t)),
            other => other.describe(),
        }
    }

    /// An example value, in the DSL's syntax.
    pub fn example(&self) -> String {
        match self {
            View::String(_) => "\"text\"".into(),
            View::Integer(_) | View::Number(_) => "1".into(),
            View::Boolean => "true".into(),
            View::Quantity => "\"100m\"".into(),
            View::IntOrString(_) => "8080".into(),
            View::Any => "{ … }".into(),
            View::Enum(values) => format!("\"{}\"", values.first().copied().unwrap_or("")),
            View::Object(_) | View::Map(_) => "{ key: … }".into(),
            View::List(..) => "[ … ]".into(),
        }
    }
}

/// The API table: a node is a [`Shape`], an object type a [`TypeId`].
impl Source<'static> for &'static Shape {
    type Object = TypeId;

    fn view(self) -> View<'static, Self> {
        let none = Limits::default();
        match self {
            Shape::String => View::String(none),
            Shape::Integer => View::Integer(none),
            Shape::Number => View::Number(none),
            Shape::Boolean => View::Boolean,
            Shape::Quantity => View::Quantity,
            Shape::IntOrString => View::IntOrString(none),
            Shape::Any => View::Any,
            Shape::Enum(values) => View::Enum(values.to_vec()),
            Shape::Object(t) => View::Object(*t),
            Shape::List(item, kind) => View::List(
                item,
                match kind {
                    ListKind::Map([key, ..]) => Some(key),
                    _ => None,
                },
            ),
            Shape::Map(value) => View::Map(value),
        }
    }

    fn field(ty: TypeId, name: &str) -> Option<(Self, bool)> {
        ty.field(name).map(|f| (&f.shape, f.required))
    }

    fn field_names(ty: TypeId) -> Vec<&'static str> {
        ty.def().fields.iter().map(|f| f.name).collect()
    }

    fn type_name(ty: TypeId) -> &'static str {
        ty.short_name()
    }

    fn open(_: TypeId) -> bool {
        false
    }
}
