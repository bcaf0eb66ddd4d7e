//! The generated `app!` source as a small tree (items, entries, values), built by the lowering and printed
//! by [`crate::print`]. Values from manifests convert with [`Dsl::from_json`].

use serde_json::Value;

/// A value in the DSL's syntax.
#[derive(Debug, Clone, PartialEq)]
pub enum Dsl {
    /// `"text"`.
    Str(String),
    /// `42`.
    Int(i64),
    /// `0.5`.
    Float(f64),
    /// `true`.
    Bool(bool),
    /// A reference to a declared name: `web`.
    Name(String),
    /// A dotted reference: `db.password`.
    Path(Vec<String>),
    /// `unpinned("nginx:1.27")`, `rule(groups: [""], verbs: ["get"])`: positional, then named arguments.
    Call(String, Vec<Dsl>, Vec<(String, Dsl)>),
    /// `80 => http`.
    Arrow(Box<Dsl>, Box<Dsl>),
    /// `{ key: value, … }`.
    Map(Vec<(String, Dsl)>),
    /// `[a, b]`.
    List(Vec<Dsl>),
}

impl Dsl {
    /// A manifest's JSON value in the DSL's syntax; `null` (which the API treats as unset) is `None`.
    pub fn from_json(v: &Value) -> Option<Dsl> {
        Some(match v {
            Value::Null => return None,
            Value::Bool(b) => Dsl::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Dsl::Int(i),
                None => Dsl::Float(n.as_f64().unwrap_or_default()),
            },
            Value::String(s) => Dsl::Str(s.clone()),
            Value::Array(items) => Dsl::List(items.iter().filter_map(Dsl::from_json).collect()),
            Value::Object(map) => Dsl::Map(
                map.iter()
                    .filter_map(|(k, v)| Dsl::from_json(v).map(|d| (k.clone(), d)))
                    .collect(),
            ),
        })
    }

    /// A map of strings (labels, annotations, selectors) from a JSON object.
    pub fn str_map(v: &serde_json::Map<String, Value>) -> Dsl {
        Dsl::Map(
            v.iter()
                .map(|(k, v)| {
                    let text = match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), Dsl::Str(text))
                })
                .collect(),
        )
    }

    /// `from_env("VAR")` and the like.
    pub fn call(name: &str, arg: impl Into<String>) -> Dsl {
        Dsl::Call(name.to_string(), vec![Dsl::Str(arg.into())], Vec::new())
    }
}

/// One top-level item: `KEYWORD NAME [-> ARROW] { entries }`, with `// piceli: …` comments above it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Item {
    /// Comments printed above the item (without the `// `).
    pub comments: Vec<String>,
    /// `deployment`, `service`, …
    pub keyword: String,
    /// The declared name.
    pub name: String,
    /// `-> NAME`.
    pub arrow: Option<String>,
    /// The body's entries, in order; an item without entries prints as `KEYWORD NAME;`.
    pub body: Vec<(String, Dsl)>,
}

impl Item {
    /// An item without a body yet.
    pub fn new(keyword: &str, name: &str) -> Item {
        Item {
            keyword: keyword.to_string(),
            name: name.to_string(),
            ..Item::default()
        }
    }

    /// Add an entry.
    pub fn entry(&mut self, key: &str, value: Dsl) {
        self.body.push((key.to_string(), value));
    }

    /// Add an entry for a JSON object's field when it has a value, as a schema-checked block or list.
    pub fn json_entry(&mut self, key: &str, value: Option<&Value>) {
        if let Some(d) = value.and_then(Dsl::from_json)
            && !is_empty_map(&d)
        {
            self.entry(key, d);
        }
    }
}

/// `{}` — a block with nothing left in it is not worth printing.
pub fn is_empty_map(d: &Dsl) -> bool {
    matches!(d, Dsl::Map(m) if m.is_empty())
}

/// The whole generated module.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    /// Lines printed at the top of the file (without `//! `).
    pub header: Vec<String>,
    /// The app's name.
    pub app: String,
    /// `target NAME = …;` text after the `=`.
    pub target: (String, String),
    /// The items, in order.
    pub items: Vec<Item>,
    /// Comments at the end of the app (objects left out, with their JSON).
    pub trailer: Vec<String>,
}
