//! ServiceAccount tokens: the TokenRequest API (`POST …/serviceaccounts/NAME/token`, what
//! `kubectl create token` calls) issues JWTs signed with the cluster's key (HMAC-SHA256), bound
//! to the ServiceAccount's uid (and to a Pod or Secret when asked), with an expiry; requests
//! bearing one authenticate as `system:serviceaccount:NS:NAME` while all of that still holds.

use std::collections::HashMap;
use std::sync::RwLock;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::hmac;
use serde_json::{Value, json};

use super::identity::UserInfo;
use crate::apiserver::app::App;
use crate::status::{ApiError, Cause};
use crate::time::{format_rfc3339, now_secs};

/// The audience tokens are issued for by default, and the one this API server accepts.
pub const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";
/// Default and shortest lifetimes of a requested token (kube-apiserver's).
const DEFAULT_SECONDS: i64 = 3600;
const MIN_SECONDS: i64 = 600;

fn key(app: &App) -> hmac::Key {
    hmac::Key::new(hmac::HMAC_SHA256, app.token.as_bytes())
}

fn sign(app: &App, claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signed = format!("{header}.{payload}");
    let tag = hmac::sign(&key(app), signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
}

/// The claims of a token this cluster signed, if the signature holds.
fn verify(app: &App, token: &str) -> Option<Value> {
    let (signed, tag) = token.rsplit_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    hmac::verify(&key(app), signed.as_bytes(), &tag).ok()?;
    let payload = URL_SAFE_NO_PAD.decode(signed.split_once('.')?.1).ok()?;
    serde_json::from_slice(&payload).ok()
}

fn object_uid(app: &App, resource: &str, ns: &str, name: &str) -> Option<String> {
    let rt = app.backend.registry.lookup("", "v1", resource)?;
    let obj = app.backend.store.get(&rt.store_key(), ns, name).ok()??;
    obj.pointer("/metadata/uid")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Tokens verified before, by their signature (a few dozen bytes to hash, not the whole token):
/// the token, its user, expiry and the store keys whose change invalidates it.
#[derive(Default)]
pub struct TokenCache(RwLock<HashMap<String, Verified>>);

struct Verified {
    token: String,
    user: UserInfo,
    exp: i64,
    keys: Vec<&'static str>,
    stamp: u64,
}

/// Most tokens remembered; the cache is emptied when it would grow past it.
const CACHED_TOKENS: usize = 1024;

fn stamp(store: &crate::storage::Store, keys: &[&str]) -> u64 {
    store.hub().last_change_of(keys)
}

/// The ServiceAccount a valid, unexpired token for this API server names, while it (and the
/// object the token is bound to) still exists with the same uid.
pub fn authenticate(app: &App, token: &str) -> Option<UserInfo> {
    let (_, signature) = token.rsplit_once('.')?;
    if let Ok(cache) = app.token_cache.0.read()
        && let Some(v) = cache.get(signature)
        && v.token == token
        && v.exp > now_secs()
        && v.stamp == stamp(&app.backend.store, &v.keys)
    {
        return Some(v.user.clone());
    }
    let mut keys = vec!["/serviceaccounts"];
    let claims = verify(app, token)?;
    if claims["kubernetes.io"].get("pod").is_some() {
        keys.push("/pods");
    }
    if claims["kubernetes.io"].get("secret").is_some() {
        keys.push("/secrets");
    }
    let at = stamp(&app.backend.store, &keys);
    let user = check(app, &claims)?;
    if let Ok(mut cache) = app.token_cache.0.write() {
        if cache.len() >= CACHED_TOKENS {
            cache.clear();
        }
        let exp = claims["exp"].as_i64().unwrap_or(0);
        cache.insert(
            signature.to_string(),
            Verified {
                token: token.to_string(),
                user: user.clone(),
                exp,
                keys,
                stamp: at,
            },
        );
    }
    Some(user)
}

fn check(app: &App, claims: &Value) -> Option<UserInfo> {
    if claims["exp"].as_i64()? <= now_secs() {
        return None;
    }
    let audiences = claims["aud"].as_array()?;
    if !audiences.iter().any(|a| a == API_AUDIENCE) {
        return None;
    }
    let k = &claims["kubernetes.io"];
    let ns = k["namespace"].as_str()?;
    let name = k["serviceaccount"]["name"].as_str()?;
    let uid = k["serviceaccount"]["uid"].as_str()?;
    if object_uid(app, "serviceaccounts", ns, name)? != uid {
        return None;
    }
    for (kind, resource) in [("pod", "pods"), ("secret", "secrets")] {
        if let Some(bound) = k.get(kind) {
            let bound_uid = object_uid(app, resource, ns, bound["name"].as_str()?)?;
            if bound["uid"].as_str()? != bound_uid {
                return None;
            }
        }
    }
    let mut user = UserInfo::service_account(ns, name, uid);
    // As kube-apiserver's ServiceAccount token authenticator: the token's id is the credential's.
    if let Some(jti) = claims["jti"].as_str() {
        user.extra.push((
            "authentication.kubernetes.io/credential-id".into(),
            vec![format!("JTI={jti}")],
        ));
    }
    Some(user)
}

fn invalid(name: &str, field: &str, message: String) -> ApiError {
    ApiError::invalid(
        "authentication.k8s.io",
        "TokenRequest",
        name,
        vec![Cause {
            reason: "FieldValueInvalid".into(),
            message,
            field: field.into(),
        }],
    )
}

/// Answers a TokenRequest for the ServiceAccount `ns/name` (201 with `status.token`).
pub fn token_request(app: &App, ns: &str, name: &str, body: &Value) -> Result<Value, ApiError> {
    let sa_uid = object_uid(app, "serviceaccounts", ns, name)
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    let seconds = match spec.get("expirationSeconds") {
        None | Some(Value::Null) => DEFAULT_SECONDS,
        Some(v) => v.as_i64().ok_or_else(|| {
            invalid(
                name,
                "spec.expirationSeconds",
                format!("Invalid value: {v}: must be an integer"),
            )
        })?,
    };
    if seconds < MIN_SECONDS {
        return Err(invalid(
            name,
            "spec.expirationSeconds",
            format!("Invalid value: {seconds}: may not specify a duration less than 10 minutes"),
        ));
    }
    let audiences: Vec<String> = spec
        .get("audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .filter(|a: &Vec<String>| !a.is_empty())
        .unwrap_or_else(|| vec![API_AUDIENCE.to_string()]);
    let now = now_secs();
    let mut k8s = json!({"namespace": ns, "serviceaccount": {"name": name, "uid": sa_uid}});
    let mut spec_out =
        json!({"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": null});
    if let Some(bound) = spec.get("boundObjectRef").filter(|b| b.is_object()) {
        let kind = bound["kind"].as_str().unwrap_or("");
        let bname = bound["name"].as_str().unwrap_or("");
        let (claim, resource) = match kind {
            "Pod" => ("pod", "pods"),
            "Secret" => ("secret", "secrets"),
            other => {
                return Err(invalid(
                    name,
                    "spec.boundObjectRef.kind",
                    format!(
                        "Unsupported value: \"{other}\": supported values: \"Pod\", \"Secret\""
                    ),
                ));
            }
        };
        let uid = object_uid(app, resource, ns, bname)
            .ok_or_else(|| ApiError::not_found("", resource, bname))?;
        if let Some(want) = bound["uid"].as_str().filter(|u| !u.is_empty())
            && want != uid
        {
            return Err(ApiError::conflict(
                "",
                resource,
                bname,
                &format!(
                    "the UID in the bound object reference ({want}) does not match the UID in record. The object might have been deleted and then recreated"
                ),
            ));
        }
        k8s[claim] = json!({"name": bname, "uid": uid});
        spec_out["boundObjectRef"] =
            json!({"kind": kind, "apiVersion": "v1", "name": bname, "uid": uid});
    }
    let claims = json!({
        "jti": crate::registry::object::new_uid(),
        "iss": API_AUDIENCE,
        "sub": format!("system:serviceaccount:{ns}:{name}"),
        "aud": audiences,
        "iat": now,
        "nbf": now,
        "exp": now + seconds,
        "kubernetes.io": k8s,
    });
    Ok(json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": format_rfc3339(now)},
        "spec": spec_out,
        "status": {"token": sign(app, &claims), "expirationTimestamp": format_rfc3339(now + seconds)},
    }))
}
