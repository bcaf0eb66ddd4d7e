//! The local cluster's request-head parsers: the first line is `METHOD PATH[?QUERY]` and goes through
//! `read_head` (route, legacy watch paths, query, authorization attributes, field selector against the
//! kind, label selector, `limit`, `timeoutSeconds`, `dryRun`, `continue`); the second and third lines are
//! parsed as a label and a field selector and matched against a pod; the rest goes through the Go JSON
//! syntax checker (which must accept whatever serde_json reads). No panic allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use piceli_sim::fuzzing::{FieldSelector, LabelSelector, Query, go_json_syntax_error, read_head};
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(4, '\n');
    let head = lines.next().unwrap_or("");
    let (method, target) = head.split_once(' ').unwrap_or(("GET", head));
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let _ = read_head(method, path, query);
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web", "tier": "front"}},
        "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}});
    if let Ok(labels) = LabelSelector::parse(lines.next().unwrap_or("")) {
        let _ = labels.matches(&pod);
    }
    if let Ok(fields) = FieldSelector::parse(lines.next().unwrap_or("")) {
        let _ = fields.matches(&pod);
    }
    let rest = lines.next().unwrap_or("");
    let _ = Query::parse(rest).int64("limit");
    let go = go_json_syntax_error(rest.as_bytes());
    if serde_json::from_str::<serde_json::Value>(rest).is_ok() {
        assert_eq!(
            go, None,
            "Go's syntax check refuses JSON serde_json reads: {rest:?}"
        );
    }
});
