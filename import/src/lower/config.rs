//! Lowering ConfigMaps, Secrets (their values become `from_env("…")`, never source) and
//! PersistentVolumeClaims.

use super::Cx;
use crate::dsl::{Dsl, Item};
use piceli_core::Code;
use serde_json::Value;

/// `config_map NAME { labels, annotations, data: { KEY: "value" } }`; one with `binaryData` or
/// `immutable` is included as it is.
pub(super) fn config_map(cx: &mut Cx, o: &Value) -> Option<Item> {
    if let Some(m) = maker(o) {
        return Some(external(
            cx,
            "config_map",
            o["metadata"]["name"].as_str()?,
            &m,
        ));
    }
    let obj = o.as_object()?;
    if obj
        .keys()
        .any(|k| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "data"))
    {
        return None;
    }
    let mut item = Item::new("config_map", o["metadata"]["name"].as_str()?);
    cx.meta(&mut item, o);
    let data = o["data"].as_object().cloned().unwrap_or_default();
    item.entry("data", Dsl::str_map(&data));
    cx.config_maps
        .insert(o["metadata"]["name"].as_str()?.to_string());
    Some(item)
}

/// `secret NAME { type, data: { KEY: from_env("NAME_KEY") } }`, the variables listed in `.env.example`;
/// `external secret NAME;` when someone else makes it, or with `--secrets external`.
pub(super) fn secret(cx: &mut Cx, o: &Value) -> Option<Item> {
    let name = o["metadata"]["name"].as_str()?;
    if let Some(m) = maker(o) {
        return Some(external(cx, "secret", name, &m));
    }
    if cx.secrets_external {
        return Some(external(
            cx,
            "secret",
            name,
            "`--secrets external`: made outside the app",
        ));
    }
    let obj = o.as_object()?;
    if obj.keys().any(|k| {
        !matches!(
            k.as_str(),
            "apiVersion" | "kind" | "metadata" | "data" | "stringData" | "type" | "immutable"
        )
    }) {
        return None;
    }
    let mut item = Item::new("secret", name);
    if let Some(t) = o["type"].as_str().filter(|t| *t != "Opaque") {
        item.entry("type", Dsl::Str(t.to_string()));
    }
    cx.meta(&mut item, o);
    if o.get("immutable").is_some() {
        cx.warn(
            Code::ImportFieldChanged,
            o,
            "`immutable` dropped: a Piceli Secret is updated in place",
        );
    }
    let mut keys: Vec<String> = Vec::new();
    for field in ["data", "stringData"] {
        if let Some(m) = o[field].as_object() {
            keys.extend(
                m.keys()
                    .filter(|k| !keys.contains(k))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
        }
    }
    let mut data = Vec::new();
    for k in keys {
        let var = env_name(name, &k);
        cx.out
            .env
            .push((var.clone(), format!("Secret {name}, key {k}")));
        data.push((k, Dsl::call("from_env", var)));
    }
    item.entry("data", Dsl::Map(data));
    cx.secrets.insert(name.to_string());
    item.comments.push(
        "piceli: secret values are read from the environment when the app applies (see .env.example)"
            .into(),
    );
    Some(item)
}

/// `external KIND NAME;` for an object someone else makes: referred to by name, never rendered (its values
/// never reach the source).
pub(super) fn external(cx: &mut Cx, kind: &str, name: &str, maker: &str) -> Item {
    match kind {
        "secret" => cx.secrets.insert(name.to_string()),
        _ => cx.config_maps.insert(name.to_string()),
    };
    let mut item = Item::new(&format!("external {kind}"), name);
    item.comments.push(format!(
        "piceli: {maker}: declared `external`, so the app refers to it and never writes, adopts or prunes it"
    ));
    item
}

/// Who makes a Secret or ConfigMap when it is not the app: its owner (`ExternalSecret db`), cert-manager
/// (its annotations), the cluster (a ServiceAccount token).
pub(super) fn maker(o: &Value) -> Option<String> {
    if let Some(owner) = o["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|r| r.first())
    {
        return Some(format!(
            "made by its owner {} {}",
            owner["kind"].as_str().unwrap_or("?"),
            owner["name"].as_str().unwrap_or("?")
        ));
    }
    let annotations = &o["metadata"]["annotations"];
    if let Some(cert) = annotations["cert-manager.io/certificate-name"].as_str() {
        return Some(format!("issued by cert-manager for Certificate {cert}"));
    }
    if o["type"] == "kubernetes.io/service-account-token" {
        return Some(format!(
            "a token the cluster issues for ServiceAccount {}",
            annotations["kubernetes.io/service-account.name"]
                .as_str()
                .unwrap_or("?")
        ));
    }
    None
}

/// `db-creds` + `password` → `DB_CREDS_PASSWORD`.
pub fn env_name(secret: &str, key: &str) -> String {
    let mut s: String = format!("{secret}_{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// `pvc NAME { storage, access, class, spec: { … } }`.
pub(super) fn pvc(cx: &mut Cx, o: &Value) -> Option<Item> {
    let mut spec = o["spec"].as_object()?.clone();
    let storage = spec
        .get_mut("resources")
        .and_then(|r| r.get_mut("requests"))
        .and_then(Value::as_object_mut)?
        .shift_remove("storage")?;
    // Leave no empty `resources: { requests: {} }` behind.
    if spec["resources"]["requests"]
        .as_object()
        .is_some_and(|m| m.is_empty())
        && let Some(r) = spec.get_mut("resources").and_then(Value::as_object_mut)
    {
        r.shift_remove("requests");
    }
    if spec["resources"].as_object().is_some_and(|m| m.is_empty()) {
        spec.shift_remove("resources");
    }
    let name = o["metadata"]["name"].as_str()?;
    let mut item = Item::new("pvc", name);
    cx.meta(&mut item, o);
    item.entry("storage", Dsl::from_json(&storage)?);
    if let Some(a) = spec
        .shift_remove("accessModes")
        .as_ref()
        .and_then(Dsl::from_json)
    {
        item.entry("access", a);
    }
    if let Some(c) = spec
        .shift_remove("storageClassName")
        .as_ref()
        .and_then(Dsl::from_json)
    {
        item.entry("class", c);
    }
    item.json_entry("spec", Some(&Value::Object(spec)));
    cx.pvcs.insert(name.to_string());
    Some(item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_are_shell_names() {
        assert_eq!(env_name("db-creds", "password"), "DB_CREDS_PASSWORD");
        assert_eq!(env_name("tls", "tls.crt"), "TLS_TLS_CRT");
        assert_eq!(env_name("1x", "k"), "_1X_K");
    }
}
