//! Loading the model the macro embedded, and the conversions of values written as Rust expressions.
//!
//! Each conversion (`string`, `int`, `json`, `env`, `objects`) gives the typed value the code `app!`
//! generates then assigns to its place in the model ([`crate::assign`]); a Rust expression of another type
//! is a compile error at the expression, with the message of the conversion's trait.

use crate::error::Error;
use piceli_core::model::{App, Include};
use serde_json::Value;

/// A string value (from a Rust expression or `include_str!`).
pub fn string(v: impl TextValue) -> String {
    v.into_text()
}

/// An integer value from a Rust expression.
pub fn int(v: impl IntegerValue) -> i64 {
    v.into_integer()
}

/// What a Rust expression for a text field (`image:`, an env value, a quantity) may give.
#[diagnostic::on_unimplemented(
    message = "this Rust expression gives `{Self}`, and its field takes text",
    label = "expected text (`String`, `&str`, `Cow<str>`, `char`), found `{Self}`",
    note = "turn a number into text with `.to_string()` or `format!(\"{{n}}m\")`"
)]
pub trait TextValue {
    /// The text.
    fn into_text(self) -> String;
}

// Implemented for each text type rather than for every `Into<String>`, so that rustc reports a wrong
// type with this trait's message instead of a `From` bound deep inside `Into`.
macro_rules! text_values {
    ($($t:ty),*) => {$(
        impl TextValue for $t {
            fn into_text(self) -> String {
                self.into()
            }
        }
    )*};
}
text_values!(
    String,
    &str,
    &String,
    &mut str,
    Box<str>,
    std::borrow::Cow<'_, str>,
    char
);

/// What a Rust expression for a number field (`replicas:`, a port) may give.
#[diagnostic::on_unimplemented(
    message = "this Rust expression gives `{Self}`, and its field takes a number",
    label = "expected an integer (`i8`–`i64`, `u8`–`u32`), found `{Self}`",
    note = "a `usize` or `u64` converts with `i64::try_from(n)`; text parses with `.parse::<i64>()`"
)]
pub trait IntegerValue {
    /// The number.
    fn into_integer(self) -> i64;
}

macro_rules! integer_values {
    ($($t:ty),*) => {$(
        impl IntegerValue for $t {
            fn into_integer(self) -> i64 {
                self.into()
            }
        }
    )*};
}
integer_values!(i8, i16, i32, i64, u8, u16, u32);

/// A value for a schema-checked block, from a Rust expression giving a map, a list or an object.
pub fn json(v: impl BlockJson) -> Value {
    v.into_block_json()
}

/// A whole `env:` map from a Rust expression: its pairs of names and values, in order.
pub fn env(v: impl EnvPairs) -> EnvList {
    EnvList(v.into_env_pairs())
}

/// The variables of `env: (…)`, which the generated code adds to the container's `env`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvList(pub Vec<(String, String)>);

/// What `env: (…)` may give: pairs of a name and a value, such as `[("MODE", "prod")]`, a
/// `BTreeMap<String, String>` or a `Vec<(String, u16)>`. The names and values are checked like written
/// ones (PCL0029 for a name) before anything is rendered.
#[diagnostic::on_unimplemented(
    message = "`env: (…)` must give pairs of a name and a value, not `{Self}`",
    label = "this gives `{Self}`",
    note = "give e.g. `[(\"MODE\", \"prod\")]`, a `BTreeMap<String, String>`, or an iterator of `(name, value)` where the name converts into `String` and the value implements `Display`"
)]
pub trait EnvPairs {
    /// The pairs, in order.
    fn into_env_pairs(self) -> Vec<(String, String)>;
}

impl<I, K, V> EnvPairs for I
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: std::fmt::Display,
{
    fn into_env_pairs(self) -> Vec<(String, String)> {
        self.into_iter()
            .map(|(k, v)| (k.into(), v.to_string()))
            .collect()
    }
}

/// What a Rust expression in a `pod:`/`container:`/`spec:` block may give: anything serde serializes
/// (k8s-openapi types such as `Vec<Toleration>`, `serde_json::Value`, maps, your own types). The value is
/// checked against the Kubernetes schema before anything is sent, like a value written in the block.
#[diagnostic::on_unimplemented(
    message = "a Rust expression in a schema-checked block must give a value serde can serialize, not `{Self}`",
    label = "this gives `{Self}`, which does not implement `serde::Serialize`",
    note = "give a k8s-openapi type (e.g. `Vec<Toleration>`), a `serde_json::Value`, or a type with `#[derive(serde::Serialize)]`"
)]
pub trait BlockJson {
    /// The value as JSON. A value serde cannot write as JSON (a map with non-string keys) becomes a
    /// string saying so, which the schema check then reports at the block's field.
    fn into_block_json(self) -> Value;
}

impl<T: serde::Serialize> BlockJson for T {
    fn into_block_json(self) -> Value {
        serde_json::to_value(&self)
            .unwrap_or_else(|e| Value::String(format!("(not a JSON value: {e})")))
    }
}

/// Objects built in Rust, for `include objects((…))`.
pub fn objects(v: impl IntoObjects) -> Objects {
    Objects(v.into_objects())
}

/// The objects of `include objects((…))`, which the generated code puts into its include.
#[derive(Debug, Clone, PartialEq)]
pub struct Objects(pub Vec<Value>);

/// Things that can be included as Kubernetes objects: a `Vec` of one k8s-openapi type, or a `Vec` of
/// [`Object`]s (mixed kinds).
pub trait IntoObjects {
    /// The objects as JSON (with `apiVersion` and `kind`).
    fn into_objects(self) -> Vec<Value>;
}

/// One object of any kind, for `include objects((vec![Object::new(a), Object::new(b)]))`.
#[derive(Debug, Clone, PartialEq)]
pub struct Object(pub Value);

impl Object {
    /// Any k8s-openapi resource.
    pub fn new<T: k8s_openapi::Resource + serde::Serialize>(resource: &T) -> Object {
        Object(serde_json::to_value(resource).unwrap_or(Value::Null))
    }
}

impl<T: k8s_openapi::Resource + serde::Serialize> IntoObjects for Vec<T> {
    fn into_objects(self) -> Vec<Value> {
        self.iter()
            .filter_map(|o| serde_json::to_value(o).ok())
            .collect()
    }
}

impl IntoObjects for Vec<Object> {
    fn into_objects(self) -> Vec<Value> {
        self.into_iter().map(|o| o.0).collect()
    }
}

/// The app from the macro's JSON (of model format `format`) and its location table. The values written as
/// Rust expressions are placeholders in it, which the generated code then assigns ([`crate::assign`]).
/// The JSON is generated by the macro from the same model type, so a mismatch — another format, or JSON
/// this runtime cannot read — means piceli-macros and piceli-runtime of different releases: it yields an
/// app with no name and the reason in `load_error`, which [`check`] reports (never a panic).
pub fn load(format: u32, model: &str, locations: &'static str) -> App {
    if format != piceli_core::model::MODEL_FORMAT {
        return App {
            load_error: Some(format!(
                "the app was compiled with model format {format}, and this runtime reads format {}",
                piceli_core::model::MODEL_FORMAT
            )),
            ..App::default()
        };
    }
    let mut app: App = match serde_json::from_str(model) {
        Ok(app) => app,
        Err(e) => {
            return App {
                load_error: Some(format!(
                    "the embedded model does not read as this runtime's: {e}"
                )),
                ..App::default()
            };
        }
    };
    app.locations = piceli_core::model::Locations::from_text(locations);
    // With no value written as a Rust expression, the macro checked everything already.
    app.checked_at_compile_time = app.dynamic.is_empty() && !app.name.v.is_empty();
    app.dynamic.clear();
    app
}

/// Every problem in the app now that all values are known: the same rules, codes and messages as at
/// compile time, located by description instead of span. Also checks included files.
pub fn check(app: &App) -> Result<(), Error> {
    if let Some(reason) = &app.load_error {
        return Err(Error::EmbeddedModel(reason.clone()));
    }
    if app.name.v.is_empty() {
        return Err(Error::Render(
            "the embedded app model could not be read".into(),
        ));
    }
    // The macro refused to compile an app with problems; with no run-time values nothing changed since.
    let problems = if app.checked_at_compile_time {
        Vec::new()
    } else {
        piceli_core::validate::validate(app)
    };
    if !problems.is_empty() {
        return Err(Error::Invalid(
            problems
                .into_iter()
                .map(|d| {
                    let at = app.describe(d.at).to_string();
                    (d, at)
                })
                .collect(),
        ));
    }
    for inc in &app.includes {
        match inc {
            Include::File {
                path,
                contents,
                json,
            } => {
                piceli_core::include::parse_objects(&contents.v, *json).map_err(|e| {
                    Error::Include {
                        code: e.code,
                        message: e.describe(&path.v),
                    }
                })?;
            }
            Include::Objects { objects, .. } => {
                piceli_core::include::check_values(objects).map_err(|e| Error::Include {
                    code: e.code,
                    message: format!("include objects, object #{}: {}", e.line, e.message),
                })?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::Coded;

    #[test]
    fn a_model_of_another_format_is_refused_with_both_versions() {
        let app = load(piceli_core::model::MODEL_FORMAT + 1, "{}", "");
        let err = check(&app).expect_err("another format is refused");
        assert_eq!(err.code(), piceli_core::Code::ModelFormat);
        let text = err.to_string();
        assert!(
            text.contains(&format!("format {}", piceli_core::model::MODEL_FORMAT + 1)),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "reads format {}",
                piceli_core::model::MODEL_FORMAT
            )),
            "{text}"
        );
    }

    #[test]
    fn a_model_of_format_3_with_nested_block_locations_is_refused_by_its_version() {
        // Format 3 wrote each block value as `[at, value]`; format 4 reads blocks differently.
        let old = r#"{"name":["web",0],"workloads":[{"spec":[1,{"minReadySeconds":[2,[3,5]]}]}]}"#;
        let err = check(&load(3, old, "")).expect_err("format 3 is refused");
        assert_eq!(err.code(), piceli_core::Code::ModelFormat);
        assert!(
            err.to_string().contains(&format!(
                "compiled with model format 3, and this runtime reads format {}",
                piceli_core::model::MODEL_FORMAT
            )),
            "{err}"
        );
    }

    #[test]
    fn a_model_this_runtime_cannot_read_is_refused_with_the_serde_error() {
        let app = load(piceli_core::model::MODEL_FORMAT, r#"{"name": 7}"#, "");
        let err = check(&app).expect_err("an unreadable model is refused");
        assert_eq!(err.code(), piceli_core::Code::ModelFormat);
        assert!(err.to_string().contains("invalid type"), "{err}");
        assert!(
            err.help().contains("cargo update -p piceli"),
            "{}",
            err.help()
        );
    }
}
