//! The built-in cert-manager (`piceli sim serve --cert-manager`, [`crate::SimConfig::cert_manager`]):
//! what cert-manager v1 does for the objects an operator's manifests declare. It installs the
//! cert-manager.io/v1 CRDs, marks selfSigned and CA Issuers/ClusterIssuers Ready, issues each
//! Certificate into its Secret (`tls.crt`, `tls.key`, `ca.crt`, type `kubernetes.io/tls`) with a real
//! key pair, re-issues it when its spec changes, its Secret is lost or its renewal time comes
//! (`renewBefore`, default a third of `duration`), and, as cert-manager's CA injector, copies the
//! CA into the `caBundle` of webhook configurations annotated `cert-manager.io/inject-ca-from:
//! NS/CERTIFICATE` or `cert-manager.io/inject-ca-from-secret: NS/SECRET`.
//!
//! Its turns run in the controller loop and see the cluster through the controllers' narrow handle
//! ([`crate::cluster::Cluster`]); only [`install`], which the server calls at start to
//! create the CRDs (with strict field validation, as an install would), takes the registry backend.

mod crds;
mod issue;

use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::registry::ResourceType;
use crate::registry::backend::Backend;
use crate::registry::object::{Candidate, Mode, WriteCtx, write};
use crate::registry::validate::FieldValidation;
use crate::status::ApiError;
use crate::util::{self, s};

pub use issue::go_duration;

const GROUP: &str = "cert-manager.io";
const MANAGER: &str = "cert-manager-certificates-issuing";
const INJECTOR: &str = "cert-manager-cainjector";
/// The Secret annotation that records which Certificate spec its certificate was issued for.
const SPEC_HASH: &str = "sim.piceli.dev/certificate-spec-hash";

/// Store keys whose changes make the built-in cert-manager look again.
pub(crate) const WATCHES: &[&str] = &[
    "cert-manager.io/certificates",
    "cert-manager.io/issuers",
    "cert-manager.io/clusterissuers",
    "/secrets",
    "admissionregistration.k8s.io/validatingwebhookconfigurations",
    "admissionregistration.k8s.io/mutatingwebhookconfigurations",
];

/// Creates the cert-manager.io/v1 CRDs that are missing.
pub fn install(backend: &Backend) -> Result<(), ApiError> {
    let Some(crd_rt) =
        backend
            .registry
            .lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    else {
        return Ok(());
    };
    for crd in crds::all() {
        let name = s(&crd, "/metadata/name").to_string();
        if backend.store.get(&crd_rt.store_key(), "", &name)?.is_some() {
            continue;
        }
        let ctx = WriteCtx {
            backend,
            rt: &crd_rt,
            ns: "",
            subresource: "",
            manager: "cert-manager".into(),
            dry_run: false,
            validation: FieldValidation::Strict,
            authorize_create: None,
        };
        match write(&ctx, &name, Mode::Create, |_| Ok(Candidate::Replace(crd))) {
            Err(e) if e.code != 409 => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

fn condition(ready: bool, reason: &str, message: &str, old: &Value) -> Value {
    let status = if ready { "True" } else { "False" };
    // The transition time moves only when the status does.
    let since = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready" && c["status"] == status)
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| json!(crate::time::now_rfc3339()));
    json!({"type": "Ready", "status": status, "reason": reason, "message": message,
        "lastTransitionTime": since, "observedGeneration": old.pointer("/metadata/generation").cloned().unwrap_or(json!(1))})
}

/// Sets `status.conditions` (and `extra` status fields) when they differ.
fn set_status(
    cluster: &Cluster,
    rt: &ResourceType,
    obj: &Value,
    cond: Value,
    extra: &[(&str, Value)],
) {
    let (ns, name) = (s(obj, "/metadata/namespace"), s(obj, "/metadata/name"));
    let _ = cluster.update(rt, ns, name, "status", MANAGER, |o| {
        let before = o.get("status").cloned();
        let mut status = before.clone().unwrap_or_else(|| json!({}));
        status["conditions"] = json!([cond]);
        for (k, v) in extra {
            status[*k] = v.clone();
        }
        o["status"] = status;
        o.get("status") != before.as_ref()
    });
}

/// A Secret as stored now.
fn read_secret(cluster: &Cluster, ns: &str, name: &str) -> Result<Option<Value>, ApiError> {
    cluster.get(&cluster.rt("", "v1", "secrets")?, ns, name)
}

fn secret_pem(secret: &Value, key: &str) -> Option<String> {
    let b64 = secret.pointer(&format!("/data/{key}"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.as_str()?)
        .ok()?;
    String::from_utf8(bytes).ok().filter(|p| !p.is_empty())
}

/// Whether an issuer can sign, and why not.
fn issuer_state(
    cluster: &Cluster,
    issuer: &Value,
    secrets_ns: &str,
) -> Result<(), (String, String)> {
    let spec = &issuer["spec"];
    if spec.get("selfSigned").is_some() {
        return Ok(());
    }
    let Some(ca) = spec.get("ca") else {
        return Err((
            "UnsupportedIssuer".into(),
            "the local cluster's cert-manager issues with selfSigned and ca issuers only".into(),
        ));
    };
    let secret_name = s(ca, "/secretName");
    let secret = read_secret(cluster, secrets_ns, secret_name).ok().flatten();
    match secret {
        Some(sec)
            if secret_pem(&sec, "tls.crt").is_some() && secret_pem(&sec, "tls.key").is_some() =>
        {
            Ok(())
        }
        _ => Err((
            "ErrGetKeyPair".into(),
            format!("Error getting keypair for CA issuer: secrets \"{secret_name}\" not found"),
        )),
    }
}

/// One turn over every Issuer, ClusterIssuer, Certificate and annotated webhook configuration.
/// `wake` is told when the next renewal is due.
pub fn reconcile(cluster: &Cluster, wake: &mut dyn FnMut(Instant)) {
    let (Ok(issuers), Ok(cluster_issuers), Ok(certs)) = (
        cluster.rt(GROUP, "v1", "issuers"),
        cluster.rt(GROUP, "v1", "clusterissuers"),
        cluster.rt(GROUP, "v1", "certificates"),
    ) else {
        return;
    };
    for issuer in cluster.list(&issuers).iter() {
        let ns = s(issuer, "/metadata/namespace").to_string();
        mark_issuer(cluster, &issuers, issuer, &ns);
    }
    for issuer in cluster.list(&cluster_issuers).iter() {
        // A ClusterIssuer's CA Secret lives in the cluster resource namespace (cert-manager's).
        mark_issuer(cluster, &cluster_issuers, issuer, "cert-manager");
    }
    for cert in cluster.list(&certs).iter() {
        if let Err(e) = certificate(cluster, &certs, &issuers, &cluster_issuers, cert, wake) {
            set_status(
                cluster,
                &certs,
                cert,
                condition(false, "Failed", &e, cert),
                &[],
            );
        }
    }
    inject(cluster, &certs);
}

fn mark_issuer(cluster: &Cluster, rt: &ResourceType, issuer: &Value, secrets_ns: &str) {
    let cond = match issuer_state(cluster, issuer, secrets_ns) {
        Ok(()) if issuer["spec"].get("ca").is_some() => {
            condition(true, "KeyPairVerified", "Signing CA verified", issuer)
        }
        Ok(()) => condition(true, "IsReady", "", issuer),
        Err((reason, message)) => condition(false, &reason, &message, issuer),
    };
    set_status(cluster, rt, issuer, cond, &[]);
}

fn spec_hash(spec: &Value) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, spec.to_string().as_bytes());
    digest.as_ref()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn certificate(
    cluster: &Cluster,
    certs: &ResourceType,
    issuers: &ResourceType,
    cluster_issuers: &ResourceType,
    cert: &Value,
    wake: &mut dyn FnMut(Instant),
) -> Result<(), String> {
    if util::terminating(cert) {
        return Ok(());
    }
    let ns = s(cert, "/metadata/namespace");
    let spec = &cert["spec"];
    let secret_name = s(spec, "/secretName");
    if secret_name.is_empty() {
        return Err("spec.secretName is required".into());
    }
    let issuer_name = s(spec, "/issuerRef/name");
    let issuer_kind = spec
        .pointer("/issuerRef/kind")
        .and_then(Value::as_str)
        .unwrap_or("Issuer");
    let (issuer, secrets_ns) = match issuer_kind {
        "ClusterIssuer" => (
            cluster.get(cluster_issuers, "", issuer_name).ok().flatten(),
            "cert-manager",
        ),
        _ => (cluster.get(issuers, ns, issuer_name).ok().flatten(), ns),
    };
    let Some(issuer) = issuer else {
        let msg = format!(
            "Issuing certificate as Secret does not exist: {issuer_kind} \"{issuer_name}\" not found"
        );
        set_status(
            cluster,
            certs,
            cert,
            condition(false, "DoesNotExist", &msg, cert),
            &[],
        );
        return Ok(());
    };
    if let Err((_, message)) = issuer_state(cluster, &issuer, secrets_ns) {
        let msg = format!("Issuer \"{issuer_name}\" is not ready: {message}");
        set_status(
            cluster,
            certs,
            cert,
            condition(false, "IssuerNotReady", &msg, cert),
            &[],
        );
        return Ok(());
    }
    let hash = spec_hash(spec);
    let secret = read_secret(cluster, ns, secret_name).ok().flatten();
    let now = crate::time::now_secs();
    let renewal = cert
        .pointer("/status/renewalTime")
        .and_then(Value::as_str)
        .and_then(crate::time::parse_rfc3339);
    let current = secret.as_ref().is_some_and(|sec| {
        s(
            sec,
            &format!("/metadata/annotations/{}", SPEC_HASH.replace('/', "~1")),
        ) == hash
            && secret_pem(sec, "tls.crt").is_some()
            && secret_pem(sec, "tls.key").is_some()
    });
    if current && let Some(at) = renewal.filter(|at| *at > now) {
        wake(Instant::now() + Duration::from_secs((at - now) as u64));
        let cond = condition(
            true,
            "Ready",
            "Certificate is up to date and has not expired",
            cert,
        );
        set_status(cluster, certs, cert, cond, &[]);
        return Ok(());
    }
    let ca_secret = issuer
        .pointer("/spec/ca/secretName")
        .and_then(Value::as_str)
        .and_then(|n| read_secret(cluster, secrets_ns, n).ok().flatten());
    let issued = match &ca_secret {
        Some(ca) => {
            let cert_pem = secret_pem(ca, "tls.crt").unwrap_or_default();
            let ca_pem = secret_pem(ca, "ca.crt").unwrap_or_else(|| cert_pem.clone());
            let key_pem = secret_pem(ca, "tls.key").unwrap_or_default();
            issue::issue(
                spec,
                &issue::Signer::Ca {
                    cert_pem: &cert_pem,
                    key_pem: &key_pem,
                    ca_pem: &ca_pem,
                },
            )?
        }
        None => issue::issue(spec, &issue::Signer::SelfSigned)?,
    };
    write_secret(cluster, cert, &issuer, secret.as_ref(), &issued, &hash).map_err(|e| e.message)?;
    let lifetime = issued.not_after - issued.not_before;
    let before = spec
        .get("renewBefore")
        .and_then(Value::as_str)
        .and_then(go_duration)
        .filter(|b| *b > 0 && *b < lifetime)
        .unwrap_or(lifetime / 3);
    let renew_at = issued.not_after - before;
    wake(Instant::now() + Duration::from_secs((renew_at - now).max(0) as u64));
    let revision = cert
        .pointer("/status/revision")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        + 1;
    let fmt = crate::time::format_rfc3339;
    let cond = condition(
        true,
        "Ready",
        "Certificate is up to date and has not expired",
        cert,
    );
    set_status(
        cluster,
        certs,
        cert,
        cond,
        &[
            ("notBefore", json!(fmt(issued.not_before))),
            ("notAfter", json!(fmt(issued.not_after))),
            ("renewalTime", json!(fmt(renew_at))),
            ("revision", json!(revision)),
        ],
    );
    Ok(())
}

fn write_secret(
    cluster: &Cluster,
    cert: &Value,
    issuer: &Value,
    existing: Option<&Value>,
    issued: &issue::Issued,
    hash: &str,
) -> Result<(), ApiError> {
    let secrets = cluster.rt("", "v1", "secrets")?;
    let ns = s(cert, "/metadata/namespace");
    let spec = &cert["spec"];
    let name = s(spec, "/secretName");
    let b64 = |p: &str| json!(base64::engine::general_purpose::STANDARD.encode(p));
    let alt: Vec<&str> = spec
        .get("dnsNames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let annotations = json!({
        "cert-manager.io/alt-names": alt.join(","),
        "cert-manager.io/certificate-name": s(cert, "/metadata/name"),
        "cert-manager.io/common-name": s(spec, "/commonName"),
        "cert-manager.io/issuer-group": GROUP,
        "cert-manager.io/issuer-kind": s(issuer, "/kind"),
        "cert-manager.io/issuer-name": s(issuer, "/metadata/name"),
        SPEC_HASH: hash,
    });
    let data = json!({
        "tls.crt": b64(&issued.cert_pem),
        "tls.key": b64(&issued.key_pem),
        "ca.crt": b64(&issued.ca_pem),
    });
    match existing {
        None => cluster
            .create(
                &secrets,
                ns,
                json!({
                    "apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": name, "namespace": ns, "annotations": annotations,
                        "labels": {"controller.cert-manager.io/fao": "true"}},
                    "type": "kubernetes.io/tls",
                    "data": data,
                }),
                MANAGER,
            )
            .map(|_| ()),
        Some(_) => cluster.update(&secrets, ns, name, "", MANAGER, |o| {
            for (k, v) in annotations.as_object().into_iter().flatten() {
                o["metadata"]["annotations"][k] = v.clone();
            }
            o["metadata"]["labels"]["controller.cert-manager.io/fao"] = json!("true");
            for (k, v) in data.as_object().into_iter().flatten() {
                o["data"][k] = v.clone();
            }
            true
        }),
    }
}

/// The CA a webhook configuration asks to be injected: `ca.crt` of a Certificate's Secret or of a
/// named Secret.
fn ca_for(cluster: &Cluster, certs: &ResourceType, annotations: &Value) -> Option<String> {
    let (secret_ns, secret_name) = if let Some(from) = annotations
        .get("cert-manager.io/inject-ca-from")
        .and_then(Value::as_str)
    {
        let (ns, name) = from.split_once('/')?;
        let cert = cluster.get(certs, ns, name).ok().flatten()?;
        (ns.to_string(), s(&cert, "/spec/secretName").to_string())
    } else {
        let from = annotations
            .get("cert-manager.io/inject-ca-from-secret")
            .and_then(Value::as_str)?;
        let (ns, name) = from.split_once('/')?;
        (ns.to_string(), name.to_string())
    };
    let secret = read_secret(cluster, &secret_ns, &secret_name)
        .ok()
        .flatten()?;
    secret
        .pointer("/data/ca.crt")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
}

/// cainjector: every annotated webhook configuration's webhooks get the CA as `caBundle`.
fn inject(cluster: &Cluster, certs: &ResourceType) {
    for plural in [
        "validatingwebhookconfigurations",
        "mutatingwebhookconfigurations",
    ] {
        let Ok(kind) = cluster.rt("admissionregistration.k8s.io", "v1", plural) else {
            continue;
        };
        for config in cluster.list(&kind).iter() {
            let Some(ca) = ca_for(cluster, certs, &config["metadata"]["annotations"]) else {
                continue;
            };
            let name = s(config, "/metadata/name");
            let _ = cluster.update(&kind, "", name, "", INJECTOR, |o| {
                let mut changed = false;
                for hook in o
                    .get_mut("webhooks")
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    if hook["clientConfig"]["caBundle"] != json!(ca) {
                        hook["clientConfig"]["caBundle"] = json!(ca);
                        changed = true;
                    }
                }
                changed
            });
        }
    }
}
