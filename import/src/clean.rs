//! Cleaning objects before lowering: what the cluster makes itself is skipped (Pods and ReplicaSets owned
//! by workloads, Endpoints, the default ServiceAccount, `kube-root-ca.crt`, …), and server-set fields
//! (status, managedFields, uid, …) and values equal to the Kubernetes 1.33 defaults are dropped.

use serde_json::{Map, Value, json};

/// Why an object is not imported: the cluster makes it, so the app must not declare it.
pub fn cluster_made(o: &Value) -> Option<&'static str> {
    let kind = o["kind"].as_str().unwrap_or_default();
    let name = o["metadata"]["name"].as_str().unwrap_or_default();
    let owned = o["metadata"]["ownerReferences"]
        .as_array()
        .is_some_and(|r| !r.is_empty());
    match kind {
        "Endpoints" | "EndpointSlice" | "Event" | "ControllerRevision" | "Lease" => {
            Some("the cluster keeps it")
        }
        "Pod" | "ReplicaSet" | "Job" if owned => Some("a workload owns it"),
        "ServiceAccount" if name == "default" => Some("every namespace has it"),
        "ConfigMap" if name == "kube-root-ca.crt" || name == "istio-ca-root-cert" => {
            Some("the cluster publishes it")
        }
        "Secret"
            if o["type"].as_str() == Some("kubernetes.io/service-account-token")
                && o["metadata"]["annotations"]["kubernetes.io/service-account.name"]
                    .is_string() =>
        {
            Some("the cluster issues it")
        }
        _ if owned => Some("another object owns it"),
        _ => None,
    }
}

/// The Services without a selector (and not ExternalName): the cluster makes no Endpoints for them, so
/// theirs are made by hand (or by another controller) and are imported.
pub fn selectorless_services<'a>(
    objects: impl Iterator<Item = &'a Value>,
) -> std::collections::BTreeSet<String> {
    objects
        .filter(|o| o["kind"] == "Service" && o["apiVersion"] == "v1")
        .filter(|o| {
            o["spec"]["selector"]
                .as_object()
                .is_none_or(|s| s.is_empty())
        })
        .filter(|o| o["spec"]["type"] != "ExternalName")
        .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

/// Whether `o` is the Endpoints (or an EndpointSlice not mirrored by the cluster) of one of `services`.
pub fn endpoints_of(o: &Value, services: &std::collections::BTreeSet<String>) -> bool {
    let labels = &o["metadata"]["labels"];
    match o["kind"].as_str() {
        Some("Endpoints") => o["metadata"]["name"]
            .as_str()
            .is_some_and(|n| services.contains(n)),
        Some("EndpointSlice") => {
            let managed = labels["endpointslice.kubernetes.io/managed-by"].as_str();
            let by_cluster = managed.is_some_and(|m| {
                matches!(
                    m,
                    "endpointslice-controller.k8s.io" | "endpointslicemirroring-controller.k8s.io"
                )
            });
            !by_cluster
                && labels["kubernetes.io/service-name"]
                    .as_str()
                    .is_some_and(|n| services.contains(n))
        }
        _ => false,
    }
}

/// Drop what the server sets and what equals the 1.33 defaults.
pub fn clean(o: &mut Value) {
    let Some(obj) = o.as_object_mut() else {
        return;
    };
    obj.shift_remove("status");
    // A claim the volume controller bound (not one the user bound to a volume by name).
    let bound_by_controller = obj
        .get("metadata")
        .map(|m| &m["annotations"]["pv.kubernetes.io/bound-by-controller"])
        == Some(&json!("yes"));
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        for k in [
            "managedFields",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "selfLink",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generateName",
        ] {
            meta.shift_remove(k);
        }
        if let Some(Value::Object(notes)) = meta.get_mut("annotations") {
            for k in [
                "kubectl.kubernetes.io/last-applied-configuration",
                "deployment.kubernetes.io/revision",
                // A PersistentVolumeClaim's binding, written by the volume controllers.
                "pv.kubernetes.io/bind-completed",
                "pv.kubernetes.io/bound-by-controller",
                "volume.beta.kubernetes.io/storage-provisioner",
                "volume.kubernetes.io/storage-provisioner",
                "volume.kubernetes.io/selected-node",
            ] {
                notes.shift_remove(k);
            }
        }
        drop_empty(meta, "annotations");
        drop_empty(meta, "labels");
    }
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(Value::Object(spec)) = obj.get_mut("spec") else {
        return;
    };
    match kind.as_str() {
        "Deployment" => {
            drop_if(spec, "revisionHistoryLimit", json!(10));
            drop_if(spec, "progressDeadlineSeconds", json!(600));
            drop_if(
                spec,
                "strategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}),
            );
            pod_template(spec);
        }
        "StatefulSet" => {
            drop_if(spec, "revisionHistoryLimit", json!(10));
            drop_if(spec, "podManagementPolicy", json!("OrderedReady"));
            drop_if(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
            );
            drop_if(
                spec,
                "persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            );
            pod_template(spec);
        }
        "DaemonSet" => {
            drop_if(spec, "revisionHistoryLimit", json!(10));
            drop_if(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}),
            );
            pod_template(spec);
        }
        "Job" => {
            job_spec(spec);
        }
        "CronJob" => {
            drop_if(spec, "concurrencyPolicy", json!("Allow"));
            drop_if(spec, "suspend", json!(false));
            drop_if(spec, "successfulJobsHistoryLimit", json!(3));
            drop_if(spec, "failedJobsHistoryLimit", json!(1));
            if let Some(Value::Object(jt)) = spec.get_mut("jobTemplate")
                && let Some(Value::Object(js)) = jt.get_mut("spec")
            {
                job_spec(js);
            }
        }
        "Service" => service_spec(spec),
        "PersistentVolumeClaim" => {
            // The volume the controller bound the claim to, and the default mode.
            if bound_by_controller {
                spec.shift_remove("volumeName");
            }
            drop_if(spec, "volumeMode", json!("Filesystem"));
        }
        _ => {}
    }
}

fn job_spec(spec: &mut Map<String, Value>) {
    drop_if(spec, "backoffLimit", json!(6));
    drop_if(spec, "completionMode", json!("NonIndexed"));
    drop_if(spec, "suspend", json!(false));
    drop_if(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    drop_if(spec, "manualSelector", json!(false));
    if let Some(Value::Object(t)) = spec.get_mut("template")
        && let Some(Value::Object(p)) = t.get_mut("spec")
    {
        pod_spec(p);
    }
    // The Job controller labels its pods and sets its own selector; an imported Job gets Piceli's.
    if let Some(Value::Object(t)) = spec.get_mut("template")
        && let Some(Value::Object(m)) = t.get_mut("metadata")
        && let Some(Value::Object(l)) = m.get_mut("labels")
    {
        for k in [
            "controller-uid",
            "job-name",
            "batch.kubernetes.io/controller-uid",
            "batch.kubernetes.io/job-name",
        ] {
            l.shift_remove(k);
        }
    }
    if spec
        .get("selector")
        .and_then(|s| s["matchLabels"].as_object())
        .is_some_and(|m| m.contains_key("batch.kubernetes.io/controller-uid"))
    {
        spec.shift_remove("selector");
    }
}

fn service_spec(spec: &mut Map<String, Value>) {
    for k in ["clusterIPs", "ipFamilies"] {
        spec.shift_remove(k);
    }
    if spec.get("clusterIP").and_then(Value::as_str) != Some("None") {
        spec.shift_remove("clusterIP");
    }
    drop_if(spec, "ipFamilyPolicy", json!("SingleStack"));
    drop_if(spec, "sessionAffinity", json!("None"));
    drop_if(spec, "internalTrafficPolicy", json!("Cluster"));
    drop_if(spec, "type", json!("ClusterIP"));
    if let Some(Value::Array(ports)) = spec.get_mut("ports") {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            drop_if(p, "protocol", json!("TCP"));
            if p.get("targetPort") == p.get("port") {
                p.shift_remove("targetPort");
            }
        }
    }
}

fn pod_template(spec: &mut Map<String, Value>) {
    if let Some(Value::Object(t)) = spec.get_mut("template")
        && let Some(Value::Object(p)) = t.get_mut("spec")
    {
        pod_spec(p);
    }
}

fn pod_spec(p: &mut Map<String, Value>) {
    drop_if(p, "restartPolicy", json!("Always"));
    drop_if(p, "dnsPolicy", json!("ClusterFirst"));
    drop_if(p, "schedulerName", json!("default-scheduler"));
    drop_if(p, "terminationGracePeriodSeconds", json!(30));
    drop_if(p, "securityContext", json!({}));
    drop_if(p, "enableServiceLinks", json!(true));
    // The API copies serviceAccountName into the deprecated serviceAccount.
    if p.get("serviceAccount") == p.get("serviceAccountName") {
        p.shift_remove("serviceAccount");
    }
    // The API sets 0644 on ConfigMap and Secret volumes given no mode.
    if let Some(Value::Array(vs)) = p.get_mut("volumes") {
        for v in vs.iter_mut().filter_map(Value::as_object_mut) {
            for source in ["configMap", "secret"] {
                if let Some(Value::Object(s)) = v.get_mut(source) {
                    drop_if(s, "defaultMode", json!(420));
                }
            }
        }
    }
    for list in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = p.get_mut(list) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                container(c);
            }
        }
    }
}

fn container(c: &mut Map<String, Value>) {
    drop_if(c, "terminationMessagePath", json!("/dev/termination-log"));
    drop_if(c, "terminationMessagePolicy", json!("File"));
    drop_if(c, "resources", json!({}));
    // `get`, not indexing: a container may come without an image (a mutating webhook sets it).
    let tag_latest = c
        .get("image")
        .and_then(Value::as_str)
        .is_some_and(|i| !i.contains('@') && (i.ends_with(":latest") || !has_tag(i)));
    if !tag_latest {
        drop_if(c, "imagePullPolicy", json!("IfNotPresent"));
    } else {
        drop_if(c, "imagePullPolicy", json!("Always"));
    }
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            drop_if(p, "protocol", json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(pr)) = c.get_mut(probe) {
            drop_if(pr, "timeoutSeconds", json!(1));
            drop_if(pr, "periodSeconds", json!(10));
            drop_if(pr, "successThreshold", json!(1));
            drop_if(pr, "failureThreshold", json!(3));
            if let Some(Value::Object(h)) = pr.get_mut("httpGet") {
                drop_if(h, "scheme", json!("HTTP"));
            }
        }
    }
}

/// `repo/name:tag` has a tag; `host:5000/name` does not (the colon belongs to the host).
fn has_tag(image: &str) -> bool {
    let last = image.rsplit('/').next().unwrap_or(image);
    last.contains(':')
}

fn drop_if(m: &mut Map<String, Value>, key: &str, default: Value) {
    if m.get(key) == Some(&default) {
        m.shift_remove(key);
    }
}

fn drop_empty(m: &mut Map<String, Value>, key: &str) {
    if m.get(key)
        .is_some_and(|v| v.as_object().is_some_and(Map::is_empty) || v.is_null())
    {
        m.shift_remove(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_fields_and_defaults_go() {
        let mut d = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "uid": "x", "resourceVersion": "1", "managedFields": [],
                         "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"revisionHistoryLimit": 10, "progressDeadlineSeconds": 60,
                     "template": {"spec": {"restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
                        "containers": [{"name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
                                        "terminationMessagePath": "/dev/termination-log"}]}}},
            "status": {"replicas": 1}
        });
        clean(&mut d);
        assert_eq!(
            d,
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                   "spec": {"progressDeadlineSeconds": 60,
                            "template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
        );
    }

    #[test]
    fn a_claims_binding_goes_a_volume_named_by_the_user_stays() {
        let claim = |by_controller: &str| {
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": "data", "annotations": {
                       "pv.kubernetes.io/bind-completed": "yes",
                       "pv.kubernetes.io/bound-by-controller": by_controller,
                       "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"}},
                   "spec": {"volumeName": "pvc-1", "volumeMode": "Filesystem", "accessModes": ["ReadWriteOnce"]}})
        };
        let mut bound = claim("yes");
        clean(&mut bound);
        assert_eq!(
            bound,
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                   "spec": {"accessModes": ["ReadWriteOnce"]}})
        );
        let mut named = claim("no");
        clean(&mut named);
        assert_eq!(named["spec"]["volumeName"], "pvc-1");
    }

    #[test]
    fn latest_images_keep_a_non_default_pull_policy() {
        let mut c = json!({"image": "nginx", "imagePullPolicy": "IfNotPresent"});
        container(c.as_object_mut().expect("object"));
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert!(has_tag("nginx:1.27") && !has_tag("localhost:5000/nginx"));
    }

    #[test]
    fn cluster_made_objects_are_named() {
        let rs = json!({"kind": "ReplicaSet", "metadata": {"name": "a", "ownerReferences": [{"kind": "Deployment"}]}});
        assert!(cluster_made(&rs).is_some());
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt"}});
        assert!(cluster_made(&cm).is_some());
        let mine = json!({"kind": "ConfigMap", "metadata": {"name": "settings"}});
        assert!(cluster_made(&mine).is_none());
    }
}
