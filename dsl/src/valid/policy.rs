//! Lowering autoscalers and disruption budgets, each read by its key table (RBAC: `rbac.rs`).

use super::blocks::{AUTOSCALER_OWNED, BUDGET_OWNED};
use super::keys::{self, Key, Reading, annotations, labels};
use super::{Fields, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::schema;
use piceli_core::spanned::Spanned;

/// `autoscaler NAME -> WORKLOAD { … }`: its keys and their readers.
pub const AUTOSCALER: &[Key<Reading<Scaling>>] = &[
    Key::new("min", "the fewest replicas (at least 1)", Some(replicas)),
    Key::new("max", "the most replicas", Some(replicas)),
    Key::new(
        "cpu",
        "target average CPU utilisation, in percent",
        Some(percent),
    ),
    Key::new(
        "memory",
        "target average memory utilisation, in percent",
        Some(percent),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of HorizontalPodAutoscalerSpec (autoscaling/v2) fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::HORIZONTAL_POD_AUTOSCALER_SPEC;
                r.item.spec = lw.block_of(v, f, key, root, AUTOSCALER_OWNED, &r.owner);
            }
        }),
    ),
];

/// An autoscaler's own fields, as read.
#[derive(Default)]
pub struct Scaling {
    /// The item's name, where a missing required key is reported.
    sp: Option<Sp>,
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
    cpu: Option<Spanned<i64>>,
    memory: Option<Spanned<i64>>,
    spec: Block,
}

/// `min:` and `max:`, both required.
fn replicas(
    lw: &mut Lower,
    r: &mut Reading<Scaling>,
    _: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    let n = match v {
        Some(v) => lw.int(v, format!("{} › {key}", r.owner)),
        None => {
            if let Some(sp) = r.item.sp {
                lw.fail(
                    Code::MissingKey,
                    sp,
                    format!("{} has no `{key}`", r.owner),
                    format!("add `{key}: N`"),
                );
            }
            None
        }
    };
    let a = &mut r.item;
    *if key == "min" { &mut a.min } else { &mut a.max } = n;
}

/// `cpu:` and `memory:`.
fn percent(
    lw: &mut Lower,
    r: &mut Reading<Scaling>,
    _: &mut Fields,
    key: &'static str,
    v: Option<&Value>,
) {
    if let Some(v) = v {
        let n = lw.int(v, format!("{} › {key}", r.owner));
        let a = &mut r.item;
        *if key == "cpu" {
            &mut a.cpu
        } else {
            &mut a.memory
        } = n;
    }
}

pub(super) fn autoscaler(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("autoscaler {}", name.v);
    let Some(scales) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Scaling>::new(owner);
    r.item.sp = Some(item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp));
    keys::read(lw, &mut f, AUTOSCALER, &mut r);
    f.finish_keys(lw, AUTOSCALER);
    let a = r.item;
    if let (Some(min), Some(max)) = (a.min, a.max) {
        lw.app.autoscalers.push(Autoscaler {
            name,
            scales,
            min,
            max,
            cpu_percent: a.cpu,
            memory_percent: a.memory,
            labels: r.labels,
            annotations: r.annotations,
            spec: a.spec,
        });
    }
}

/// `disruption_budget NAME -> WORKLOAD { … }`: its keys and their readers.
pub const DISRUPTION_BUDGET: &[Key<Reading<Budget>>] = &[
    Key::new(
        "min_available",
        "pods that must stay up: a number or a percentage",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.min_available = lw.text(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    Key::new(
        "max_unavailable",
        "pods that may be down: a number or a percentage",
        Some(|lw, r, _, key, v| {
            if let Some(v) = v {
                r.item.max_unavailable = lw.text(v, format!("{} › {key}", r.owner));
            }
        }),
    ),
    labels(),
    annotations(),
    Key::new(
        "spec",
        "a block of PodDisruptionBudgetSpec fields",
        Some(|lw, r, f, key, v| {
            if let Some(v) = v {
                let root = schema::POD_DISRUPTION_BUDGET_SPEC;
                r.item.spec = lw.block_of(v, f, key, root, BUDGET_OWNED, &r.owner);
            }
        }),
    ),
];

/// A disruption budget's own fields, as read.
#[derive(Default)]
pub struct Budget {
    min_available: Option<Spanned<String>>,
    max_unavailable: Option<Spanned<String>>,
    spec: Block,
}

pub(super) fn disruption_budget(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("disruption_budget {}", name.v);
    let Some(protects) = lw.item_arrow(item, "workload", &owner) else {
        return;
    };
    let mut f = Fields::of(lw, item.body.as_ref(), owner.clone());
    let mut r = Reading::<Budget>::new(owner);
    keys::read(lw, &mut f, DISRUPTION_BUDGET, &mut r);
    f.finish_keys(lw, DISRUPTION_BUDGET);
    lw.app.disruption_budgets.push(DisruptionBudget {
        name,
        protects,
        min_available: r.item.min_available,
        max_unavailable: r.item.max_unavailable,
        labels: r.labels,
        annotations: r.annotations,
        spec: r.item.spec,
    });
}
