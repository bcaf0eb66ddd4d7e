//! Status helpers: conditions (meta/v1 `Condition`) with observedGeneration, set the way Kubernetes
//! expects — lastTransitionTime changes only when the condition's status does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::Resource;

/// A condition of `obj` as of its current generation: `type_` (UpperCamelCase, e.g. `Ready`), `status`
/// (true/false), a `reason` (UpperCamelCase) and a `message` for people.
pub fn condition<K: Resource>(
    obj: &K,
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: if status { "True" } else { "False" }.to_string(),
        reason: reason.to_string(),
        message: message.to_string(),
        observed_generation: obj.meta().generation,
        last_transition_time: Time(Timestamp::now()),
    }
}

/// Puts `new` into `conditions`, replacing the condition of the same type; keeps the old
/// lastTransitionTime when the status did not change. Returns whether anything but the time changed.
pub fn set_condition(conditions: &mut Vec<Condition>, mut new: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(old) => {
            if old.status == new.status {
                new.last_transition_time = old.last_transition_time.clone();
            }
            let changed = old.status != new.status
                || old.reason != new.reason
                || old.message != new.message
                || old.observed_generation != new.observed_generation;
            *old = new;
            changed
        }
        None => {
            conditions.push(new);
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    fn obj(generation: i64) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("a".into()),
                generation: Some(generation),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn a_condition_carries_the_generation_and_keeps_its_transition_time_while_unchanged() {
        let mut conditions = Vec::new();
        let first = condition(&obj(1), "Ready", true, "Lit", "the lamp is on");
        let since = first.last_transition_time.clone();
        assert!(set_condition(&mut conditions, first));
        assert_eq!(conditions[0].observed_generation, Some(1));
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(set_condition(
            &mut conditions,
            condition(&obj(2), "Ready", true, "Lit", "the lamp is on")
        ));
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].observed_generation, Some(2));
        assert_eq!(
            conditions[0].last_transition_time, since,
            "same status: same transition time"
        );
        assert!(!set_condition(
            &mut conditions,
            condition(&obj(2), "Ready", true, "Lit", "the lamp is on")
        ));
        set_condition(
            &mut conditions,
            condition(&obj(2), "Ready", false, "Off", "switched off"),
        );
        assert_ne!(conditions[0].last_transition_time, since);
        assert_eq!(conditions[0].status, "False");
    }
}
