//! Event (v1 and events.k8s.io/v1): the columns `kubectl get events` prints, from either version's
//! field names.

use serde_json::{Value, json};

use crate::registry::strategy::Strategy;
use crate::registry::table::cells::{first, n, s, since};
use crate::registry::table::{Col, Printer};

pub struct Event;

impl Strategy for Event {
    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[
                Col("Last Seen", "string", 0),
                Col("Type", "string", 0),
                Col("Reason", "string", 0),
                Col("Object", "string", 0),
                Col("Subobject", "string", 1),
                Col("Source", "string", 1),
                Col("Message", "string", 0),
                Col("First Seen", "string", 1),
                Col("Count", "integer", 1),
                Col("Name", "string", 1),
            ],
            cells,
        })
    }
}

/// An Event row; core/v1 field names first, then the events.k8s.io/v1 ones.
fn cells(o: &Value) -> Vec<Value> {
    let ts = |ptrs: &[&str]| {
        let v = first(o, ptrs);
        (!v.is_empty()).then(|| json!(v))
    };
    let first_seen =
        ts(&["/firstTimestamp", "/deprecatedFirstTimestamp"]).or_else(|| ts(&["/eventTime"]));
    let first_seen = since(first_seen.as_ref());
    let mut last_seen = match ts(&["/lastTimestamp", "/deprecatedLastTimestamp"]) {
        Some(t) => since(Some(&t)),
        None => first_seen.clone(),
    };
    let mut count = o
        .get("count")
        .or_else(|| o.get("deprecatedCount"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if let Some(series) = o.get("series").filter(|v| v.is_object()) {
        last_seen = since(series.get("lastObservedTime"));
        count = n(series, "/count");
    } else if count == 0 {
        count = 1;
    }
    let regarding = o
        .get("involvedObject")
        .or_else(|| o.get("regarding"))
        .cloned()
        .unwrap_or(Value::Null);
    let kind = s(&regarding, "/kind").to_lowercase();
    let name = s(&regarding, "/name");
    let target = if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    };
    let component = first(
        o,
        &[
            "/source/component",
            "/reportingController",
            "/deprecatedSource/component",
        ],
    );
    let instance = first(
        o,
        &[
            "/source/host",
            "/reportingInstance",
            "/deprecatedSource/host",
        ],
    );
    let source = match (component.is_empty(), instance.is_empty()) {
        (true, _) => String::new(),
        (false, true) => component,
        (false, false) => format!("{component}, {instance}"),
    };
    vec![
        json!(last_seen),
        json!(s(o, "/type")),
        json!(s(o, "/reason")),
        json!(target),
        json!(s(&regarding, "/fieldPath")),
        json!(source),
        json!(first(o, &["/message", "/note"]).trim()),
        json!(first_seen),
        json!(count),
        json!(s(o, "/metadata/name")),
    ]
}
