//! A problem found in an app: a fixed code, where, what, and how to fix it.

use crate::codes::Code;
use crate::spanned::Loc;
use std::fmt;

/// One problem in an app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The fixed code.
    pub code: Code,
    /// Where (the narrowest value).
    pub at: Loc,
    /// What is wrong, quoting the offending value.
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// An earlier declaration the problem is about (the first of two with one name), which the
    /// compile-time message names by its line.
    pub earlier: Option<Loc>,
}

impl Diagnostic {
    /// A problem at a location.
    pub fn new(code: Code, at: Loc, message: impl Into<String>, help: impl Into<String>) -> Self {
        Diagnostic {
            code,
            at,
            message: message.into(),
            help: help.into(),
            earlier: None,
        }
    }

    /// The same problem, about an earlier declaration as well (the first of two with one name).
    pub fn with_earlier(mut self, at: Loc) -> Self {
        self.earlier = Some(at);
        self
    }

    /// The compile-time form: `PCL0001: message` (rustc prints `help:` separately).
    pub fn headline(&self) -> String {
        format!("{}: {}", self.code, self.message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}\n  help: {}", self.code, self.message, self.help)
    }
}
