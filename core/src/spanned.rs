//! Values that remember where they came from, so an error can point at them.
//!
//! The macro gives every checked value a [`Loc`]: an index into a table it keeps of source tokens (to span
//! compile-time errors) and that the app also carries as human-readable paths (to name the field in
//! run-time errors). A value written as a Rust expression keeps the `Loc` of the expression; the code
//! `app!` generates assigns it to its place in the model when the app binary starts.

use serde::ser::SerializeTupleStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;

/// Where a value came from: an index into the app's location table. `Loc::NONE` when unknown.
///
/// Serialized as its number; serializers that look (the macro's, finding where each value written as a
/// Rust expression sits in the model) see it as the newtype struct `Loc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Default)]
#[serde(transparent)]
pub struct Loc(pub u32);

impl Serialize for Loc {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct("Loc", &self.0)
    }
}

impl Loc {
    /// A value with no recorded origin (built by code rather than the macro).
    pub const NONE: Loc = Loc(u32::MAX);
}

/// A value with the location it was written at. Serialized compactly as `[value, at]` (the tuple struct
/// `Spanned`, which JSON writes as an array).
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
        let mut t = serializer.serialize_tuple_struct("Spanned", 2)?;
        t.serialize_field(&self.v)?;
        t.serialize_field(&self.at)?;
        t.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (v, at) = Deserialize::deserialize(deserializer)?;
        Ok(Spanned { v, at })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_form() {
        let s = Spanned::new("a".to_string(), Loc(3));
        let json = serde_json::to_string(&s).expect("serializes");
        assert_eq!(json, r#"["a",3]"#);
        let back: Spanned<String> = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, s);
        assert_eq!(serde_json::to_string(&Loc(7)).expect("serializes"), "7");
        let back: Spanned<Vec<Spanned<i64>>> =
            serde_json::from_str(r#"[[[1,2]],9]"#).expect("parses");
        assert_eq!(back.v[0], Spanned::new(1, Loc(2)));
    }
}
