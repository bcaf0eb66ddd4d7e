//! Defaulting: the values the real API server fills in for the kinds the simulator serves
//! (Deployment strategy and limits, pod template and container defaults, Service IPs and policies...).

use serde_json::{Map, Value, json};

fn obj(v: &mut Value) -> Option<&mut Map<String, Value>> {
    v.as_object_mut()
}

fn set_default(m: &mut Map<String, Value>, key: &str, value: Value) {
    if !m.contains_key(key) || m.get(key) == Some(&Value::Null) {
        m.insert(key.to_string(), value);
    }
}

fn child<'a>(m: &'a mut Map<String, Value>, key: &str) -> &'a mut Value {
    m.entry(key.to_string()).or_insert_with(|| json!({}))
}

/// Applies the defaults for `kind` (in `api_version`) to `object`. `cluster_ip` is used when a
/// Service needs one allocated.
pub fn apply(
    api_version: &str,
    kind: &str,
    object: &mut Value,
    cluster_ip: &mut dyn FnMut() -> String,
) {
    let Some(root) = obj(object) else { return };
    match (api_version, kind) {
        ("apps/v1", "Deployment") => {
            let spec = child(root, "spec");
            let Some(spec) = obj(spec) else { return };
            set_default(spec, "replicas", json!(1));
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(spec, "progressDeadlineSeconds", json!(600));
            let strategy = child(spec, "strategy");
            if let Some(s) = obj(strategy) {
                set_default(s, "type", json!("RollingUpdate"));
                if s.get("type") == Some(&json!("RollingUpdate")) {
                    let ru = child(s, "rollingUpdate");
                    if let Some(ru) = obj(ru) {
                        set_default(ru, "maxUnavailable", json!("25%"));
                        set_default(ru, "maxSurge", json!("25%"));
                    }
                }
            }
            pod_template(spec);
        }
        ("apps/v1", "StatefulSet") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            set_default(spec, "replicas", json!(1));
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(spec, "podManagementPolicy", json!("OrderedReady"));
            if let Some(s) = obj(child(spec, "updateStrategy")) {
                set_default(s, "type", json!("RollingUpdate"));
                if s.get("type") == Some(&json!("RollingUpdate"))
                    && let Some(ru) = obj(child(s, "rollingUpdate"))
                {
                    set_default(ru, "partition", json!(0));
                }
            }
            if let Some(p) = obj(child(spec, "persistentVolumeClaimRetentionPolicy")) {
                set_default(p, "whenDeleted", json!("Retain"));
                set_default(p, "whenScaled", json!("Retain"));
            }
            pod_template(spec);
        }
        ("apps/v1", "DaemonSet") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            set_default(spec, "revisionHistoryLimit", json!(10));
            if let Some(s) = obj(child(spec, "updateStrategy")) {
                set_default(s, "type", json!("RollingUpdate"));
                if s.get("type") == Some(&json!("RollingUpdate"))
                    && let Some(ru) = obj(child(s, "rollingUpdate"))
                {
                    set_default(ru, "maxUnavailable", json!(1));
                    set_default(ru, "maxSurge", json!(0));
                }
            }
            pod_template(spec);
        }
        ("apps/v1", "ReplicaSet") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            set_default(spec, "replicas", json!(1));
            pod_template(spec);
        }
        ("batch/v1", "Job") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            job_spec(spec);
        }
        ("batch/v1", "CronJob") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            set_default(spec, "concurrencyPolicy", json!("Allow"));
            set_default(spec, "suspend", json!(false));
            set_default(spec, "successfulJobsHistoryLimit", json!(3));
            set_default(spec, "failedJobsHistoryLimit", json!(1));
            if let Some(jt) = obj(child(spec, "jobTemplate"))
                && let Some(js) = obj(child(jt, "spec"))
            {
                job_spec(js);
            }
        }
        ("v1", "Pod") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            pod_spec(spec);
            set_default(spec, "enableServiceLinks", json!(true));
            set_default(spec, "serviceAccountName", json!("default"));
            set_default(spec, "priority", json!(0));
            set_default(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
        }
        ("v1", "Service") => {
            let Some(spec) = obj(child(root, "spec")) else {
                return;
            };
            set_default(spec, "type", json!("ClusterIP"));
            set_default(spec, "sessionAffinity", json!("None"));
            let external_name = spec.get("type") == Some(&json!("ExternalName"));
            if !external_name {
                set_default(spec, "internalTrafficPolicy", json!("Cluster"));
                if !spec.contains_key("clusterIP") {
                    let ip = cluster_ip();
                    spec.insert("clusterIP".into(), json!(ip));
                }
                let ip = spec.get("clusterIP").cloned().unwrap_or(Value::Null);
                set_default(spec, "clusterIPs", json!([ip]));
                set_default(spec, "ipFamilies", json!(["IPv4"]));
                set_default(spec, "ipFamilyPolicy", json!("SingleStack"));
            }
            if spec.get("type").and_then(Value::as_str) == Some("LoadBalancer") {
                set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
            }
            let node_ports = matches!(
                spec.get("type").and_then(Value::as_str),
                Some("NodePort" | "LoadBalancer")
            );
            let seed = spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if node_ports {
                set_default(spec, "externalTrafficPolicy", json!("Cluster"));
            }
            if let Some(Value::Array(ports)) = spec.get_mut("ports") {
                for (i, p) in ports.iter_mut().filter_map(obj).enumerate() {
                    set_default(p, "protocol", json!("TCP"));
                    if let Some(port) = p.get("port").cloned() {
                        set_default(p, "targetPort", port);
                    }
                    if node_ports && !p.contains_key("nodePort") {
                        let h = seed
                            .bytes()
                            .chain([i as u8])
                            .fold(2_166_136_261u32, |h, b| {
                                (h ^ b as u32).wrapping_mul(16_777_619)
                            });
                        p.insert("nodePort".into(), json!(30_000 + h % 2_768));
                    }
                }
            }
        }
        ("v1", "Namespace") => {
            if let Some(spec) = obj(child(root, "spec")) {
                set_default(spec, "finalizers", json!(["kubernetes"]));
            }
            if let Some(status) = obj(child(root, "status")) {
                set_default(status, "phase", json!("Active"));
            }
            let name = root.get("metadata").and_then(|m| m.get("name")).cloned();
            if let (Some(name), Some(meta)) = (name, root.get_mut("metadata").and_then(obj))
                && let Some(labels) = obj(child(meta, "labels"))
            {
                labels.insert("kubernetes.io/metadata.name".into(), name);
            }
        }
        ("v1", "Secret") => {
            set_default(root, "type", json!("Opaque"));
            // stringData is write-only: it is folded into data (base64) and not stored.
            if let Some(Value::Object(plain)) = root.remove("stringData") {
                use base64::Engine;
                let data = root.entry("data").or_insert_with(|| json!({}));
                if let Some(data) = data.as_object_mut() {
                    for (k, v) in plain {
                        let text = v.as_str().unwrap_or_default().to_string();
                        data.insert(
                            k,
                            json!(base64::engine::general_purpose::STANDARD.encode(text)),
                        );
                    }
                }
            }
        }
        ("v1", "PersistentVolumeClaim") => {
            if let Some(spec) = obj(child(root, "spec")) {
                set_default(spec, "volumeMode", json!("Filesystem"));
            }
            if let Some(status) = obj(child(root, "status")) {
                set_default(status, "phase", json!("Pending"));
            }
        }
        ("policy/v1", "PodDisruptionBudget") => {}
        ("networking.k8s.io/v1", "NetworkPolicy") => {
            if let Some(spec) = obj(child(root, "spec"))
                && !spec.contains_key("policyTypes")
            {
                let mut types = vec![json!("Ingress")];
                if spec.contains_key("egress") {
                    types.push(json!("Egress"));
                }
                spec.insert("policyTypes".into(), Value::Array(types));
            }
        }
        _ => {}
    }
}

/// What the Job strategy adds when a Job is created without `manualSelector`: a selector on the Job's
/// uid and the matching pod template labels.
pub fn job_selector(job: &mut Value) {
    let uid = job.pointer("/metadata/uid").cloned().unwrap_or(Value::Null);
    let name = job
        .pointer("/metadata/name")
        .cloned()
        .unwrap_or(Value::Null);
    let Some(spec) = job.get_mut("spec").and_then(obj) else {
        return;
    };
    if spec.get("manualSelector") == Some(&json!(true)) || spec.contains_key("selector") {
        return;
    }
    spec.insert(
        "selector".into(),
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
    );
    let Some(template) = obj(child(spec, "template")) else {
        return;
    };
    let Some(meta) = obj(child(template, "metadata")) else {
        return;
    };
    if let Some(labels) = obj(child(meta, "labels")) {
        labels.insert("batch.kubernetes.io/controller-uid".into(), uid.clone());
        labels.insert("batch.kubernetes.io/job-name".into(), name.clone());
        labels.insert("controller-uid".into(), uid);
        labels.insert("job-name".into(), name);
    }
}

fn job_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "parallelism", json!(1));
    set_default(spec, "completions", json!(1));
    set_default(spec, "backoffLimit", json!(6));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "manualSelector", json!(false));
    set_default(spec, "podReplacementPolicy", json!("TerminatingOrFailed"));
    pod_template(spec);
}

fn pod_template(spec: &mut Map<String, Value>) {
    let Some(template) = obj(child(spec, "template")) else {
        return;
    };
    if let Some(ps) = obj(child(template, "spec")) {
        pod_spec(ps);
    }
}

fn pod_spec(spec: &mut Map<String, Value>) {
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(Value::Array(cs)) = spec.get_mut(list) {
            for c in cs.iter_mut().filter_map(obj) {
                container(c);
            }
        }
    }
}

fn container(c: &mut Map<String, Value>) {
    let image = c
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let last = image.rsplit('/').next().unwrap_or("");
    let tag_latest = !image.contains('@') && (!last.contains(':') || last.ends_with(":latest"));
    set_default(
        c,
        "imagePullPolicy",
        json!(if tag_latest { "Always" } else { "IfNotPresent" }),
    );
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    set_default(c, "resources", json!({}));
    if let Some(Value::Array(ports)) = c.get_mut("ports") {
        for p in ports.iter_mut().filter_map(obj) {
            set_default(p, "protocol", json!("TCP"));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(obj) {
            set_default(p, "timeoutSeconds", json!(1));
            set_default(p, "periodSeconds", json!(10));
            set_default(p, "successThreshold", json!(1));
            set_default(p, "failureThreshold", json!(3));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
