//! Schema-checked blocks: every `pod:`, `container:` and `spec:` block against its API type.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, Block, BlockValue};
use crate::schema::{self, TypeId};

pub(super) fn check(cx: &mut Ctx, app: &App) {
    let mut out = Vec::new();
    let mut one = |block: &Block, ty: TypeId, what: String| {
        if !block.is_empty() {
            let generated: &[&str] = if ty == schema::CRON_JOB_SPEC {
                &["jobTemplate", "jobTemplate.spec"]
            } else {
                &[]
            };
            schema::check::check(block, ty, &what, generated, &mut out);
        }
    };
    for w in &app.workloads {
        let owner = format!("{} {}", w.kind.keyword(), w.name.v);
        one(
            &w.spec,
            schema::workload_spec(w.kind),
            format!("{owner} › spec"),
        );
        one(&w.pod, schema::POD_SPEC, format!("{owner} › pod"));
        for c in w.containers.iter().chain(&w.init_containers) {
            one(
                &c.block,
                schema::CONTAINER,
                format!("{owner} › container {}", c.name.v),
            );
        }
    }
    for s in &app.services {
        one(
            &s.spec,
            schema::SERVICE_SPEC,
            format!("service {} › spec", s.name.v),
        );
    }
    for i in &app.ingresses {
        one(
            &i.spec,
            schema::INGRESS_SPEC,
            format!("ingress {} › spec", i.name.v),
        );
    }
    for p in &app.pvcs {
        let what = format!("pvc {} › spec", p.name.v);
        one(&p.spec, schema::PERSISTENT_VOLUME_CLAIM_SPEC, what);
    }
    for a in &app.autoscalers {
        let what = format!("autoscaler {} › spec", a.name.v);
        one(&a.spec, schema::HORIZONTAL_POD_AUTOSCALER_SPEC, what);
    }
    for d in &app.disruption_budgets {
        let what = format!("disruption_budget {} › spec", d.name.v);
        one(&d.spec, schema::POD_DISRUPTION_BUDGET_SPEC, what);
    }
    for n in &app.network_policies {
        let what = format!("network_policy {} › spec", n.name.v);
        one(&n.spec, schema::NETWORK_POLICY_SPEC, what);
    }
    for s in &app.service_accounts {
        let what = format!("service_account {} › spec", s.name.v);
        one(&s.spec, schema::SERVICE_ACCOUNT, what);
    }
    // A custom object's fields, against its CRD's schema: at compile time always (the macro keeps the
    // schema in the model), at run time when a value is a Rust expression (the model then keeps it).
    for r in &app.resources {
        if let Some(schema) = &r.schema {
            let what = r.what();
            schema::check::check_object::<&crate::crd::Node>(
                &r.fields,
                schema,
                &what,
                &["metadata"],
                &mut out,
            );
        }
    }
    for d in out {
        cx.error(d.code, d.at, d.message, d.help);
    }
    selectors(cx, app);
}

/// A Service's selector written in its `spec:` must pick labels of its workload's pods, or it routes to no
/// pod. A workload's own written selector needs no check: its pods get the selector's labels.
fn selectors(cx: &mut Ctx, app: &App) {
    for s in &app.services {
        let Some(BlockValue::Map(labels)) = s.spec.get("selector") else {
            continue;
        };
        // A declared workload's pod labels (an included one's selector is its own).
        let Some(w) = app.workloads.iter().find(|w| w.name.v == s.selects.v) else {
            continue;
        };
        let mut pod_labels: Vec<(String, String)> = w
            .pod_labels
            .iter()
            .map(|(k, v)| (k.v.clone(), v.v.clone()))
            .collect();
        pod_labels.extend(w.written_selector().unwrap_or_default());
        let what = format!("{} {}", w.kind.keyword(), w.name.v);
        on_pods(cx, labels, &pod_labels, &what, "the pods of");
    }
}

fn on_pods(
    cx: &mut Ctx,
    selector: &Block,
    pod_labels: &[(String, String)],
    what: &str,
    whose: &str,
) {
    for (k, v) in selector.entries() {
        let BlockValue::Str(value) = v else { continue };
        if !pod_labels
            .iter()
            .any(|(pk, pv)| *pk == k.v && *pv == value.v)
        {
            let pods = if whose == "its pods" {
                format!("{what}'s pods")
            } else {
                format!("{whose} {what}")
            };
            cx.error(
                Code::InvalidValue,
                k.at,
                format!("the selector label `{}: {}` is not on {pods}", k.v, value.v),
                format!("add `{}: \"{}\"` to `pod_labels:` of {what}", k.v, value.v),
            );
        }
    }
}
