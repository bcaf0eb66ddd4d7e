//! The typed app model: what `app!` describes, independent of Kubernetes types.
//!
//! The macro builds it at compile time (and validates it with [`crate::validate`]); the runtime
//! deserializes the same model, fills in values written as Rust expressions, validates again and
//! renders Kubernetes objects from it.

mod block;
mod block_locs;
mod block_serde;
mod build;
mod builder;
mod config;
mod controller;
mod custom;
mod netpol;
mod operator;
mod ops;
mod policy;
mod secret;
mod service;
mod workload;

pub use block::*;
pub use build::*;
pub use config::*;
pub use controller::*;
pub use custom::*;
pub use netpol::*;
pub use operator::*;
pub use ops::*;
pub use policy::*;
pub use secret::*;
pub use service::*;
pub use workload::*;

use crate::spanned::{Loc, Name, Spanned};
use serde::{Deserialize, Serialize};

/// Labels or annotations as written: key → value, in source order.
pub type Labels = Vec<(Spanned<String>, Spanned<String>)>;

/// A whole application.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct App {
    /// The app name (`app hello;`), also `app.kubernetes.io/name` on everything rendered.
    pub name: Name,
    /// Where it deploys.
    pub targets: Vec<Target>,
    /// Labels on every rendered object.
    pub labels: Labels,
    /// Annotations on every rendered object.
    pub annotations: Labels,
    /// Deployments, StatefulSets, DaemonSets, Jobs and CronJobs.
    pub workloads: Vec<Workload>,
    /// Services.
    pub services: Vec<Service>,
    /// ConfigMaps.
    pub config_maps: Vec<ConfigMap>,
    /// Secrets (values never in source).
    pub secrets: Vec<Secret>,
    /// PersistentVolumeClaims.
    pub pvcs: Vec<Pvc>,
    /// NetworkPolicies.
    pub network_policies: Vec<NetworkPolicy>,
    /// Ingresses.
    pub ingresses: Vec<Ingress>,
    /// HorizontalPodAutoscalers.
    pub autoscalers: Vec<Autoscaler>,
    /// PodDisruptionBudgets.
    pub disruption_budgets: Vec<DisruptionBudget>,
    /// ServiceAccounts.
    pub service_accounts: Vec<ServiceAccountDecl>,
    /// Roles and ClusterRoles.
    pub roles: Vec<RoleDecl>,
    /// RoleBindings and ClusterRoleBindings.
    pub role_bindings: Vec<RoleBindingDecl>,
    /// Post-deploy checks.
    pub checks: Vec<Check>,
    /// Raw YAML/JSON files and Rust-built objects.
    pub includes: Vec<Include>,
    /// Objects of custom resource kinds (`resource GROUP/VERSION/KIND NAME { … }`), checked against their
    /// CRDs' schemas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<CustomObject>,
    /// Objects the app refers to and someone else makes (`external secret NAME;`): never rendered.
    #[serde(default)]
    pub externals: Vec<External>,
    /// The operator that serves the webhooks (`operator NAME { … }`).
    #[serde(default)]
    pub operator: Option<Operator>,
    /// Admission webhooks (`validate …`, `mutate …`).
    #[serde(default)]
    pub webhooks: Vec<Webhook>,
    /// Controllers (`controller NAME on RESOURCE … => handler;`), run by `serve`.
    #[serde(default)]
    pub controllers: Vec<ControllerDecl>,
    /// Images built from this workspace (`image: build(…)`), one per placeholder.
    #[serde(default)]
    pub builds: Vec<ImageBuild>,
    /// Workloads of included files (`include yaml(…)`), which Services and the other items may refer to.
    #[serde(default)]
    pub included_workloads: Vec<IncludedWorkload>,
    /// Services of included files, which Ingresses, checks and `access` may refer to (not rendered: the
    /// include is).
    #[serde(default)]
    pub included_services: Vec<Service>,
    /// Human-readable description of every [`Loc`] (index = `Loc.0`), for run-time errors. Not in the
    /// serialized model: the macro emits it as a static table, which the app borrows.
    #[serde(skip)]
    pub locations: Locations,
    /// Locations whose value is a Rust expression, filled in at run time.
    pub dynamic: Vec<Loc>,
    /// Set by the runtime's `load` when the model the macro embedded has no value known only at run
    /// time: the macro checked it completely (every rule, every target's overridden form), so the run-time
    /// check has nothing to add. Never serialized; an app built any other way is checked at run time.
    #[serde(skip)]
    pub checked_at_compile_time: bool,
    /// Why the model embedded by `app!` could not be read (a format or serde mismatch between the macro
    /// that wrote it and the runtime reading it); [`crate::validate`]'s caller refuses such an app with it.
    /// Never serialized.
    #[serde(skip)]
    pub load_error: Option<String>,
}

/// The version of the model's JSON form that `app!` embeds in each app binary. The macro writes the value it
/// was built with next to the JSON; the runtime refuses a model of another version instead of misreading
/// it (a piceli-macros and a piceli-runtime of different releases in one build). Raise it with any change
/// to the serialized model that an older reader would misread.
///
/// Format 4: a block is its plain JSON and its locations in one string (`block_serde.rs`).
/// Format 5: a controller's `owns`, `watches`, finalizer name and backoff.
/// Format 6: a webhook's `resources` (was `resource` and `custom`) and `generic`; a controller's
/// `backoff_fn` and `reconcile_all_on`.
/// Format 7: `resources` (custom objects, `resource …`).
pub const MODEL_FORMAT: u32 = 7;

/// The descriptions of an app's locations: in an app binary, lines of the macro's static text (borrowed,
/// never copied: one string literal costs rustc far less than a table of thousands, and the text is split
/// into lines only when a description is first asked for — most runs never do), or the macro's own list
/// while it checks the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locations {
    /// Lines of a text compiled into the binary.
    Static(StaticLines),
    /// Built at run time (the macro, tests).
    Owned(Vec<String>),
}

/// A text compiled into the binary, a description per line, split on first use.
#[derive(Debug, Clone, Default)]
pub struct StaticLines {
    text: &'static str,
    lines: std::sync::OnceLock<Vec<&'static str>>,
}

/// Equal when the texts are (whether or not either was split yet).
impl PartialEq for StaticLines {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for StaticLines {}

impl StaticLines {
    fn lines(&self) -> &[&'static str] {
        self.lines.get_or_init(|| {
            if self.text.is_empty() {
                Vec::new()
            } else {
                self.text.split('\n').collect()
            }
        })
    }
}

impl Default for Locations {
    fn default() -> Self {
        Locations::Static(StaticLines::default())
    }
}

impl Locations {
    /// The descriptions the macro wrote as one text, a line each (see [`Locations::text`]).
    pub fn from_text(text: &'static str) -> Locations {
        Locations::Static(StaticLines {
            text,
            lines: std::sync::OnceLock::new(),
        })
    }

    /// Every description as one text, a line each: what the macro embeds. A line break inside a
    /// description (never written by the macro) becomes a space.
    pub fn text(&self) -> String {
        let lines: Vec<String> = self.iter().map(|d| d.replace(['\n', '\r'], " ")).collect();
        lines.join("\n")
    }

    /// The description of location `index`.
    pub fn get(&self, index: usize) -> Option<&str> {
        match self {
            Locations::Static(table) => table.lines().get(index).copied(),
            Locations::Owned(list) => list.get(index).map(String::as_str),
        }
    }

    /// Every description, in location order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        match self {
            Locations::Static(table) => table.lines().len(),
            Locations::Owned(list) => list.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl App {
    /// The human description of a location (`deployment web › image`), or `app` when unknown.
    pub fn describe(&self, at: Loc) -> &str {
        self.locations.get(at.0 as usize).unwrap_or("app")
    }

    /// The target called `name`.
    pub fn target(&self, name: &str) -> Option<&Target> {
        self.targets.iter().find(|t| t.name.v == name)
    }

    /// The workload called `name`: one the app declares, else one of an included file (as far as the
    /// items that refer to it need: kind, containers, ports).
    pub fn workload(&self, name: &str) -> Option<&Workload> {
        self.workloads
            .iter()
            .find(|w| w.name.v == name)
            .or_else(|| self.included_workload(name).map(|i| &i.workload))
    }

    /// The included workload called `name` (`include yaml(…)`), with the labels selecting its pods.
    pub fn included_workload(&self, name: &str) -> Option<&IncludedWorkload> {
        self.included_workloads
            .iter()
            .find(|i| i.workload.name.v == name)
    }

    /// The labels that select a workload's pods when they are not Piceli's own: an included workload's, or
    /// a selector written in the workload's `spec:`. `None`: Piceli's (the app's name and the workload's).
    pub fn own_selector(&self, workload: &str) -> Option<Vec<(String, String)>> {
        if let Some(included) = self.included_workload(workload) {
            return Some(included.selector.clone());
        }
        self.workloads
            .iter()
            .find(|w| w.name.v == workload)
            .and_then(Workload::written_selector)
    }

    /// The build whose placeholder is `image` (`build:shop-api`), if the image is built here.
    pub fn build_of(&self, image: &str) -> Option<&ImageBuild> {
        self.builds.iter().find(|b| b.image.v == image)
    }

    /// Whether `external KIND NAME;` declares this object.
    pub fn is_external(&self, kind: ExternalKind, name: &str) -> bool {
        self.externals
            .iter()
            .any(|e| e.kind == kind && e.name.v == name)
    }

    /// The service called `name`: one the app declares, else one of an included file.
    pub fn service(&self, name: &str) -> Option<&Service> {
        self.services
            .iter()
            .chain(&self.included_services)
            .find(|s| s.name.v == name)
    }
}

/// Where an app deploys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// The target's name (`--target NAME`).
    pub name: Name,
    /// How to reach the cluster.
    pub cluster: Cluster,
    /// The namespace everything goes into.
    pub namespace: Spanned<String>,
    /// Per-target changes to the app.
    pub overrides: Vec<Override>,
    /// Re-apply the previous release when a check fails after a deploy.
    pub rollback_on_failed_checks: bool,
    /// `{ registry: "HOST[:PORT]/PATH" }`: where built images are delivered (`--registry` overrides it).
    #[serde(default)]
    pub registry: Option<Spanned<String>>,
}

/// How a target reaches its cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub enum Cluster {
    /// An explicit kubeconfig file and context (never `~/.kube/config` or `KUBECONFIG`).
    Kubeconfig {
        /// The kubeconfig file, relative to the working directory.
        path: Spanned<String>,
        /// The context in it.
        context: Spanned<String>,
    },
    /// The local cluster (`piceli sim`).
    #[default]
    Local,
}

/// One per-target change: `web.replicas: 3`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Override {
    /// The workload it changes.
    pub object: Name,
    /// The field, as written (`replicas`, `image`, `env.MODE`, `requests.cpu`, …).
    pub field: Spanned<String>,
    /// The new value.
    pub value: OverrideValue,
}

/// The value of an override.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum OverrideValue {
    /// A number (replicas).
    Int(Spanned<i64>),
    /// A string (image, env value, quantity).
    Str(Spanned<String>),
}

impl Default for OverrideValue {
    fn default() -> Self {
        OverrideValue::Int(Spanned::bare(0))
    }
}

/// The override fields a target may set, in the order `did you mean` suggests them.
pub const OVERRIDE_FIELDS: &[&str] = &[
    "replicas",
    "image",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

#[cfg(test)]
mod locations_tests {
    use super::Locations;

    #[test]
    fn the_macros_text_reads_back_as_the_same_descriptions() {
        let owned = Locations::Owned(vec![
            "app name".into(),
            "deployment web › replicas".into(),
            "a\nb".into(),
        ]);
        let text: &'static str = Box::leak(owned.text().into_boxed_str());
        let back = Locations::from_text(text);
        assert_eq!(back.len(), 3);
        assert_eq!(back.get(1), Some("deployment web › replicas"));
        assert_eq!(back.get(2), Some("a b"));
        assert!(Locations::from_text("").is_empty());
    }
}
