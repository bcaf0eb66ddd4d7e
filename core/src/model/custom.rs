//! `resource GROUP/VERSION/KIND NAME { … }`: an object of a custom resource kind another project defines
//! (the Gateway API's HTTPRoute, cert-manager's Certificate), checked against its CRD's schema.

use super::{Block, Labels};
use crate::crd::Node;
use crate::spanned::Name;
use serde::{Deserialize, Serialize};

/// An object of a custom resource kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomObject {
    /// Its name (`metadata.name`).
    pub name: Name,
    /// `gateway.networking.k8s.io/v1`.
    pub api_version: String,
    /// `HTTPRoute`.
    pub kind: String,
    /// The CRD that defines the kind (`httproutes.gateway.networking.k8s.io`), which the cluster must serve.
    pub crd: String,
    /// The CRD's `scope: Namespaced`: rendered in the target's namespace, else without one.
    pub namespaced: bool,
    /// Labels on the object (besides the app's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Labels,
    /// Annotations on the object (besides the app's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Labels,
    /// The object's top-level fields other than `apiVersion`, `kind` and `metadata` (`spec`, …).
    pub fields: Block,
    /// The version's schema, kept when a value is a Rust expression: the runtime checks that value
    /// against it when it is known. `None` when the macro checked every value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Node>,
    /// The DSL item that wrote it when that is a shortcut (`http_route`), not `resource`: messages name
    /// the object as the user wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcut: Option<String>,
}

impl CustomObject {
    /// `resource gateway.networking.k8s.io/v1/HTTPRoute web` (or `http_route web`), for messages.
    pub fn what(&self) -> String {
        match &self.shortcut {
            Some(word) => format!("{word} {}", self.name.v),
            None => format!(
                "resource {}/{} {}",
                self.api_version, self.kind, self.name.v
            ),
        }
    }
}
