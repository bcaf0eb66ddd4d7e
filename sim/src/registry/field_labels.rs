//! Which fields a field selector may name, per kind, as kube-apiserver 1.33's field label conversion
//! functions allow; anything else is the apiserver's 400 with its exact message.

use crate::registry::ResourceType;
use crate::registry::selectors::FieldSelector;
use crate::status::ApiError;

const EVENT_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

const POD_FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
];

/// The labels a kind's own conversion function accepts, or `None` for kinds that use the default
/// (`metadata.name`, `metadata.namespace`) or that are served here without checking.
fn own_labels(rt: &ResourceType) -> Option<Vec<String>> {
    let list: &[&str] = match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => POD_FIELDS,
        ("", "Event") => EVENT_FIELDS,
        ("", "Node") => &["metadata.name", "spec.unschedulable"],
        ("", "Namespace") => &["metadata.name", "status.phase"],
        ("", "Secret") => &["metadata.name", "metadata.namespace", "type"],
        ("", "Service") => &[
            "metadata.name",
            "metadata.namespace",
            "spec.clusterIP",
            "spec.type",
        ],
        ("", "ReplicationController") | ("apps", "ReplicaSet") => {
            &["metadata.name", "metadata.namespace", "status.replicas"]
        }
        ("batch", "Job") | ("apps", "StatefulSet") => {
            &["metadata.name", "metadata.namespace", "status.successful"]
        }
        _ if rt.crd => {
            let mut own: Vec<String> = rt.selectable_fields.clone();
            own.push("metadata.name".into());
            if rt.namespaced {
                own.push("metadata.namespace".into());
            }
            return Some(own);
        }
        _ => return None,
    };
    Some(list.iter().map(|s| s.to_string()).collect())
}

/// Checks (and, for `spec.host` on pods, renames) the fields a selector names.
pub fn check(rt: &ResourceType, selector: &mut FieldSelector) -> Result<(), ApiError> {
    // events.k8s.io Events are served here from their own store without a conversion table.
    if rt.group == "events.k8s.io" {
        return Ok(());
    }
    let own = own_labels(rt);
    for field in selector.fields_mut() {
        if rt.kind == "Pod" && rt.group.is_empty() && field == "spec.host" {
            *field = "spec.nodeName".into();
            continue;
        }
        match &own {
            Some(list) if list.iter().any(|l| l == field) => {}
            Some(_) => {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            None if field == "metadata.name" || field == "metadata.namespace" => {}
            None => {
                return Err(ApiError::bad_request(format!(
                    "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn checked(group: &str, plural: &str, sel: &str) -> Result<FieldSelector, ApiError> {
        let rt = Registry::default()
            .lookup(group, "v1", plural)
            .expect("served type");
        let mut s = FieldSelector::parse(sel)?;
        check(&rt, &mut s).map(|()| s)
    }

    #[test]
    fn unknown_fields_are_rejected_with_the_apiservers_messages() {
        assert_eq!(
            checked("", "configmaps", "foo=bar")
                .expect_err("foo")
                .message,
            "\"foo\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        assert_eq!(
            checked("", "pods", "spec.bogus=x")
                .expect_err("bogus")
                .message,
            "field label not supported: spec.bogus"
        );
        assert!(checked("", "configmaps", "metadata.name=a").is_ok());
        assert!(checked("", "pods", "status.phase=Running,spec.nodeName=n").is_ok());
        assert!(checked("", "events", "involvedObject.name=web,type=Normal").is_ok());
        assert!(checked("apps", "deployments", "metadata.namespace=x").is_ok());
        assert_eq!(
            checked("", "pods", "spec.host=n").expect("alias"),
            FieldSelector::parse("spec.nodeName=n").expect("parse")
        );
    }
}
