//! Values that remember where they came from, so an error can point at them.
//!
//! The macro gives every checked value a [`Loc`]: an index into a table it keeps of source tokens (to span
//! compile-time errors) and that the app also carries as human-readable paths (to name the field in
//! run-time errors). Values written as Rust expressions are filled in at run time at the same `Loc`.

use serde::{Deserialize, Serialize};
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

/// A value with the location it was written at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
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
