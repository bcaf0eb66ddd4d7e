//! Validation of a whole app: every rule, every problem collected (never stopping at the first).
//!
//! The macro runs this at compile time and turns each [`Diagnostic`] into a spanned compiler error; the
//! runtime runs it again once values written as Rust expressions are known, before any cluster call.

mod blocks;
mod builds;
mod externals;
mod includes;
mod names;
mod netpol;
mod operator;
mod pods;
mod refs;
mod secrets;
mod services;
mod targets;

pub use refs::custom::{Names, REFERENCES, Reference, pod_labels, pod_selector, service_labels};

use crate::codes::Code;
use crate::diag::Diagnostic;
use crate::model::App;
use crate::rules::{RuleError, did_you_mean};
use crate::spanned::{Loc, Spanned};
use std::collections::{HashMap, HashSet};

/// Every problem in the app (and in each target's overridden form), in a stable order.
pub fn validate(app: &App) -> Vec<Diagnostic> {
    let mut cx = Ctx::new(app);
    names::check(&mut cx, app);
    externals::check(&mut cx, app);
    pods::check(&mut cx, app);
    refs::check(&mut cx, app);
    netpol::check(&mut cx, app);
    targets::check(&mut cx, app);
    blocks::check(&mut cx, app);
    operator::check(&mut cx, app);
    builds::check(&mut cx, app);
    includes::check(&mut cx, app);
    secrets::check(&mut cx, app);
    let mut diags = cx.finish();
    diags.sort_by_key(|d| (d.at, d.code));
    diags.dedup();
    diags
}

/// Collects problems, dropping those about values only known at run time.
pub(crate) struct Ctx {
    dynamic: HashSet<Loc>,
    diags: Vec<Diagnostic>,
    /// Workload name → index of its first declaration (references are looked up often).
    pub(crate) workloads: HashMap<String, usize>,
    /// Service name → index of its first declaration.
    pub(crate) services: HashMap<String, usize>,
}

impl Ctx {
    fn new(app: &App) -> Self {
        let mut workloads = HashMap::new();
        for (i, w) in app.workloads.iter().enumerate() {
            workloads.entry(w.name.v.clone()).or_insert(i);
        }
        let mut services = HashMap::new();
        for (i, s) in app.services.iter().enumerate() {
            services.entry(s.name.v.clone()).or_insert(i);
        }
        Ctx {
            dynamic: app.dynamic.iter().copied().collect(),
            diags: Vec::new(),
            workloads,
            services,
        }
    }

    fn finish(self) -> Vec<Diagnostic> {
        self.diags
    }

    /// Whether the value is known now (not a Rust expression still to be evaluated).
    pub(crate) fn known<'a, T>(&self, v: &'a Spanned<T>) -> Option<&'a T> {
        (!self.dynamic.contains(&v.at)).then_some(&v.v)
    }

    /// Record a problem.
    pub(crate) fn error(
        &mut self,
        code: Code,
        at: Loc,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        if !self.dynamic.contains(&at) {
            self.diags.push(Diagnostic::new(code, at, message, help));
        }
    }

    /// Record that a name is declared a second time: the problem is at the later one, and names the
    /// earlier one too.
    pub(crate) fn declared_twice(
        &mut self,
        code: Code,
        at: Loc,
        first: Loc,
        message: impl Into<String>,
        help: impl Into<String>,
    ) {
        if !self.dynamic.contains(&at) {
            self.diags
                .push(Diagnostic::new(code, at, message, help).with_earlier(first));
        }
    }

    /// Record a rule's verdict on a value.
    pub(crate) fn rule(&mut self, code: Code, at: Loc, verdict: Result<(), RuleError>) {
        if let Err(e) = verdict {
            self.error(code, at, e.message, e.help);
        }
    }

    /// Report a name that refers to nothing, suggesting the closest declared one.
    pub(crate) fn unknown<'a>(
        &mut self,
        code: Code,
        what: &str,
        name: &Spanned<String>,
        candidates: impl IntoIterator<Item = &'a str> + Clone,
    ) {
        let declared: Vec<&str> = candidates.clone().into_iter().collect();
        let help = match did_you_mean(&name.v, candidates) {
            Some(s) => format!("did you mean `{s}`?"),
            None if declared.is_empty() => format!("declare a {what} named `{}` first", name.v),
            None => format!("declared: {}", list(&declared)),
        };
        self.error(code, name.at, format!("no {what} named `{}`", name.v), help);
    }
}

/// `a`, `b`, `c` for help lines.
pub fn list(items: &[&str]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
