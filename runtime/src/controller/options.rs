//! A controller declaration's settings: which namespaces and labels it watches, the kinds that trigger
//! it besides its own (`owns`, `watches`, `reconcile_all_on`), its timer, whether it holds a finalizer
//! (and its name), how failures are retried and how many objects it handles at once.

use std::time::Duration;

use kube::Resource;
use kube::api::ApiResource;
pub use piceli_core::model::OwnerMapping;

use super::backoff::Backoff;
use super::context::ScopeApi;
use super::triggers::Trigger;

/// A kind a controller watches besides its own: its API resource and scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
}

impl Kind {
    /// The kind of the Rust type `K` (a k8s-openapi type or a `#[derive(CustomResource)]` type).
    pub fn of<K: Resource<DynamicType = ()>>() -> Kind
    where
        K::Scope: ScopeApi,
    {
        Kind {
            resource: ApiResource::erase::<K>(&()),
            namespaced: <K::Scope as ScopeApi>::NAMESPACED,
        }
    }
}

/// Where a controller watches (namespaced kinds; cluster-scoped kinds are always watched cluster-wide).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Namespaces {
    /// The operator's own namespace (the default).
    #[default]
    Operator,
    /// Every namespace (`namespaces: all`).
    All,
    /// These namespaces (`namespaces: [a, b]`), one watch each.
    List(Vec<String>),
}

/// The settings of one controller declaration (`{ namespaces: …, labels: …, every: …, finalizer }`).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerOptions {
    /// Where it watches.
    pub namespaces: Namespaces,
    /// A label selector (`app=web,tier!=cache`) the watched objects must match.
    pub labels: Option<String>,
    /// A per-object timer: `on_timer` (edge style), or at least one reconcile this often (level style).
    pub every: Option<Duration>,
    /// Holds a finalizer on every object, so deletion waits for `Event::Cleanup` / `on_delete`.
    pub finalizer: bool,
    /// How failed handlers are retried, per object.
    pub backoff: Backoff,
    /// How many objects are handled at once (0 = no limit). One object is never handled twice at once.
    pub concurrency: u16,
    /// Kinds the handlers write (`writes: [configmaps]`), as (API group, plural): get, create, patch,
    /// update and delete on them in the RBAC.
    pub writes: Vec<(String, String)>,
    /// The handlers write the watched kind's status (`<kind>/status` patch/update in the RBAC).
    pub writes_status: bool,
    /// Kinds whose objects name a watched object in their ownerReferences (`owns: [configmaps]`): a
    /// change or deletion of one reconciles its owner (kube's `Controller::owns`).
    pub owns: Vec<Kind>,
    /// Other kinds whose objects map to the objects they reconcile (`watches: [secrets =>
    /// by_label("app")]`, kube's `Controller::watches`).
    pub watches: Vec<(Kind, OwnerMapping)>,
    /// The finalizer's name (default `<app>.piceli.dev/<controller>`).
    pub finalizer_name: Option<String>,
    /// Every item of this stream reconciles every object the controller watches (kube's
    /// `Controller::reconcile_all_on`; `reconcile_all_on: ops::config_changes`).
    pub reconcile_all_on: Option<Trigger>,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            namespaces: Namespaces::Operator,
            labels: None,
            every: None,
            finalizer: false,
            backoff: Backoff::default(),
            concurrency: 0,
            writes: Vec::new(),
            writes_status: false,
            owns: Vec::new(),
            watches: Vec::new(),
            finalizer_name: None,
            reconcile_all_on: None,
        }
    }
}

impl ControllerOptions {
    /// Watch every namespace.
    pub fn all_namespaces(mut self) -> Self {
        self.namespaces = Namespaces::All;
        self
    }

    /// Watch these namespaces.
    pub fn namespaces<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.namespaces = Namespaces::List(names.into_iter().map(Into::into).collect());
        self
    }

    /// Watch only objects matching a label selector.
    pub fn labels(mut self, selector: impl Into<String>) -> Self {
        self.labels = Some(selector.into());
        self
    }

    /// A per-object timer.
    pub fn every(mut self, period: Duration) -> Self {
        self.every = Some(period);
        self
    }

    /// Hold a finalizer.
    pub fn finalizer(mut self) -> Self {
        self.finalizer = true;
        self
    }

    /// Retry failures with this policy.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The handlers write objects of this kind (API group `""` for core kinds, plural resource name).
    pub fn writes(mut self, group: &str, plural: &str) -> Self {
        self.writes.push((group.to_string(), plural.to_string()));
        self
    }

    /// The handlers write the watched kind's status.
    pub fn writes_status(mut self) -> Self {
        self.writes_status = true;
        self
    }

    /// A change or deletion of a `Child` reconciles the object its ownerReferences name.
    pub fn owns<Child: Resource<DynamicType = ()>>(mut self) -> Self
    where
        Child::Scope: ScopeApi,
    {
        self.owns.push(Kind::of::<Child>());
        self
    }

    /// A change or deletion of an `Other` reconciles the object `mapping` names.
    pub fn watches<Other: Resource<DynamicType = ()>>(mut self, mapping: OwnerMapping) -> Self
    where
        Other::Scope: ScopeApi,
    {
        self.watches.push((Kind::of::<Other>(), mapping));
        self
    }

    /// Hold a finalizer of this name (implies [`ControllerOptions::finalizer`]).
    pub fn finalizer_named(mut self, name: impl Into<String>) -> Self {
        self.finalizer = true;
        self.finalizer_name = Some(name.into());
        self
    }

    /// Reconcile every object whenever a stream from `trigger` gives an item.
    pub fn reconcile_all_on(mut self, trigger: Trigger) -> Self {
        self.reconcile_all_on = Some(trigger);
        self
    }

    /// Handle at most `n` objects at once.
    pub fn concurrency(mut self, n: u16) -> Self {
        self.concurrency = n;
        self
    }
}

/// Parses a duration as declarations write it: `500ms`, `30s`, `5m`, `1h` (whole numbers).
pub fn parse_duration(text: &str) -> Option<Duration> {
    piceli_core::model::parse_duration(text)
}
