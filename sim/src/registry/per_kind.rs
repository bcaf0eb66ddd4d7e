//! The per-kind dispatch of defaulting and validation: a kind's defaults and rules run through its
//! [`Strategy`](crate::registry::strategy::Strategy), as kube-apiserver's registry store calls the
//! kind's strategy; the helpers the strategies share are in `defaults.rs` and `rules.rs`.

use serde_json::Value;

use crate::registry::strategy::{for_kind, group_of};
use crate::status::Cause;

/// Applies the defaults for `kind` (in `api_version`) to `object`, through the kind's
/// [`Strategy`](crate::registry::strategy::Strategy). `cluster_ip` is used when a Service needs one
/// allocated.
pub fn apply_defaults(
    api_version: &str,
    kind: &str,
    object: &mut Value,
    cluster_ip: &mut dyn FnMut() -> String,
) {
    let strategy = for_kind(group_of(api_version), kind, false);
    if let Some(root) = crate::registry::defaults::obj(object) {
        strategy.default(root, cluster_ip);
    }
}

/// Causes for an update the real server rejects because it changes immutable fields.
pub fn check_update(api_version: &str, kind: &str, old: &Value, new: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    for_kind(group_of(api_version), kind, false).validate_update(old, new, &mut out);
    out
}

/// Causes for an object of `api_version`/`kind` that the real server would reject as Invalid: the
/// metadata rules every kind shares, then the kind's strategy.
pub fn check(api_version: &str, kind: &str, obj: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    crate::registry::rules::metadata(obj, &mut out);
    for_kind(group_of(api_version), kind, false).validate(obj, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn apply(api_version: &str, kind: &str, object: &mut Value, ip: &mut dyn FnMut() -> String) {
        apply_defaults(api_version, kind, object, ip);
    }

    #[test]
    fn workloads_need_matching_selectors_and_images() {
        let d = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}, "template": {"metadata": {"labels": {"app": "b"}},
            "spec": {"containers": [{"name": "c"}]}}}});
        let causes = check("apps/v1", "Deployment", &d);
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "spec.template.metadata.labels",
                "spec.template.spec.containers[0].image"
            ]
        );
        assert!(
            causes[0]
                .message
                .contains("`selector` does not match template `labels`")
        );
    }

    #[test]
    fn labels_and_immutable_fields() {
        let huge = json!({"metadata": {"annotations": {"a": "x".repeat(300 * 1024)}}});
        assert_eq!(
            check("v1", "ConfigMap", &huge)[0].message,
            "Too long: must have at most 262144 bytes"
        );
        let bad = json!({"metadata": {"labels": {"ok": "fine", "bad": "not ok!", "-x": "y"}}});
        let fields: Vec<String> = check("v1", "ConfigMap", &bad)
            .into_iter()
            .map(|c| c.message)
            .collect();
        assert_eq!(fields.len(), 2, "{fields:?}");
        assert!(
            check(
                "v1",
                "ConfigMap",
                &json!({"metadata": {"labels": {"app.kubernetes.io/name": "x", "e": ""}}})
            )
            .is_empty()
        );
        let old = json!({"spec": {"selector": {"matchLabels": {"app": "a"}}}});
        let new = json!({"spec": {"selector": {"matchLabels": {"app": "b"}}}});
        let causes = check_update("apps/v1", "Deployment", &old, &new);
        assert_eq!(causes[0].field, "spec.selector");
        assert!(causes[0].message.ends_with("field is immutable"));
        let sts_old = json!({"spec": {"serviceName": "a", "replicas": 1}});
        assert!(
            check_update(
                "apps/v1",
                "StatefulSet",
                &sts_old,
                &json!({"spec": {"serviceName": "a", "replicas": 3}})
            )
            .is_empty()
        );
        assert_eq!(
            check_update(
                "apps/v1",
                "StatefulSet",
                &sts_old,
                &json!({"spec": {"serviceName": "b", "replicas": 1}})
            )[0]
            .field,
            "spec"
        );
    }

    #[test]
    fn services_and_configmaps() {
        assert_eq!(
            check("v1", "Service", &json!({"spec": {}}))[0].field,
            "spec.ports"
        );
        assert!(
            check(
                "v1",
                "Service",
                &json!({"spec": {"type": "ExternalName", "externalName": "x"}})
            )
            .is_empty()
        );
        assert_eq!(
            check("v1", "ConfigMap", &json!({"data": {"bad key": "x"}}))[0].field,
            "data[bad key]"
        );
    }

    #[test]
    fn deployment_defaults_match_the_real_server() {
        let mut d = json!({"spec": {"selector": {}, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
            {"name": "side", "image": "busybox"}]}}}});
        apply("apps/v1", "Deployment", &mut d, &mut || "10.96.0.10".into());
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        let c = &d["spec"]["template"]["spec"]["containers"];
        assert_eq!(c[0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c[1]["imagePullPolicy"], "Always");
        assert_eq!(c[0]["ports"][0]["protocol"], "TCP");
        assert_eq!(d["spec"]["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    }

    #[test]
    fn secret_string_data_becomes_data() {
        let mut s = json!({"stringData": {"p": "hunter2"}, "data": {"q": "eA=="}});
        apply("v1", "Secret", &mut s, &mut || String::new());
        assert_eq!(
            s,
            json!({"data": {"q": "eA==", "p": "aHVudGVyMg=="}, "type": "Opaque"})
        );
    }

    #[test]
    fn services_get_an_ip_and_policies() {
        let mut s = json!({"spec": {"ports": [{"port": 80}]}});
        apply("v1", "Service", &mut s, &mut || "10.96.0.10".into());
        assert_eq!(s["spec"]["clusterIP"], "10.96.0.10");
        assert_eq!(s["spec"]["clusterIPs"], json!(["10.96.0.10"]));
        assert_eq!(s["spec"]["ports"][0]["targetPort"], 80);
        assert_eq!(s["spec"]["sessionAffinity"], "None");
    }
}
