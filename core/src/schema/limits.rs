//! The limits a CRD's schema sets on scalars, as the API server checks them: `pattern`, `format`
//! (`int32`, `int64`, `date-time`; other formats are not checked), `minimum`/`maximum`,
//! `minLength`/`maxLength`. The API table sets none, so built-in blocks never reach a check here.

use super::source::Limits;
use crate::codes::Code;
use crate::diag::Diagnostic;
use crate::spanned::{Loc, Spanned};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Problems of a string value.
pub(super) fn string(limits: &Limits, s: &Spanned<String>, what: &str, out: &mut Vec<Diagnostic>) {
    let len = s.v.chars().count() as u64;
    if let Some(min) = limits.min_length
        && len < min
    {
        out.push(limit(
            s.at,
            what,
            format!("be at least {min} characters long"),
            &s.v,
        ));
    }
    if let Some(max) = limits.max_length
        && len > max
    {
        out.push(limit(
            s.at,
            what,
            format!("be at most {max} characters long"),
            &s.v,
        ));
    }
    if let Some(pattern) = limits.pattern
        && matches(pattern, &s.v) == Some(false)
    {
        out.push(limit(s.at, what, format!("match `{pattern}`"), &s.v));
    }
    if limits.format == Some("date-time") && !date_time(&s.v) {
        out.push(limit(
            s.at,
            what,
            "be a date-time (RFC 3339, e.g. \"2026-01-31T12:00:00Z\")".into(),
            &s.v,
        ));
    }
}

/// Problems of a number.
pub(super) fn number(limits: &Limits, n: f64, at: Loc, what: &str, out: &mut Vec<Diagnostic>) {
    let text = if n.fract() == 0.0 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    };
    let (lo, hi) = match limits.format {
        Some("int32") => (Some(i32::MIN as f64), Some(i32::MAX as f64)),
        _ => (None, None),
    };
    if let Some(min) = limits.minimum.or(lo)
        && n < min
    {
        out.push(limit(at, what, format!("be at least {min}"), &text));
    }
    if let Some(max) = limits.maximum.or(hi)
        && n > max
    {
        out.push(limit(at, what, format!("be at most {max}"), &text));
    }
}

fn limit(at: Loc, what: &str, rule: String, value: &str) -> Diagnostic {
    Diagnostic::new(
        Code::ApiValueLimit,
        at,
        format!("{what} must {rule}, not `{value}`"),
        format!("the CRD's schema says it must {rule}: write a value that does"),
    )
}

/// Whether `text` matches `pattern`; `None` when the pattern is not one Rust's `regex` reads (ECMA
/// look-arounds, back-references): the API server checks it then. Compiled patterns are kept.
fn matches(pattern: &str, text: &str) -> Option<bool> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<regex::Regex>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().ok()?;
    let re = cache
        .entry(pattern.to_string())
        .or_insert_with(|| regex::Regex::new(pattern).ok());
    re.as_ref().map(|re| re.is_match(text))
}

/// RFC 3339 as the API server reads `date-time`.
fn date_time(text: &str) -> bool {
    text.parse::<jiff::Timestamp>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_string(limits: Limits, v: &str) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        string(&limits, &Spanned::new(v.into(), Loc(1)), "x", &mut out);
        out
    }

    #[test]
    fn patterns_lengths_and_formats() {
        let name = Limits {
            pattern: Some("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"),
            max_length: Some(5),
            ..Limits::default()
        };
        assert!(run_string(name, "web").is_empty());
        let got = run_string(name, "Web_API");
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got.iter().all(|d| d.code == Code::ApiValueLimit));
        assert!(
            got[1].message.contains("must match `^[a-z0-9]"),
            "{}",
            got[1].message
        );
        // A pattern `regex` cannot read is left to the API server.
        let lookahead = Limits {
            pattern: Some("^(?!x).*$"),
            ..Limits::default()
        };
        assert!(run_string(lookahead, "x").is_empty());
        let date = Limits {
            format: Some("date-time"),
            ..Limits::default()
        };
        assert!(run_string(date, "2026-01-31T12:00:00Z").is_empty());
        assert_eq!(run_string(date, "tomorrow").len(), 1);
    }

    #[test]
    fn bounds_and_int32() {
        let port = Limits {
            minimum: Some(1.0),
            maximum: Some(65535.0),
            format: Some("int32"),
            ..Limits::default()
        };
        let mut out = Vec::new();
        number(&port, 80.0, Loc(1), "port", &mut out);
        assert!(out.is_empty());
        number(&port, 70000.0, Loc(1), "port", &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].message, "port must be at most 65535, not `70000`");
        let mut out = Vec::new();
        let wide = Limits {
            format: Some("int32"),
            ..Limits::default()
        };
        number(&wide, 3e9, Loc(1), "n", &mut out);
        assert_eq!(out.len(), 1);
    }
}
