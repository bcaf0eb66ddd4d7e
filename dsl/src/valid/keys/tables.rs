//! What the key tables share — the context of their readers ([`Reading`]) and the `labels:`/`annotations:`
//! entries — and, for the docs test, every table in docs/dsl.md's order. The tables themselves live with
//! their readers, one per item kind (`WORKLOAD` in `workload_keys.rs`, `SERVICE` in `service.rs`, …).

use super::{Fields, Key, Lower};
use crate::ast::Value;
use piceli_core::model::Labels;

/// What `labels:` of an item means.
pub const LABELS_DOC: &str = "labels of this object alone";
/// What `annotations:` of an item means.
pub const ANNOTATIONS_DOC: &str = "annotations of this object alone";

/// An item being read by its table: its description (`autoscaler web`), its labels and annotations, and
/// its own fields `T`. The context of every reader of the item's table.
#[derive(Default)]
pub struct Reading<T> {
    pub owner: String,
    pub labels: Labels,
    pub annotations: Labels,
    pub item: T,
}

impl<T: Default> Reading<T> {
    /// An item described as `owner`, nothing read yet.
    pub fn new(owner: String) -> Self {
        Reading {
            owner,
            ..Reading::default()
        }
    }
}

/// `labels:` of an item whose table has readers.
pub const fn labels<T>() -> Key<Reading<T>> {
    Key::new("labels", LABELS_DOC, Some(read_meta::<T>))
}

/// `annotations:` of an item whose table has readers.
pub const fn annotations<T>() -> Key<Reading<T>> {
    Key::new("annotations", ANNOTATIONS_DOC, Some(read_meta::<T>))
}

/// Reads `labels:` or `annotations:` (the key's name says which) into the item's metadata.
pub fn read_meta<T>(
    lw: &mut Lower,
    r: &mut Reading<T>,
    _: &mut Fields,
    name: &'static str,
    v: Option<&Value>,
) {
    if let Some(v) = v {
        let labels = lw.labels(v, &format!("{} › {name}", r.owner));
        if name == "annotations" {
            r.annotations = labels;
        } else {
            r.labels = labels;
        }
    }
}

/// A table of the reference (only the docs test reads them): the item as written, its keys, and whether they depend on the workload kind.
#[cfg(test)]
pub struct Table {
    pub item: &'static str,
    pub keys: Vec<Key>,
    pub per_kind: bool,
}

/// A table of the reference, without its readers.
#[cfg(test)]
fn table<C>(item: &'static str, keys: &[Key<C>], per_kind: bool) -> Table {
    Table {
        item,
        keys: keys.iter().map(Key::entry).collect(),
        per_kind,
    }
}

/// Every table, in the order of docs/dsl.md.
#[cfg(test)]
pub fn tables() -> Vec<Table> {
    use crate::valid::{
        config, container_keys, controller_options, netpol, network, operator, policy, rbac,
        resources, routes, service, workload_keys,
    };
    vec![
        table(
            "Workloads (`deployment`, `stateful_set`, `daemon_set`, `job`, `cron_job`)",
            workload_keys::WORKLOAD,
            true,
        ),
        table(
            "A container (at the top of a workload, or each entry of `containers:` / `init_containers:`)",
            container_keys::CONTAINER,
            false,
        ),
        table("`service NAME -> WORKLOAD { … }`", service::SERVICE, false),
        table(
            "`service NAME { spec: … }` (a Service of no workload)",
            service::SERVICE_OF_NO_WORKLOAD,
            false,
        ),
        table(
            "`config_map NAME { … }` with metadata",
            config::CONFIG_MAP,
            false,
        ),
        table(
            "`secret NAME { … }` with metadata or a type",
            config::SECRET,
            false,
        ),
        table("`pvc NAME { … }`", config::PVC, false),
        table(
            "`network_policy NAME -> WORKLOAD { … }`",
            network::NETWORK_POLICY,
            false,
        ),
        table(
            "`network_policy NAME { pods: … }` (the selector form)",
            netpol::NETWORK_POLICY_SELECTOR,
            false,
        ),
        table("`ingress NAME { … }`", network::INGRESS, false),
        table("`http_route NAME { … }`", routes::HTTP_ROUTE, false),
        table(
            "`autoscaler NAME -> WORKLOAD { … }`",
            policy::AUTOSCALER,
            false,
        ),
        table(
            "`disruption_budget NAME -> WORKLOAD { … }`",
            policy::DISRUPTION_BUDGET,
            false,
        ),
        table("`service_account NAME { … }`", rbac::SERVICE_ACCOUNT, false),
        table("`role` / `cluster_role NAME { … }`", rbac::ROLE, false),
        table(
            "`role_binding` / `cluster_role_binding NAME { … }`",
            rbac::ROLE_BINDING,
            false,
        ),
        table("`operator NAME { … }`", operator::OPERATOR, false),
        table(
            "`validate` / `mutate … { … }` options",
            operator::WEBHOOK_OPTIONS,
            false,
        ),
        table(
            "`controller … { … }` options",
            controller_options::CONTROLLER_OPTIONS,
            false,
        ),
        table("`crds \"DIR\" { … }`", resources::CRDS, false),
        table(
            "`resource GROUP/VERSION/KIND NAME { … }` (or `resource KIND NAME`)",
            resources::RESOURCE,
            false,
        ),
    ]
}
