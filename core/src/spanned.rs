//! Values that remember where they came from, so an error can point at them.
//!
//! The macro gives every checked value a [`Loc`]: an index into a table it keeps of source tokens (to span
//! compile-time errors) and that the app also carries as human-readable paths (to name the field in
//! run-time errors). Values written as Rust expressions are filled in at run time at the same `Loc`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;

/// Where a value came from: an index into the app's location table. `Loc::NONE` when unknown.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct Loc(pub u32);

impl Loc {
    /// A value with no recorded origin (built by code rather than the macro).
    pub const NONE: Loc = Loc(u32::MAX);
}

/// A value with the location it was written at. Serialized compactly as `[value, at]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spanned<T> {
    /// The value.
    pub v: T,
    /// Where it was written.
    pub at: Loc,
}

impl<T> Spanned<T> {
    /// A value at a location.
    pub fn new(v: T, at: Loc) -> Self {
        Spanned { v, at }
    }
    /// A value with no recorded origin.
    pub fn bare(v: T) -> Self {
        Spanned { v, at: Loc::NONE }
    }
}

impl<T> Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.v
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.v.fmt(f)
    }
}

/// A name as written (`web`, `web-api`, `"web.v2"`).
pub type Name = Spanned<String>;

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.v, self.at).serialize(serializer)
    }
}

thread_local! {
    static FILLS: RefCell<Option<HashMap<u32, serde_json::Value>>> = const { RefCell::new(None) };
}

/// Run `f` (a deserialization) so that every spanned value whose location has an entry in `fills` takes
/// that value instead of the placeholder in the input: how values written as Rust expressions are put
/// into the model without a second pass over it. With no fills, `f` runs as is and no value looks one up.
pub fn with_fills<R>(fills: HashMap<u32, serde_json::Value>, f: impl FnOnce() -> R) -> R {
    if fills.is_empty() {
        return f();
    }
    FILLS.with(|cell| *cell.borrow_mut() = Some(fills));
    let out = f();
    FILLS.with(|cell| *cell.borrow_mut() = None);
    out
}

/// The run-time value [`with_fills`] gives for location `at`, if any.
pub(crate) fn fill_at(at: Loc) -> Option<serde_json::Value> {
    FILLS.with(|cell| cell.borrow().as_ref().and_then(|m| m.get(&at.0).cloned()))
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (v, at): (T, Loc) = Deserialize::deserialize(deserializer)?;
        match fill_at(at) {
            Some(value) => serde_json::from_value(value)
                .map(|v| Spanned { v, at })
                .map_err(serde::de::Error::custom),
            None => Ok(Spanned { v, at }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_form_and_fills() {
        let s = Spanned::new("a".to_string(), Loc(3));
        let json = serde_json::to_string(&s).expect("serializes");
        assert_eq!(json, r#"["a",3]"#);
        let back: Spanned<String> = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, s);
        let filled: Spanned<String> =
            with_fills(HashMap::from([(3, serde_json::json!("b"))]), || {
                serde_json::from_str(&json).expect("parses")
            });
        assert_eq!(filled.v, "b");
        let untouched: Spanned<String> = serde_json::from_str(&json).expect("parses");
        assert_eq!(untouched.v, "a");
    }
}
