//! ConfigMaps, PersistentVolumeClaims and the objects an app refers to without owning them (`external`).
//! Secrets are in `secret.rs`.

use super::{Block, Labels};
use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// A ConfigMap.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigMap {
    /// Its name.
    pub name: Name,
    /// Key → value, in order.
    pub data: Vec<(Name, ConfigValue)>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
}

/// A ConfigMap value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ConfigValue {
    /// A literal (or a Rust expression evaluated at run time).
    Literal(Spanned<String>),
    /// The contents of a file relative to the app crate, read at compile time (`file("conf/app.toml")`).
    File {
        /// The path as written.
        path: Spanned<String>,
        /// The contents (filled in by `include_str!`).
        contents: Spanned<String>,
    },
}

impl Default for ConfigValue {
    fn default() -> Self {
        ConfigValue::Literal(Spanned::default())
    }
}

impl ConfigValue {
    /// The value.
    pub fn text(&self) -> &str {
        match self {
            ConfigValue::Literal(s) => &s.v,
            ConfigValue::File { contents, .. } => &contents.v,
        }
    }
}

/// A PersistentVolumeClaim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Pvc {
    /// Its name.
    pub name: Name,
    /// Requested storage quantity.
    pub storage: Spanned<String>,
    /// Access modes.
    pub access_modes: Vec<Spanned<String>>,
    /// Storage class.
    pub storage_class: Option<Spanned<String>>,
    /// Labels.
    pub labels: Labels,
    /// Annotations.
    pub annotations: Labels,
    /// `spec: { … }`: PersistentVolumeClaimSpec fields, merged under the DSL's.
    pub spec: Block,
}

/// An object someone else makes (cert-manager, External Secrets, a platform team): `external secret NAME;`.
/// References to it check by name; nothing is rendered or pruned; `plan` reports when it is missing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct External {
    /// What it is.
    pub kind: ExternalKind,
    /// Its name.
    pub name: Name,
}

/// The kinds of object an app may refer to without owning them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExternalKind {
    /// A Secret (`external secret NAME;`).
    #[default]
    Secret,
    /// A ConfigMap (`external config_map NAME;`).
    ConfigMap,
    /// A ServiceAccount (`external service_account NAME;`).
    ServiceAccount,
    /// A PersistentVolumeClaim (`external pvc NAME;`).
    Pvc,
    /// A Service (`external service NAME;`): another app's, an Ingress routes to it.
    Service,
    /// A Gateway API Gateway (`external gateway NAME;`): a platform team's, HTTPRoutes attach to it.
    Gateway,
}

impl ExternalKind {
    /// Every kind with the word that declares it, in the order `did you mean` suggests them.
    pub const ALL: &[(&str, ExternalKind)] = &[
        ("secret", ExternalKind::Secret),
        ("config_map", ExternalKind::ConfigMap),
        ("service_account", ExternalKind::ServiceAccount),
        ("pvc", ExternalKind::Pvc),
        ("service", ExternalKind::Service),
        ("gateway", ExternalKind::Gateway),
    ];

    /// The Kubernetes kind (`Secret`).
    pub fn kind(self) -> &'static str {
        match self {
            ExternalKind::Secret => "Secret",
            ExternalKind::ConfigMap => "ConfigMap",
            ExternalKind::ServiceAccount => "ServiceAccount",
            ExternalKind::Pvc => "PersistentVolumeClaim",
            ExternalKind::Service => "Service",
            ExternalKind::Gateway => "Gateway",
        }
    }

    /// Its `apiVersion` (`v1`; `gateway.networking.k8s.io/v1` for a Gateway).
    pub fn api_version(self) -> &'static str {
        match self {
            ExternalKind::Gateway => "gateway.networking.k8s.io/v1",
            _ => "v1",
        }
    }

    /// The words of every kind, for help texts: `secret, config_map, …, service or gateway`.
    pub fn words() -> String {
        let words: Vec<&str> = Self::ALL.iter().map(|(w, _)| *w).collect();
        match words.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => words.join(""),
        }
    }

    /// The word of the DSL (`secret`).
    pub fn word(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map(|(w, _)| *w)
            .unwrap_or("secret")
    }
}
