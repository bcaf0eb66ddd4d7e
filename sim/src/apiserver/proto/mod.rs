//! Decoding of the Kubernetes protobuf envelope (`k8s\0` + runtime.Unknown) for the few kinds that
//! kubectl's `create namespace|configmap|secret|deployment|serviceaccount|token|role|rolebinding|…`
//! and `auth` send as protobuf.
//! Field numbers follow the `protobuf:` tags of the Kubernetes Go types; zero values of non-pointer
//! fields are dropped, as Go's JSON encoding with `omitempty` would.

mod auth;

use auth::{
    CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING, SSAR, SSR, SSRR, TOKEN_REQUEST,
};
use base64::Engine;
use serde_json::{Map, Value, json};

/// Why a protobuf body could not be decoded.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ProtoError {
    /// The body does not start with the `k8s\0` magic.
    #[error("not a Kubernetes protobuf envelope")]
    NoMagic,
    /// The envelope is truncated or not valid protobuf.
    #[error("truncated or malformed protobuf")]
    Malformed,
    /// A protobuf body for a kind the simulator cannot decode (the kind).
    #[error("protobuf bodies are not supported for {0}; send JSON or YAML")]
    Unsupported(String),
}

#[derive(Clone, Copy)]
enum K {
    Str,
    Int,
    Bool,
    Msg(&'static [F]),
    MapStr,
    MapBytes,
    MapQuantity,
    RepStr,
    RepMsg(&'static [F]),
    IntOrString,
    Skip,
}

/// A field: number, JSON name, kind, and whether zero values are meaningful (Go pointer fields).
#[derive(Clone, Copy)]
struct F(u64, &'static str, K, bool);

const OWNER_REF: &[F] = &[
    F(1, "kind", K::Str, false),
    F(3, "name", K::Str, false),
    F(4, "uid", K::Str, false),
    F(5, "apiVersion", K::Str, false),
    F(6, "controller", K::Bool, true),
    F(7, "blockOwnerDeletion", K::Bool, true),
];
const META: &[F] = &[
    F(1, "name", K::Str, false),
    F(2, "generateName", K::Str, false),
    F(3, "namespace", K::Str, false),
    F(5, "uid", K::Str, false),
    F(6, "resourceVersion", K::Str, false),
    F(11, "labels", K::MapStr, false),
    F(12, "annotations", K::MapStr, false),
    F(13, "ownerReferences", K::RepMsg(OWNER_REF), false),
    F(14, "finalizers", K::RepStr, false),
];
const NS_SPEC: &[F] = &[F(1, "finalizers", K::RepStr, false)];
const NAMESPACE: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(NS_SPEC), false),
    F(3, "status", K::Skip, false),
];
const CONFIGMAP: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "data", K::MapStr, false),
    F(3, "binaryData", K::MapBytes, false),
    F(4, "immutable", K::Bool, true),
];
const SECRET: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "data", K::MapBytes, false),
    F(3, "type", K::Str, false),
    F(4, "stringData", K::MapStr, false),
    F(5, "immutable", K::Bool, true),
];
const NAME_REF: &[F] = &[F(1, "name", K::Str, false)];
const SERVICE_ACCOUNT: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(3, "imagePullSecrets", K::RepMsg(NAME_REF), false),
    F(4, "automountServiceAccountToken", K::Bool, true),
];
const REQUIREMENT: &[F] = &[
    F(1, "key", K::Str, false),
    F(2, "operator", K::Str, false),
    F(3, "values", K::RepStr, false),
];
const SELECTOR: &[F] = &[
    F(1, "matchLabels", K::MapStr, false),
    F(2, "matchExpressions", K::RepMsg(REQUIREMENT), false),
];
const PORT: &[F] = &[
    F(1, "name", K::Str, false),
    F(2, "hostPort", K::Int, false),
    F(3, "containerPort", K::Int, false),
    F(4, "protocol", K::Str, false),
    F(5, "hostIP", K::Str, false),
];
const ENV: &[F] = &[F(1, "name", K::Str, false), F(2, "value", K::Str, false)];
const RESOURCES: &[F] = &[
    F(1, "limits", K::MapQuantity, false),
    F(2, "requests", K::MapQuantity, false),
];
const CONTAINER: &[F] = &[
    F(1, "name", K::Str, false),
    F(2, "image", K::Str, false),
    F(3, "command", K::RepStr, false),
    F(4, "args", K::RepStr, false),
    F(5, "workingDir", K::Str, false),
    F(6, "ports", K::RepMsg(PORT), false),
    F(7, "env", K::RepMsg(ENV), false),
    F(8, "resources", K::Msg(RESOURCES), false),
    F(13, "terminationMessagePath", K::Str, false),
    F(14, "imagePullPolicy", K::Str, false),
    F(20, "terminationMessagePolicy", K::Str, false),
];
const POD_SPEC: &[F] = &[
    F(2, "containers", K::RepMsg(CONTAINER), false),
    F(3, "restartPolicy", K::Str, false),
    F(4, "terminationGracePeriodSeconds", K::Int, true),
    F(6, "dnsPolicy", K::Str, false),
    F(7, "nodeSelector", K::MapStr, false),
    F(8, "serviceAccountName", K::Str, false),
    F(19, "schedulerName", K::Str, false),
];
const TEMPLATE: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(POD_SPEC), false),
];
const ROLLING: &[F] = &[
    F(1, "maxUnavailable", K::IntOrString, false),
    F(2, "maxSurge", K::IntOrString, false),
];
const STRATEGY: &[F] = &[
    F(1, "type", K::Str, false),
    F(2, "rollingUpdate", K::Msg(ROLLING), false),
];
const DEPLOY_SPEC: &[F] = &[
    F(1, "replicas", K::Int, true),
    F(2, "selector", K::Msg(SELECTOR), false),
    F(3, "template", K::Msg(TEMPLATE), false),
    F(4, "strategy", K::Msg(STRATEGY), false),
    F(5, "minReadySeconds", K::Int, false),
    F(6, "revisionHistoryLimit", K::Int, true),
    F(7, "paused", K::Bool, false),
    F(9, "progressDeadlineSeconds", K::Int, true),
];
const DEPLOYMENT: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(DEPLOY_SPEC), false),
    F(3, "status", K::Skip, false),
];
const SERVICE_PORT: &[F] = &[
    F(1, "name", K::Str, false),
    F(2, "protocol", K::Str, false),
    F(3, "port", K::Int, false),
    F(4, "targetPort", K::IntOrString, false),
    F(5, "nodePort", K::Int, false),
];
const SERVICE_SPEC: &[F] = &[
    F(1, "ports", K::RepMsg(SERVICE_PORT), false),
    F(2, "selector", K::MapStr, false),
    F(3, "clusterIP", K::Str, false),
    F(4, "type", K::Str, false),
    F(5, "externalIPs", K::RepStr, false),
    F(7, "sessionAffinity", K::Str, false),
    F(11, "externalName", K::Str, false),
];
const SERVICE: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(SERVICE_SPEC), false),
    F(3, "status", K::Skip, false),
];
const JOB_SPEC: &[F] = &[
    F(1, "parallelism", K::Int, true),
    F(2, "completions", K::Int, true),
    F(3, "activeDeadlineSeconds", K::Int, true),
    F(4, "selector", K::Msg(SELECTOR), false),
    F(5, "manualSelector", K::Bool, true),
    F(6, "template", K::Msg(TEMPLATE), false),
    F(7, "backoffLimit", K::Int, true),
    F(8, "ttlSecondsAfterFinished", K::Int, true),
];
const JOB: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(JOB_SPEC), false),
    F(3, "status", K::Skip, false),
];
const JOB_TEMPLATE: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(JOB_SPEC), false),
];
const CRONJOB_SPEC: &[F] = &[
    F(1, "schedule", K::Str, false),
    F(2, "startingDeadlineSeconds", K::Int, true),
    F(3, "concurrencyPolicy", K::Str, false),
    F(4, "suspend", K::Bool, true),
    F(5, "jobTemplate", K::Msg(JOB_TEMPLATE), false),
    F(6, "successfulJobsHistoryLimit", K::Int, true),
    F(7, "failedJobsHistoryLimit", K::Int, true),
    F(8, "timeZone", K::Str, false),
];
const CRONJOB: &[F] = &[
    F(1, "metadata", K::Msg(META), false),
    F(2, "spec", K::Msg(CRONJOB_SPEC), false),
    F(3, "status", K::Skip, false),
];
const QUANTITY: &[F] = &[F(1, "string", K::Str, false)];

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.i).ok_or(ProtoError::Malformed)?;
            self.i += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ProtoError::Malformed)
    }

    fn bytes(&mut self) -> Result<&'a [u8], ProtoError> {
        let len = usize::try_from(self.varint()?).map_err(|_| ProtoError::Malformed)?;
        let end = self
            .i
            .checked_add(len)
            .filter(|e| *e <= self.b.len())
            .ok_or(ProtoError::Malformed)?;
        let out = &self.b[self.i..end];
        self.i = end;
        Ok(out)
    }

    /// Next (field number, wire type, varint value or payload).
    fn next(&mut self) -> Result<Option<(u64, Wire<'a>)>, ProtoError> {
        if self.i >= self.b.len() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let wire = match tag & 7 {
            0 => Wire::Varint(self.varint()?),
            2 => Wire::Bytes(self.bytes()?),
            1 => {
                self.i = self
                    .i
                    .checked_add(8)
                    .filter(|e| *e <= self.b.len())
                    .ok_or(ProtoError::Malformed)?;
                Wire::Other
            }
            5 => {
                self.i = self
                    .i
                    .checked_add(4)
                    .filter(|e| *e <= self.b.len())
                    .ok_or(ProtoError::Malformed)?;
                Wire::Other
            }
            _ => return Err(ProtoError::Malformed),
        };
        Ok(Some((tag >> 3, wire)))
    }
}

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Other,
}

fn text(b: &[u8]) -> Result<String, ProtoError> {
    String::from_utf8(b.to_vec()).map_err(|_| ProtoError::Malformed)
}

fn map_entry(b: &[u8]) -> Result<(String, &[u8]), ProtoError> {
    let mut r = Reader { b, i: 0 };
    let (mut key, mut value) = (String::new(), &b[0..0]);
    while let Some((n, w)) = r.next()? {
        match (n, w) {
            (1, Wire::Bytes(k)) => key = text(k)?,
            (2, Wire::Bytes(v)) => value = v,
            _ => {}
        }
    }
    Ok((key, value))
}

fn message(b: &[u8], fields: &[F]) -> Result<Map<String, Value>, ProtoError> {
    let mut out = Map::new();
    let mut r = Reader { b, i: 0 };
    while let Some((n, wire)) = r.next()? {
        let Some(&F(_, name, kind, keep_zero)) = fields.iter().find(|f| f.0 == n) else {
            continue;
        };
        let entry = |out: &mut Map<String, Value>| -> Map<String, Value> {
            match out.remove(name) {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            }
        };
        match (kind, wire) {
            (K::Str, Wire::Bytes(v)) => {
                let s = text(v)?;
                if !s.is_empty() {
                    out.insert(name.into(), json!(s));
                }
            }
            (K::Int, Wire::Varint(v)) if v != 0 || keep_zero => {
                out.insert(name.into(), json!(v as i64 as i32));
            }
            (K::Bool, Wire::Varint(v)) if v != 0 || keep_zero => {
                out.insert(name.into(), json!(v != 0));
            }
            (K::Msg(sub), Wire::Bytes(v)) => {
                out.insert(name.into(), Value::Object(message(v, sub)?));
            }
            (K::MapStr | K::MapBytes | K::MapQuantity, Wire::Bytes(v)) => {
                let (k, val) = map_entry(v)?;
                let val = match kind {
                    K::MapBytes => json!(base64::engine::general_purpose::STANDARD.encode(val)),
                    K::MapQuantity => message(val, QUANTITY)?
                        .remove("string")
                        .unwrap_or(json!("0")),
                    _ => json!(text(val)?),
                };
                let mut m = entry(&mut out);
                m.insert(k, val);
                out.insert(name.into(), Value::Object(m));
            }
            (K::RepStr, Wire::Bytes(v)) => push(&mut out, name, json!(text(v)?)),
            (K::RepMsg(sub), Wire::Bytes(v)) => {
                push(&mut out, name, Value::Object(message(v, sub)?))
            }
            (K::IntOrString, Wire::Bytes(v)) => {
                let ios = message(
                    v,
                    &[
                        F(1, "type", K::Int, true),
                        F(2, "intVal", K::Int, true),
                        F(3, "strVal", K::Str, false),
                    ],
                )?;
                let value = if ios.get("type") == Some(&json!(1)) {
                    ios.get("strVal").cloned().unwrap_or(json!(""))
                } else {
                    ios.get("intVal").cloned().unwrap_or(json!(0))
                };
                out.insert(name.into(), value);
            }
            _ => {}
        }
    }
    Ok(out)
}

fn push(out: &mut Map<String, Value>, name: &str, v: Value) {
    match out.get_mut(name) {
        Some(Value::Array(a)) => a.push(v),
        _ => {
            out.insert(name.into(), Value::Array(vec![v]));
        }
    }
}

/// Decodes a protobuf request body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, ProtoError> {
    let rest = body.strip_prefix(b"k8s\0").ok_or(ProtoError::NoMagic)?;
    let mut r = Reader { b: rest, i: 0 };
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &rest[0..0]);
    while let Some((n, w)) = r.next()? {
        match (n, w) {
            (1, Wire::Bytes(tm)) => {
                let t = message(
                    tm,
                    &[
                        F(1, "apiVersion", K::Str, false),
                        F(2, "kind", K::Str, false),
                    ],
                )?;
                api_version = t
                    .get("apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                kind = t
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
            }
            (2, Wire::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let fields = match (api_version.as_str(), kind.as_str()) {
        ("v1", "Namespace") => NAMESPACE,
        ("v1", "ConfigMap") => CONFIGMAP,
        ("v1", "Secret") => SECRET,
        ("v1", "ServiceAccount") => SERVICE_ACCOUNT,
        ("apps/v1", "Deployment") => DEPLOYMENT,
        ("v1", "Service") => SERVICE,
        ("batch/v1", "Job") => JOB,
        ("batch/v1", "CronJob") => CRONJOB,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => SSAR,
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => SSRR,
        ("authentication.k8s.io/v1", "SelfSubjectReview") => SSR,
        ("authentication.k8s.io/v1", "TokenRequest") => TOKEN_REQUEST,
        ("rbac.authorization.k8s.io/v1", "Role") => ROLE,
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => CLUSTER_ROLE,
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => ROLE_BINDING,
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => CLUSTER_ROLE_BINDING,
        _ => return Err(ProtoError::Unsupported(format!("{api_version} {kind}"))),
    };
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    obj.extend(message(raw, fields)?);
    Ok(Value::Object(obj))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: u64, payload: &[u8]) -> Vec<u8> {
        let mut out = vec![((n << 3) | 2) as u8, payload.len() as u8];
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn decodes_a_configmap_envelope() {
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let meta = [field(1, b"cfg"), field(2, b"")].concat();
        let entry = [field(1, b"a"), field(2, b"b")].concat();
        let raw = [field(1, &meta), field(2, &entry)].concat();
        let body = [b"k8s\0".to_vec(), field(1, &type_meta), field(2, &raw)].concat();
        let v = decode(&body).expect("decodes");
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"a": "b"}})
        );
        assert_eq!(decode(b"{}"), Err(ProtoError::NoMagic));
        assert_eq!(decode(b"k8s\0\x0a\xff"), Err(ProtoError::Malformed));
    }
}
