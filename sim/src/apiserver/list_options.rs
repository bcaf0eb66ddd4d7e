//! `ListOptions` as kube-apiserver's list, watch and deletecollection handlers read them, before anything
//! is read or deleted: decoded from the query (the integers, then the label and field selectors — a
//! parse error is a 400 with the parser's message) and then validated (`ValidateListOptions`, a 422 on
//! `ListOptions.meta.k8s.io`).
//!
//! The local cluster serves watch lists (`sendInitialEvents`) as a cluster with the WatchList feature
//! gate on: kube-apiserver 1.33's own refusal of them (the gate is off by default) is not copied
//! (sim/FIDELITY.md).

use crate::apiserver::query::{Query, parse_bool};
use crate::go_text::quote;
use crate::registry::selectors::{FieldSelector, LabelSelector};
use crate::status::{ApiError, Cause};

/// Decodes and validates a list's, watch's or deletecollection's options from its query.
pub fn check(query: &Query) -> Result<(), ApiError> {
    // url.Values → v1.ListOptions, in the struct's field order: the integers.
    for key in ["timeoutSeconds", "limit"] {
        query.int64(key)?;
    }
    // v1 → internal: the selectors are parsed.
    LabelSelector::parse(query.get("labelSelector").unwrap_or(""))?;
    FieldSelector::parse(query.get("fieldSelector").unwrap_or(""))?;
    let causes = validate(query);
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
    }
}

fn forbidden(field: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {message}"),
        field: field.into(),
    }
}

fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| quote(s)).collect();
    Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: {}",
            quote(value),
            supported.join(", ")
        ),
        field: field.into(),
    }
}

/// `ValidateListOptions` (WatchList on): the rules for a list, or for a watch when the client's own
/// `watch` parameter asks for one (a deprecated `/watch/` path alone is validated as a list).
fn validate(query: &Query) -> Vec<Cause> {
    let rv = query.get("resourceVersion").unwrap_or("");
    let rv_match = query.get("resourceVersionMatch").unwrap_or("");
    let continued = !query.get("continue").unwrap_or("").is_empty();
    let send_initial = query.get("sendInitialEvents").map(parse_bool);
    let mut out = Vec::new();
    const MATCH: &str = "resourceVersionMatch";
    if query.sent_watch() {
        if send_initial.is_some() && rv_match != "NotOlderThan" {
            out.push(forbidden(
                MATCH,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !rv_match.is_empty() {
            if send_initial.is_none() {
                out.push(forbidden(
                    MATCH,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if rv_match != "NotOlderThan" {
                out.push(not_supported(MATCH, rv_match, &["NotOlderThan"]));
            }
            if continued {
                out.push(forbidden(
                    MATCH,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        return out;
    }
    if !rv_match.is_empty() {
        if rv.is_empty() {
            out.push(forbidden(
                MATCH,
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if continued {
            out.push(forbidden(
                MATCH,
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if rv_match != "Exact" && rv_match != "NotOlderThan" {
            out.push(not_supported(
                MATCH,
                rv_match,
                &["Exact", "NotOlderThan", ""],
            ));
        }
        if rv_match == "Exact" && rv == "0" {
            out.push(forbidden(
                MATCH,
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if send_initial.is_some() {
        out.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(raw: &str) -> (u16, String) {
        let e = check(&Query::parse(raw)).expect_err(raw);
        (e.code, e.message)
    }

    #[test]
    fn list_rules_as_kube_apiserver() {
        assert!(
            check(&Query::parse(
                "resourceVersion=5&resourceVersionMatch=NotOlderThan"
            ))
            .is_ok()
        );
        assert_eq!(
            message("resourceVersionMatch=Exact"),
            (
                422,
                "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".into()
            )
        );
        assert_eq!(
            message("resourceVersionMatch=x&continue=abc&sendInitialEvents=false").1,
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, resourceVersionMatch: Unsupported value: \"x\": supported values: \"Exact\", \"NotOlderThan\", \"\", sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]"
        );
        assert_eq!(
            message("resourceVersion=0&resourceVersionMatch=Exact").1,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
        );
    }

    #[test]
    fn watch_rules_follow_the_clients_own_watch_parameter() {
        assert!(
            check(&Query::parse(
                "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
            ))
            .is_ok()
        );
        assert_eq!(
            message("watch=true&sendInitialEvents=true").1,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
        );
        assert_eq!(
            message("watch=true&resourceVersionMatch=Exact").1,
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]"
        );
        // A deprecated /watch/ path is a watch, but its options are a list's unless `watch` says so.
        let mut q = Query::parse("sendInitialEvents=true");
        q.force_watch();
        assert!(q.flag("watch"));
        assert_eq!(
            check(&q).expect_err("list rules").message,
            "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"
        );
    }

    #[test]
    fn parse_errors_come_first_and_are_bad_requests() {
        assert_eq!(
            message("limit=x&labelSelector=__main__&resourceVersionMatch=Exact"),
            (
                400,
                "strconv.ParseInt: parsing \"x\": invalid syntax".into()
            )
        );
        let (code, msg) = message("labelSelector=__main__&resourceVersionMatch=Exact");
        assert_eq!(code, 400);
        assert!(msg.starts_with("unable to parse requirement: <nil>: Invalid value: \"__main__\": name part must consist of"), "{msg}");
        assert_eq!(
            message("fieldSelector=abc&resourceVersionMatch=Exact"),
            (
                400,
                "invalid selector: 'abc'; can't understand 'abc'".into()
            )
        );
    }
}
