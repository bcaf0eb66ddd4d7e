//! CustomResourceDefinitions read from files (`crds "crds/";` in `app!`): their kinds, scopes and
//! versions, each version's schema as a [`Node`] tree, and finding the kind a `resource` item names
//! (`gateway.networking.k8s.io/v1/HTTPRoute`, or `HTTPRoute` when one CRD defines it).

mod node;

pub use node::{Node, NodeField, Ty};

use crate::coded::Coded;
use crate::codes::Code;
use crate::rules::did_you_mean;
use serde_json::Value;

/// One CustomResourceDefinition.
#[derive(Debug, Clone, PartialEq)]
pub struct Crd {
    /// `httproutes.gateway.networking.k8s.io`.
    pub name: String,
    /// `gateway.networking.k8s.io`.
    pub group: String,
    /// `HTTPRoute`.
    pub kind: String,
    /// `scope: Namespaced`.
    pub namespaced: bool,
    /// Its served versions, in the CRD's order.
    pub versions: Vec<CrdVersion>,
    /// The file it came from and the line its document starts on (`crds/x.yaml:1`).
    pub origin: String,
}

/// A served version of a CRD.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdVersion {
    /// `v1`.
    pub name: String,
    /// Its `schema.openAPIV3Schema`.
    pub schema: Node,
    /// `storage: true`: the version the API server stores, which a kind written alone means.
    pub storage: bool,
}

/// A CRD file that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct CrdError {
    /// The file (and line).
    pub origin: String,
    /// What is wrong.
    pub message: String,
}

impl Coded for CrdError {
    fn code(&self) -> Code {
        Code::CrdFile
    }
}

/// Every CRD of a YAML file's text; `file` names it in errors.
pub fn read(text: &str, file: &str) -> Result<Vec<Crd>, CrdError> {
    let objects = crate::include::parse_objects(text, false).map_err(|e| CrdError {
        origin: file.to_string(),
        message: e.describe(file),
    })?;
    objects
        .iter()
        .map(|o| from_object(&o.object, &format!("{file}:{}", o.line)))
        .collect()
}

/// One CRD object.
pub fn from_object(o: &Value, origin: &str) -> Result<Crd, CrdError> {
    let fail = |message: String| CrdError {
        origin: origin.to_string(),
        message,
    };
    if o["apiVersion"] != "apiextensions.k8s.io/v1" || o["kind"] != "CustomResourceDefinition" {
        return Err(fail(format!(
            "a {} {} is not an apiextensions.k8s.io/v1 CustomResourceDefinition",
            o["apiVersion"].as_str().unwrap_or("?"),
            o["kind"].as_str().unwrap_or("?")
        )));
    }
    let spec = &o["spec"];
    let text = |v: &Value, what: &str| {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| fail(format!("the CRD has no `{what}`")))
    };
    let group = text(&spec["group"], "spec.group")?;
    let kind = text(&spec["names"]["kind"], "spec.names.kind")?;
    let name = text(&o["metadata"]["name"], "metadata.name")?;
    let namespaced = match spec["scope"].as_str() {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        _ => {
            return Err(fail(
                "`spec.scope` is neither `Namespaced` nor `Cluster`".into(),
            ));
        }
    };
    let mut versions = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        if v["served"] == false {
            continue;
        }
        let version = text(&v["name"], "spec.versions[].name")?;
        let Some(schema) = v.pointer("/schema/openAPIV3Schema") else {
            return Err(fail(format!(
                "version {version} has no `schema.openAPIV3Schema`"
            )));
        };
        versions.push(CrdVersion {
            schema: Node::from_schema(schema, &kind),
            storage: v["storage"] == true,
            name: version,
        });
    }
    if versions.is_empty() {
        return Err(fail("the CRD serves no version".into()));
    }
    Ok(Crd {
        name,
        group,
        kind,
        namespaced,
        versions,
        origin: origin.to_string(),
    })
}

/// What a `resource` item's kind names.
#[derive(Debug)]
pub enum Found<'a> {
    /// One CRD's version.
    One(&'a Crd, &'a CrdVersion),
    /// Nothing: the closest name there is, if any, and every name there is.
    Unknown {
        /// The closest `group/version/Kind`.
        closest: Option<String>,
        /// Every `group/version/Kind`.
        known: Vec<String>,
    },
    /// A short kind several CRDs define: each one's `group/version/Kind`.
    Ambiguous(Vec<String>),
}

/// `group/version/Kind` of a CRD's version.
pub fn full_name(crd: &Crd, version: &CrdVersion) -> String {
    format!("{}/{}/{}", crd.group, version.name, crd.kind)
}

/// The CRD version `written` names: `group/version/Kind`, or a `Kind` alone, which means the storage
/// version (else the first served one) of the one CRD that defines it.
pub fn find<'a>(crds: &'a [Crd], written: &str) -> Found<'a> {
    let all: Vec<(&Crd, &CrdVersion)> = crds
        .iter()
        .flat_map(|c| c.versions.iter().map(move |v| (c, v)))
        .collect();
    let known: Vec<String> = all.iter().map(|(c, v)| full_name(c, v)).collect();
    let hits: Vec<(&Crd, &CrdVersion)> = if written.contains('/') {
        all.iter()
            .zip(&known)
            .filter(|(_, k)| *k == written)
            .map(|(hit, _)| *hit)
            .collect()
    } else {
        crds.iter()
            .filter(|c| c.kind == written)
            .filter_map(|c| {
                let v = c
                    .versions
                    .iter()
                    .find(|v| v.storage)
                    .or(c.versions.first())?;
                Some((c, v))
            })
            .collect()
    };
    match hits.as_slice() {
        [(c, v)] => Found::One(c, v),
        [] => {
            let closest = if written.contains('/') {
                did_you_mean(written, known.iter().map(String::as_str))
                    .map(str::to_string)
                    .or_else(|| closest_by_kind(&all, written.rsplit('/').next().unwrap_or("")))
            } else {
                closest_by_kind(&all, written)
            };
            Found::Unknown { closest, known }
        }
        many => Found::Ambiguous(many.iter().map(|(c, v)| full_name(c, v)).collect()),
    }
}

/// The full name of the version whose kind is closest to `kind` (case-insensitive first).
fn closest_by_kind(all: &[(&Crd, &CrdVersion)], kind: &str) -> Option<String> {
    let exact = all.iter().find(|(c, _)| c.kind.eq_ignore_ascii_case(kind));
    let near = || {
        let best = did_you_mean(kind, all.iter().map(|(c, _)| c.kind.as_str()))?;
        all.iter().find(|(c, _)| c.kind == best)
    };
    exact.or_else(near).map(|(c, v)| full_name(c, v))
}

#[cfg(test)]
mod tests;
