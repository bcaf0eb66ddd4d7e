//! Schema-checked blocks: every `pod:`, `container:` and `spec:` block against its API type.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, Block, BlockValue, Labels};
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
    for d in out {
        cx.error(d.code, d.at, d.message, d.help);
    }
    selectors(cx, app);
}

/// Labels a block adds to a selector must be on the selected pods, or the selector matches nothing
/// (the API rejects such a workload; a Service would route to no pod).
fn selectors(cx: &mut Ctx, app: &App) {
    for w in &app.workloads {
        if let Some(BlockValue::Map(sel)) = w.spec.get("selector")
            && let Some(BlockValue::Map(labels)) = sel.get("matchLabels")
        {
            let what = format!("{} {}", w.kind.keyword(), w.name.v);
            on_pods(cx, labels, &w.pod_labels, &what, "its pods");
        }
    }
    for s in &app.services {
        let Some(BlockValue::Map(labels)) = s.spec.get("selector") else {
            continue;
        };
        // A declared workload's pod labels (an included one's selector is its own).
        let Some(w) = app.workloads.iter().find(|w| w.name.v == s.selects.v) else {
            continue;
        };
        let what = format!("{} {}", w.kind.keyword(), w.name.v);
        on_pods(cx, labels, &w.pod_labels, &what, "the pods of");
    }
}

fn on_pods(cx: &mut Ctx, selector: &Block, pod_labels: &Labels, what: &str, whose: &str) {
    for (k, v) in selector.entries() {
        let BlockValue::Str(value) = v else { continue };
        if !pod_labels
            .iter()
            .any(|(pk, pv)| pk.v == k.v && pv.v == value.v)
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
