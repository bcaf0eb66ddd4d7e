//! The operator and its admission webhooks: `operator NAME { … }`, `validate NAME on RESOURCE (OPS) => h;`
//! and `mutate NAME on RESOURCE (OPS) => [a, b];`.

use super::Labels;
use crate::spanned::{Name, Spanned};
use serde::{Deserialize, Serialize};

/// `operator NAME { image, replicas, tls }`: the Deployment that runs this binary's `serve`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Operator {
    /// The Deployment's (and Service's, ServiceAccount's) name.
    pub name: Name,
    /// The image of this app's binary.
    pub image: Spanned<String>,
    /// Declared `unpinned(…)`: no digest required.
    pub unpinned: bool,
    /// Replicas (default 1); 2 or more adds anti-affinity and a PodDisruptionBudget.
    pub replicas: Spanned<i64>,
    /// Where the serving certificate comes from.
    pub tls: OperatorTls,
    /// Annotations of the operator's Deployment: the source revision and dirtiness of the image `deploy`
    /// built for it (`build(self)`), set when the built image is substituted.
    #[serde(default)]
    pub annotations: super::Labels,
    /// `env: { … }`: the `serve` container's environment beside `POD_NAME`/`POD_NAMESPACE` (e.g. the
    /// `OTEL_*` variables of OTLP export).
    #[serde(default)]
    pub env: Vec<super::EnvVar>,
}

/// Where the operator's serving certificate comes from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum OperatorTls {
    /// `cert_manager(issuer: self_signed)`: a self-signed Issuer, a CA Certificate, a CA Issuer and the
    /// serving Certificate, all rendered.
    #[default]
    SelfSigned,
    /// `cert_manager(cluster_issuer: "corp-ca")`: a serving Certificate from that ClusterIssuer.
    ClusterIssuer(Spanned<String>),
    /// `secret(NAME)`: a Secret (tls.crt, tls.key, ca.crt) the cluster already has.
    Secret(Spanned<String>),
    /// `self_managed`: the operator is its own CA. Its leader keeps the CA and the serving certificate in
    /// the Secret `NAME-tls`, renews them before they expire and writes the CA into its webhook
    /// configurations' `caBundle`; every replica reloads the Secret. No cert-manager.
    SelfManaged,
}

/// Validating or mutating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WebhookKind {
    /// `validate …`, served at `/validate/NAME`.
    #[default]
    Validate,
    /// `mutate …`, served at `/mutate/NAME`.
    Mutate,
}

impl WebhookKind {
    /// `validate` or `mutate` (the keyword and the path's first segment).
    pub fn keyword(self) -> &'static str {
        match self {
            WebhookKind::Validate => "validate",
            WebhookKind::Mutate => "mutate",
        }
    }
}

/// One admission webhook.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Webhook {
    /// Validating or mutating.
    pub kind: WebhookKind,
    /// The name: the path `/KIND/NAME` and the webhook's `NAME.OPERATOR.piceli.dev`.
    pub name: Name,
    /// The resources as written (`deployments.apps`, `pods`, `lamps.example.com`, `"*.example.com"`):
    /// one, or several for a generic webhook.
    pub resources: Vec<WebhookResource>,
    /// Written as a list (`on [configmaps, secrets]`) or with a wildcard (`on "*.example.com"`): its
    /// handlers take `Request<DynamicObject>`.
    #[serde(default)]
    pub generic: bool,
    /// The operations (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`, `*`).
    pub operations: Vec<Spanned<String>>,
    /// The handlers' Rust paths as written (`policy::no_latest_tag`); several for a composite mutator.
    pub handlers: Vec<Spanned<String>>,
    /// `failure: ignore` (default fail).
    pub ignore_failures: bool,
    /// `timeout: SECONDS` (default 10).
    pub timeout: Option<Spanned<i64>>,
    /// `namespaces: { label: value }`: only namespaces with these labels.
    pub namespaces: Labels,
    /// `objects: { label: value }`: only objects with these labels.
    pub objects: Labels,
}

/// One resource a webhook admits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebhookResource {
    /// As written: `pods`, `deployments.apps`, `lamps.example.com`, or `*.GROUP` (every resource of the
    /// group).
    pub name: Spanned<String>,
    /// One of the app's `custom_resource` types (resolved at compile time; its group, versions, plural
    /// and scope come from the type's CRD when the configuration is rendered).
    pub custom: bool,
}

impl WebhookResource {
    /// A resource of the 1.33 API (or, with `custom`, of the app).
    pub fn new(name: Spanned<String>) -> WebhookResource {
        WebhookResource {
            name,
            custom: false,
        }
    }

    /// The group of a wildcard `*.GROUP` (every resource of that group).
    pub fn wildcard_group(&self) -> Option<&str> {
        self.name.v.strip_prefix("*.")
    }
}

impl Webhook {
    /// `/validate/NAME` or `/mutate/NAME`.
    pub fn path(&self) -> String {
        format!("/{}/{}", self.kind.keyword(), self.name.v)
    }

    /// The webhook's name in its configuration: `NAME.OPERATOR.piceli.dev`.
    pub fn qualified_name(&self, operator: &str) -> String {
        format!("{}.{operator}.piceli.dev", self.name.v)
    }

    /// The timeout in seconds the configuration carries (default 10).
    pub fn timeout_seconds(&self) -> i64 {
        self.timeout.as_ref().map(|t| t.v).unwrap_or(10)
    }
}
