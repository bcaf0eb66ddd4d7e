//! The operator's objects, each at its apply level: ServiceAccount (and RBAC), cert-manager Issuers and
//! Certificates, the Deployment that runs `serve`, the Validating/Mutating webhook configurations (whose
//! caBundle cert-manager's CA injector fills in), its Service, and a PodDisruptionBudget with 2+
//! replicas.

use super::Sink;
use super::json;
use super::meta::Cx;
use crate::error::Error;
use piceli_core::model::{Operator, OperatorTls, Webhook, WebhookKind, WebhookResource};
use piceli_core::resources;
use serde_json::{Value, json};

/// Where the Deployment mounts the serving certificate (`serve`'s default `--tls-cert`/`--tls-key`).
pub const TLS_DIR: &str = "/etc/piceli/tls";
/// The container port `serve` listens on.
pub const SERVE_PORT: i32 = 8443;
/// The port `serve` answers health and metrics on (plain HTTP) when the app has controllers but no
/// webhooks.
pub const HEALTH_PORT: i32 = 8080;

/// The operator's ServiceAccount and RBAC (apply level 2).
pub(super) fn identity(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    let Some(op) = &cx.app.operator else {
        return Ok(());
    };
    let name = op.name.v.as_str();
    out.push(json!({
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": object_meta(cx, name)?,
        "automountServiceAccountToken": false,
    }));
    super::operator_rbac::rbac(cx, name, out)
}

/// The cert-manager objects, the Deployment that runs `serve`, then the webhook configurations (apply
/// level 5: the serving Secret is asked for before the pods that mount it).
pub(super) fn workload(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    let Some(op) = &cx.app.operator else {
        return Ok(());
    };
    let name = op.name.v.as_str();
    let hooks = !cx.app.webhooks.is_empty();
    for o in cert_manager(op, &cx.namespace)
        .into_iter()
        .filter(|_| hooks)
    {
        let (kind, object_name, spec) = o;
        out.push(json!({
            "apiVersion": "cert-manager.io/v1",
            "kind": kind,
            "metadata": object_meta(cx, &object_name)?,
            "spec": spec,
        }));
    }
    out.push(deployment(
        cx,
        op,
        json("metadata", &cx.meta(name, &vec![], &op.annotations))?,
    ));
    for kind in [WebhookKind::Validate, WebhookKind::Mutate] {
        let hooks: Vec<&Webhook> = cx.app.webhooks.iter().filter(|w| w.kind == kind).collect();
        if hooks.is_empty() {
            continue;
        }
        let config_name = format!("{name}.{}", cx.namespace);
        let mut metadata = json("metadata", &cx.cluster_meta(&config_name, &vec![], &vec![]))?;
        let (annotation, source) = match &op.tls {
            OperatorTls::Secret(secret) => {
                ("cert-manager.io/inject-ca-from-secret", secret.v.clone())
            }
            _ => ("cert-manager.io/inject-ca-from", format!("{name}-tls")),
        };
        // A self-managed operator writes the caBundle itself.
        if op.tls != OperatorTls::SelfManaged
            && let Some(m) = metadata.as_object_mut()
        {
            let notes = m.entry("annotations").or_insert_with(|| json!({}));
            notes[annotation] = Value::String(format!("{}/{source}", cx.namespace));
        }
        let webhooks = hooks
            .iter()
            .map(|w| webhook(cx, name, w))
            .collect::<Result<Vec<Value>, Error>>()?;
        let config_kind = match kind {
            WebhookKind::Validate => "ValidatingWebhookConfiguration",
            WebhookKind::Mutate => "MutatingWebhookConfiguration",
        };
        out.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": config_kind,
            "metadata": metadata,
            "webhooks": webhooks,
        }));
    }
    Ok(())
}

/// The Service the webhook configurations call (apply level 6), when the app has webhooks.
pub(super) fn service(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    let Some(op) = cx
        .app
        .operator
        .as_ref()
        .filter(|_| !cx.app.webhooks.is_empty())
    else {
        return Ok(());
    };
    let name = op.name.v.as_str();
    out.push(json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": object_meta(cx, name)?,
        "spec": {
            "selector": cx.selector(name),
            "ports": [{ "name": "https", "port": 443, "targetPort": "https", "protocol": "TCP" }],
        },
    }));
    Ok(())
}

/// A PodDisruptionBudget with 2+ replicas (apply level 7).
pub(super) fn budget(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    let Some(op) = cx.app.operator.as_ref().filter(|op| op.replicas.v >= 2) else {
        return Ok(());
    };
    let name = op.name.v.as_str();
    out.push(json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": object_meta(cx, name)?,
        "spec": { "maxUnavailable": 1, "selector": { "matchLabels": cx.selector(name) } },
    }));
    Ok(())
}

fn object_meta(cx: &Cx, name: &str) -> Result<Value, Error> {
    json("metadata", &cx.meta(name, &vec![], &vec![]))
}

/// The secret holding the serving certificate.
fn tls_secret(op: &Operator) -> String {
    match &op.tls {
        OperatorTls::Secret(s) => s.v.clone(),
        _ => format!("{}-tls", op.name.v),
    }
}

/// (kind, name, spec) of each cert-manager object, in the order they depend on each other.
fn cert_manager(op: &Operator, namespace: &str) -> Vec<(&'static str, String, Value)> {
    let name = op.name.v.as_str();
    let serving = |issuer: Value| {
        (
            "Certificate",
            format!("{name}-tls"),
            json!({
                "secretName": format!("{name}-tls"),
                "dnsNames": [format!("{name}.{namespace}.svc"), format!("{name}.{namespace}.svc.cluster.local")],
                "usages": ["digital signature", "key encipherment", "server auth"],
                "privateKey": { "algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always" },
                "issuerRef": issuer,
            }),
        )
    };
    match &op.tls {
        OperatorTls::Secret(_) | OperatorTls::SelfManaged => Vec::new(),
        OperatorTls::ClusterIssuer(issuer) => vec![serving(json!({
            "group": "cert-manager.io", "kind": "ClusterIssuer", "name": issuer.v,
        }))],
        OperatorTls::SelfSigned => vec![
            (
                "Issuer",
                format!("{name}-selfsigned"),
                json!({ "selfSigned": {} }),
            ),
            (
                "Certificate",
                format!("{name}-ca"),
                json!({
                    "isCA": true,
                    "commonName": format!("{name}-ca"),
                    "secretName": format!("{name}-ca"),
                    "privateKey": { "algorithm": "ECDSA", "size": 256 },
                    "issuerRef": { "group": "cert-manager.io", "kind": "Issuer", "name": format!("{name}-selfsigned") },
                }),
            ),
            (
                "Issuer",
                format!("{name}-ca"),
                json!({ "ca": { "secretName": format!("{name}-ca") } }),
            ),
            serving(
                json!({ "group": "cert-manager.io", "kind": "Issuer", "name": format!("{name}-ca") }),
            ),
        ],
    }
}

fn deployment(cx: &Cx, op: &Operator, metadata: Value) -> Value {
    let name = op.name.v.as_str();
    let selector = cx.selector(name);
    let mut pod_labels = cx.base_labels();
    pod_labels.extend(selector.clone());
    let probe = |path: &str| json!({ "httpGet": { "path": path, "port": "https", "scheme": "HTTPS" }, "periodSeconds": 10 });
    let mut pod = json!({
        "serviceAccountName": name,
        "automountServiceAccountToken": false,
        "terminationGracePeriodSeconds": 30,
        "securityContext": {
            "runAsNonRoot": true,
            "runAsUser": 65532,
            "runAsGroup": 65532,
            "seccompProfile": { "type": "RuntimeDefault" },
        },
        "containers": [{
            "name": "serve",
            "image": op.image.v,
            "args": ["serve"],
            "ports": [{ "name": "https", "containerPort": SERVE_PORT, "protocol": "TCP" }],
            "readinessProbe": probe("/readyz"),
            "livenessProbe": probe("/healthz"),
            "resources": {
                "requests": { "cpu": "50m", "memory": "32Mi" },
                "limits": { "memory": "128Mi" },
            },
            "securityContext": {
                "allowPrivilegeEscalation": false,
                "readOnlyRootFilesystem": true,
                "runAsNonRoot": true,
                "capabilities": { "drop": ["ALL"] },
                "seccompProfile": { "type": "RuntimeDefault" },
            },
            "volumeMounts": [{ "name": "tls", "mountPath": TLS_DIR, "readOnly": true }],
        }],
        "volumes": [{ "name": "tls", "secret": { "secretName": tls_secret(op) } }],
    });
    if op.replicas.v >= 2 {
        pod["affinity"] = json!({
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{
                    "weight": 100,
                    "podAffinityTerm": {
                        "topologyKey": "kubernetes.io/hostname",
                        "labelSelector": { "matchLabels": selector },
                    },
                }],
            },
        });
    }
    if !cx.app.controllers.is_empty() || op.tls == OperatorTls::SelfManaged {
        controller_pod(&mut pod, !cx.app.webhooks.is_empty());
    }
    if !op.env.is_empty() {
        let container = &mut pod["containers"][0];
        let mut env = container["env"].as_array().cloned().unwrap_or_default();
        for e in &op.env {
            env.push(serde_json::to_value(super::workloads::env_var(e)).unwrap_or_default());
        }
        container["env"] = Value::Array(env);
    }
    if op.tls == OperatorTls::SelfManaged {
        // `serve` reads its pair through the API (the Secret may not exist before the pod starts).
        if let Some(c) = pod["containers"][0].as_object_mut() {
            c.remove("volumeMounts");
        }
        if let Some(p) = pod.as_object_mut() {
            p.remove("volumes");
        }
    }
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata,
        "spec": {
            "replicas": op.replicas.v,
            "selector": { "matchLabels": selector },
            "template": { "metadata": { "labels": pod_labels }, "spec": pod },
        },
    })
}

/// What the controllers change in the operator's pod: the ServiceAccount token (they call the API), the
/// pod's name and namespace from the downward API (the leader-election identity), and, without webhooks,
/// plain-HTTP health on [`HEALTH_PORT`] instead of the TLS port and its Secret.
fn controller_pod(pod: &mut Value, hooks: bool) {
    pod["automountServiceAccountToken"] = Value::Bool(true);
    let field = |path: &str| json!({ "fieldRef": { "fieldPath": path } });
    let container = &mut pod["containers"][0];
    container["env"] = json!([
        { "name": "POD_NAME", "valueFrom": field("metadata.name") },
        { "name": "POD_NAMESPACE", "valueFrom": field("metadata.namespace") },
    ]);
    if hooks {
        return;
    }
    let probe = |path: &str| json!({ "httpGet": { "path": path, "port": "http", "scheme": "HTTP" }, "periodSeconds": 10 });
    container["args"] = json!(["serve", "--listen", format!("0.0.0.0:{HEALTH_PORT}")]);
    container["ports"] =
        json!([{ "name": "http", "containerPort": HEALTH_PORT, "protocol": "TCP" }]);
    container["readinessProbe"] = probe("/readyz");
    container["livenessProbe"] = probe("/healthz");
    if let Some(c) = container.as_object_mut() {
        c.remove("volumeMounts");
    }
    if let Some(p) = pod.as_object_mut() {
        p.remove("volumes");
    }
}

/// The webhook's rules, one per resource it lists.
fn rules(cx: &Cx, w: &Webhook) -> Result<Vec<Value>, Error> {
    w.resources.iter().map(|r| rule(cx, w, r)).collect()
}

/// A rule for one resource: a 1.33 resource from the table, one of the app's custom resources from its
/// CRD, every resource (and version, in either scope) of the group of a `*.GROUP`.
fn rule(cx: &Cx, w: &Webhook, r: &WebhookResource) -> Result<Value, Error> {
    let operations: Vec<String> = w.operations.iter().map(|o| o.v.clone()).collect();
    if let Some(group) = r.wildcard_group() {
        return Ok(json!({
            "apiGroups": [group],
            "apiVersions": ["*"],
            "resources": ["*"],
            "operations": operations,
            "scope": "*",
        }));
    }
    if !r.custom {
        let resource = resources::lookup(&r.name.v);
        return Ok(json!({
            "apiGroups": [resource.map(|r| r.group).unwrap_or_default()],
            "apiVersions": [resource.map(|r| r.version).unwrap_or("v1")],
            "resources": [resource.map(|r| r.plural).unwrap_or(r.name.v.as_str())],
            "operations": operations,
            "scope": if resource.is_none_or(|r| r.namespaced) { "Namespaced" } else { "Cluster" },
        }));
    }
    let crds = super::custom_resources(cx.app);
    let Some(crd) = crds
        .iter()
        .find(|crd| crd["metadata"]["name"] == r.name.v.as_str())
    else {
        let names: Vec<&str> = crds
            .iter()
            .filter_map(|c| c["metadata"]["name"].as_str())
            .collect();
        return Err(Error::unknown_crd(
            piceli_core::Code::WebhookCustomResourceMismatch,
            format!("{} {} admits `{}`", w.kind.keyword(), w.name.v, r.name.v),
            &names,
        ));
    };
    let spec = &crd["spec"];
    let versions: Vec<&Value> = spec["versions"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|v| v["served"] != false)
                .map(|v| &v["name"])
                .collect()
        })
        .unwrap_or_default();
    Ok(json!({
        "apiGroups": [spec["group"]],
        "apiVersions": versions,
        "resources": [spec["names"]["plural"]],
        "operations": operations,
        "scope": if spec["scope"] == "Cluster" { "Cluster" } else { "Namespaced" },
    }))
}

fn webhook(cx: &Cx, operator: &str, w: &Webhook) -> Result<Value, Error> {
    let rules = rules(cx, w)?;
    let labels = |l: &piceli_core::model::Labels| {
        l.iter()
            .map(|(k, v)| (k.v.clone(), Value::String(v.v.clone())))
            .collect::<serde_json::Map<_, _>>()
    };
    // The operator's own namespace and kube-system are never admitted through it, so a webhook that is
    // down cannot keep the cluster (or the operator itself) from starting.
    let mut namespace_selector = json!({
        "matchExpressions": [{
            "key": "kubernetes.io/metadata.name",
            "operator": "NotIn",
            "values": [cx.namespace, "kube-system"],
        }],
    });
    if !w.namespaces.is_empty() {
        namespace_selector["matchLabels"] = Value::Object(labels(&w.namespaces));
    }
    let mut hook = json!({
        "name": w.qualified_name(operator),
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": if w.ignore_failures { "Ignore" } else { "Fail" },
        "matchPolicy": "Equivalent",
        "timeoutSeconds": w.timeout_seconds(),
        "clientConfig": {
            "service": { "namespace": cx.namespace, "name": operator, "path": w.path(), "port": 443 },
        },
        "rules": rules,
        "namespaceSelector": namespace_selector,
    });
    if !w.objects.is_empty() {
        hook["objectSelector"] = json!({ "matchLabels": labels(&w.objects) });
    }
    if w.kind == WebhookKind::Mutate {
        hook["reinvocationPolicy"] = json!("Never");
    }
    Ok(hook)
}
