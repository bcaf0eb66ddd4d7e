//! kube-apiserver v1.33.13's own OpenAPI documents, byte for byte: `/openapi/v2` and every document
//! its `/openapi/v3` index lists (its built-in APIs, discovery, `/version`, the OIDC documents), as
//! `sim/schema/capture_openapi.py` read them from a real control plane (sim/schema/ORIGIN.md). The
//! sim serves them for its built-in APIs, so `kubectl explain`, clients generated from the documents
//! and kubectl's client-side validation see what a real server publishes; custom resources'
//! documents are made from their CRDs (`openapi`, `openapi_v2`).

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::OnceLock;

use bytes::Bytes;
use serde::Deserialize;

static GZ: &[u8] = include_bytes!("../../schema/k8s-1.33-openapi.json.gz");

/// One v3 document: its text and the hash the index publishes for it.
pub struct Document {
    /// The JSON text, as kube-apiserver serves it.
    pub text: Bytes,
    /// The SHA-512 of the text, upper-case hex (kube-openapi's ETag and `?hash=`).
    pub hash: String,
}

/// The captured documents.
pub struct Captured {
    /// `/openapi/v2`'s JSON text.
    pub v2: Bytes,
    /// `/openapi/v3/PATH` by PATH (`api/v1`, `apis/apps/v1`, `version`, …).
    pub v3: BTreeMap<String, Document>,
    /// The v3 documents' component schemas by name, as JSON text.
    schemas: BTreeMap<String, String>,
}

impl Captured {
    /// One of kube-apiserver's v3 component schemas (`io.k8s.api.core.v1.Container`).
    pub fn v3_schema(&self, name: &str) -> Option<serde_json::Value> {
        serde_json::from_str(self.schemas.get(name)?).ok()
    }
}

#[derive(Deserialize)]
struct File {
    v2: String,
    v3: V3,
}

#[derive(Deserialize)]
struct V3 {
    schemas: BTreeMap<String, String>,
    docs: BTreeMap<String, Parts>,
}

/// A document split around its component schemas, which the documents share.
#[derive(Deserialize)]
struct Parts {
    head: String,
    schemas: Vec<String>,
    tail: String,
}

/// The SHA-512 of `bytes`, upper-case hex.
pub fn sha512_hex(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA512, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02X}")).collect()
}

fn assemble(parts: &Parts, schemas: &BTreeMap<String, String>) -> String {
    let mut text = parts.head.clone();
    for (i, name) in parts.schemas.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&serde_json::Value::String(name.clone()).to_string());
        text.push(':');
        text.push_str(schemas.get(name).map(String::as_str).unwrap_or("{}"));
    }
    text.push_str(&parts.tail);
    text
}

fn load() -> Captured {
    let mut json = Vec::new();
    let file: Option<File> = flate2::read::GzDecoder::new(GZ)
        .read_to_end(&mut json)
        .ok()
        .and_then(|_| serde_json::from_slice(&json).ok());
    let Some(file) = file else {
        // The file is part of the build: only a corrupted checkout gets here.
        tracing::error!("the embedded OpenAPI documents do not decode");
        return Captured {
            v2: Bytes::new(),
            v3: BTreeMap::new(),
            schemas: BTreeMap::new(),
        };
    };
    let v3 = file
        .v3
        .docs
        .iter()
        .map(|(path, parts)| {
            let text = assemble(parts, &file.v3.schemas);
            let hash = sha512_hex(text.as_bytes());
            (
                path.clone(),
                Document {
                    text: Bytes::from(text),
                    hash,
                },
            )
        })
        .collect();
    Captured {
        v2: Bytes::from(file.v2),
        v3,
        schemas: file.v3.schemas,
    }
}

/// The captured documents, decoded on first use.
pub fn captured() -> &'static Captured {
    static CAPTURED: OnceLock<Captured> = OnceLock::new();
    CAPTURED.get_or_init(load)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_kube_apiservers_with_their_published_hashes() {
        let c = captured();
        assert_eq!(c.v3.len(), 45);
        let apps = &c.v3["apis/apps/v1"];
        let doc: serde_json::Value = serde_json::from_slice(&apps.text).expect("JSON");
        assert_eq!(
            doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentStrategy"]["properties"]["type"]
                ["enum"],
            serde_json::json!(["Recreate", "RollingUpdate"])
        );
        assert!(
            doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["parameters"]
                .as_array()
                .is_some_and(|p| p.iter().any(|p| p["name"] == "namespace"))
        );
        // The index hash recorded at capture time: the text is the same bytes.
        assert!(
            c.v3["api/v1"]
                .hash
                .starts_with("6D1EEAEBD34C73243535E2DCE6CB5EC6AC06324C")
        );
        let v2: serde_json::Value = serde_json::from_slice(&c.v2).expect("v2 JSON");
        assert_eq!(v2["swagger"], "2.0");
        assert!(v2["definitions"]["io.k8s.api.policy.v1.Eviction"].is_object());
    }
}
