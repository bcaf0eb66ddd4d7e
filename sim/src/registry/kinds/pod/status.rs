//! The status a Pod is created with, as the pod strategy's `PrepareForCreate` sets it: whatever the
//! client sent is replaced by `phase: Pending` and the pod's QoS class (`qos.GetPodQOS`).

use serde_json::{Value, json};

/// `Guaranteed`, `Burstable` or `BestEffort`, from the containers' (and init containers') resources.
pub fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| pod.pointer(&format!("/spec/{k}")).and_then(Value::as_array))
        .flatten()
        .collect();
    let quantities = |c: &Value, which: &str| -> Vec<(String, String)> {
        c.pointer(&format!("/resources/{which}"))
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.as_str() == "cpu" || k.as_str() == "memory")
            .filter_map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.clone(), v.to_string()))
                    .or_else(|| v.as_number().map(|n| (k.clone(), n.to_string())))
            })
            .filter(|(_, v)| !is_zero(v))
            .collect()
    };
    let mut any = false;
    let mut guaranteed = true;
    for c in &containers {
        let requests = quantities(c, "requests");
        let limits = quantities(c, "limits");
        any |= !requests.is_empty() || !limits.is_empty();
        let has_both_limits = ["cpu", "memory"]
            .iter()
            .all(|r| limits.iter().any(|(k, _)| k == r));
        // Requests default to limits; an explicit request must equal its limit.
        let requests_match = requests.iter().all(|(k, v)| {
            limits
                .iter()
                .any(|(lk, lv)| lk == k && same_quantity(lv, v))
        });
        if !has_both_limits || !requests_match {
            guaranteed = false;
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn is_zero(q: &str) -> bool {
    q.trim_end_matches(|c: char| c.is_ascii_alphabetic())
        .parse::<f64>()
        .is_ok_and(|n| n == 0.0)
}

fn same_quantity(a: &str, b: &str) -> bool {
    a == b || (to_milli(a).is_some() && to_milli(a) == to_milli(b))
}

/// A quantity in thousandths, for the common suffixes (enough to compare requests with limits).
fn to_milli(q: &str) -> Option<u128> {
    let split = q.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(q.len());
    let (num, suffix) = q.split_at(split);
    let n: f64 = num.parse().ok()?;
    let factor: f64 = match suffix {
        "" => 1000.0,
        "m" => 1.0,
        "k" => 1e6,
        "M" => 1e9,
        "G" => 1e12,
        "T" => 1e15,
        "Ki" => 1024.0 * 1000.0,
        "Mi" => 1024.0 * 1024.0 * 1000.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0 * 1000.0,
        "Ti" => 1024.0f64.powi(4) * 1000.0,
        _ => return None,
    };
    Some((n * factor).round() as u128)
}

/// Replaces the status of a pod being created.
pub fn on_create(pod: &mut Value) {
    let qos = qos_class(pod);
    pod["status"] = json!({"phase": "Pending", "qosClass": qos});
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(resources: Value) -> Value {
        json!({"spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]}})
    }

    #[test]
    fn qos_classes() {
        assert_eq!(qos_class(&pod(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&pod(json!({"requests": {"cpu": "100m"}}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&pod(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1Gi"}})
            )),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&pod(
                json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}})
            )),
            "Burstable"
        );
        let mut p = pod(json!({}));
        p["status"] = json!({"phase": "Running"});
        on_create(&mut p);
        assert_eq!(
            p["status"],
            json!({"phase": "Pending", "qosClass": "BestEffort"})
        );
    }
}
