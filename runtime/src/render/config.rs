//! The namespace, ConfigMaps, Secrets (redacted) and PersistentVolumeClaims.

use super::Sink;
use super::meta::Cx;
use super::workloads::claim_spec;
use super::{json, merge_block};
use crate::error::Error;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, PersistentVolumeClaim, Secret};
use piceli_core::schema;
use std::collections::BTreeMap;

/// The target's namespace, unless it is `default` (which always exists).
pub(super) fn namespace(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    if cx.namespace != "default" {
        out.push(json(
            "Namespace",
            &Namespace {
                metadata: cx.cluster_meta(&cx.namespace, &Vec::new(), &Vec::new()),
                ..Namespace::default()
            },
        )?);
    }
    Ok(())
}

pub(super) fn config(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for c in &cx.app.config_maps {
        let data: BTreeMap<String, String> = c
            .data
            .iter()
            .map(|(k, v)| (k.v.clone(), v.text().to_string()))
            .collect();
        out.push(json(
            "ConfigMap",
            &ConfigMap {
                metadata: cx.meta(&c.name.v, &c.labels, &c.annotations),
                data: Some(data),
                ..ConfigMap::default()
            },
        )?);
    }
    for s in &cx.app.secrets {
        // Values are read only when applying; render shows where each comes from, never a value.
        // A TLS generator's key K fills K.crt and K.key (and ca.crt): a marker for each.
        let string_data: BTreeMap<String, String> = s
            .data_keys()
            .into_iter()
            .map(|(k, i)| (k, s.data[i].1.redaction_marker()))
            .collect();
        out.push(json(
            "Secret",
            &Secret {
                metadata: cx.meta(&s.name.v, &s.labels, &s.annotations),
                type_: Some(s.effective_type()),
                string_data: Some(string_data),
                ..Secret::default()
            },
        )?);
    }
    Ok(())
}

pub(super) fn storage(cx: &Cx, out: &mut dyn Sink) -> Result<(), Error> {
    for p in &cx.app.pvcs {
        let mut object = json(
            "PersistentVolumeClaim",
            &PersistentVolumeClaim {
                metadata: cx.meta(&p.name.v, &p.labels, &p.annotations),
                spec: Some(claim_spec(
                    &p.storage.v,
                    &p.access_modes,
                    p.storage_class.as_ref().map(|s| s.v.as_str()),
                )),
                ..PersistentVolumeClaim::default()
            },
        )?;
        merge_block(
            &mut object,
            &["spec"],
            &p.spec,
            schema::PERSISTENT_VOLUME_CLAIM_SPEC,
        );
        out.push(object);
    }
    Ok(())
}
