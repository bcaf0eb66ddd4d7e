//! Names, duplicates, labels and keys: the checks that look at one declaration at a time.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, Labels, WorkloadKind};
use crate::rules;
use crate::spanned::{Loc, Name};
use std::collections::HashMap;

/// Characters a CronJob's Jobs and a StatefulSet's revision hashes add to the name.
const GENERATED_SUFFIX: usize = 11;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    // An empty name is a missing `app NAME;`, reported where the app is parsed.
    if !app.name.v.is_empty() {
        cx.rule(
            Code::InvalidName,
            app.name.at,
            rules::dns1123_label(&app.name.v),
        );
    }
    for t in &app.targets {
        cx.rule(
            Code::InvalidName,
            t.name.at,
            rules::dns1123_label(&t.name.v),
        );
        cx.rule(
            Code::InvalidName,
            t.namespace.at,
            rules::dns1123_label(&t.namespace.v),
        );
    }
    labels(cx, &app.labels, &app.annotations);

    for w in &app.workloads {
        cx.rule(
            Code::InvalidName,
            w.name.at,
            rules::dns1123_label(&w.name.v),
        );
        if matches!(w.kind, WorkloadKind::CronJob | WorkloadKind::StatefulSet) {
            let what = w.kind.kind();
            cx.rule(
                Code::NameTooLongWithSuffix,
                w.name.at,
                rules::name_with_suffix(&w.name.v, GENERATED_SUFFIX, 63, what),
            );
        }
        labels(cx, &w.labels, &w.annotations);
        labels(cx, &w.pod_labels, &w.pod_annotations);
        labels(cx, &w.node_selector, &Vec::new());
        for v in &w.volumes {
            cx.rule(
                Code::InvalidName,
                v.name.at,
                rules::dns1123_label(&v.name.v),
            );
        }
        for c in &w.volume_claims {
            cx.rule(
                Code::InvalidName,
                c.name.at,
                rules::dns1123_label(&c.name.v),
            );
        }
        duplicates(
            cx,
            "volume",
            w.volumes
                .iter()
                .map(|v| &v.name)
                .chain(w.volume_claims.iter().map(|c| &c.name)),
        );
    }
    duplicates(
        cx,
        "workload",
        app.workloads
            .iter()
            .chain(app.included_workloads.iter().map(|i| &i.workload))
            .map(|w| &w.name),
    );

    for s in &app.services {
        cx.rule(
            Code::InvalidName,
            s.name.at,
            rules::rfc1035_label(&s.name.v),
        );
        labels(cx, &s.labels, &s.annotations);
    }
    duplicates(
        cx,
        "Service",
        app.services
            .iter()
            .chain(&app.included_services)
            .map(|s| &s.name),
    );

    for c in &app.config_maps {
        cx.rule(
            Code::InvalidName,
            c.name.at,
            rules::dns1123_subdomain(&c.name.v),
        );
        labels(cx, &c.labels, &c.annotations);
        for (k, _) in &c.data {
            cx.rule(Code::InvalidConfigKey, k.at, rules::config_key(&k.v));
        }
        duplicates(cx, "ConfigMap key", c.data.iter().map(|(k, _)| k));
    }
    duplicates(cx, "ConfigMap", app.config_maps.iter().map(|c| &c.name));

    for s in &app.secrets {
        cx.rule(
            Code::InvalidName,
            s.name.at,
            rules::dns1123_subdomain(&s.name.v),
        );
        labels(cx, &s.labels, &s.annotations);
        for (k, _) in &s.data {
            cx.rule(Code::InvalidConfigKey, k.at, rules::config_key(&k.v));
        }
        duplicates(cx, "Secret key", s.data.iter().map(|(k, _)| k));
    }
    duplicates(cx, "Secret", app.secrets.iter().map(|s| &s.name));

    for p in &app.pvcs {
        cx.rule(
            Code::InvalidName,
            p.name.at,
            rules::dns1123_subdomain(&p.name.v),
        );
        labels(cx, &p.labels, &p.annotations);
    }
    duplicates(
        cx,
        "PersistentVolumeClaim",
        app.pvcs.iter().map(|p| &p.name),
    );

    subdomains(
        cx,
        "NetworkPolicy",
        app.network_policies.iter().map(|n| &n.name),
    );
    for i in &app.ingresses {
        labels(cx, &i.labels, &i.annotations);
    }
    for n in &app.network_policies {
        labels(cx, &n.labels, &n.annotations);
    }
    for a in &app.autoscalers {
        labels(cx, &a.labels, &a.annotations);
    }
    for d in &app.disruption_budgets {
        labels(cx, &d.labels, &d.annotations);
    }
    for s in &app.service_accounts {
        labels(cx, &s.labels, &s.annotations);
    }
    for r in &app.roles {
        labels(cx, &r.labels, &r.annotations);
    }
    for r in &app.role_bindings {
        labels(cx, &r.labels, &r.annotations);
    }
    subdomains(cx, "Ingress", app.ingresses.iter().map(|i| &i.name));
    subdomains(
        cx,
        "HorizontalPodAutoscaler",
        app.autoscalers.iter().map(|a| &a.name),
    );
    subdomains(
        cx,
        "PodDisruptionBudget",
        app.disruption_budgets.iter().map(|d| &d.name),
    );
    subdomains(
        cx,
        "ServiceAccount",
        app.service_accounts.iter().map(|s| &s.name),
    );
    path_segments(
        cx,
        "Role",
        app.roles.iter().filter(|r| !r.cluster).map(|r| &r.name),
    );
    path_segments(
        cx,
        "ClusterRole",
        app.roles.iter().filter(|r| r.cluster).map(|r| &r.name),
    );
    path_segments(
        cx,
        "RoleBinding",
        app.role_bindings
            .iter()
            .filter(|r| !r.cluster)
            .map(|r| &r.name),
    );
    path_segments(
        cx,
        "ClusterRoleBinding",
        app.role_bindings
            .iter()
            .filter(|r| r.cluster)
            .map(|r| &r.name),
    );
    // A custom object's name is a DNS subdomain (what most CRDs take), once per kind.
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    for r in &app.resources {
        labels(cx, &r.labels, &r.annotations);
        if !kinds.contains(&(r.api_version.as_str(), r.kind.as_str())) {
            kinds.push((&r.api_version, &r.kind));
        }
    }
    for (api_version, kind) in kinds {
        let names = app
            .resources
            .iter()
            .filter(|r| r.api_version == api_version && r.kind == kind)
            .map(|r| &r.name);
        subdomains(cx, kind, names);
    }
    duplicates(cx, "check", app.checks.iter().map(|c| &c.name));
    duplicates(cx, "target", app.targets.iter().map(|t| &t.name));
}

/// RBAC objects' names are path segments (`system:aggregate-to-view` is fine; `/`, `%`, `.` and `..` are
/// not), as the API server checks them.
fn path_segments<'a>(cx: &mut Ctx, kind: &str, names: impl Iterator<Item = &'a Name> + Clone) {
    for n in names.clone() {
        cx.rule(Code::InvalidName, n.at, rules::names::path_segment(&n.v));
    }
    duplicates(cx, kind, names);
}

fn subdomains<'a>(cx: &mut Ctx, kind: &str, names: impl Iterator<Item = &'a Name> + Clone) {
    for n in names.clone() {
        cx.rule(Code::InvalidName, n.at, rules::dns1123_subdomain(&n.v));
    }
    duplicates(cx, kind, names);
}

/// Report every name seen before (the later declaration is the one flagged).
pub(super) fn duplicates<'a>(cx: &mut Ctx, what: &str, names: impl Iterator<Item = &'a Name>) {
    let mut seen: HashMap<&str, Loc> = HashMap::new();
    for n in names {
        if let Some(&first) = seen.get(n.v.as_str()) {
            let code = match what {
                "target" => Code::UnknownTarget,
                "Service port" => Code::DuplicatePort,
                _ => Code::DuplicateObject,
            };
            cx.declared_twice(
                code,
                n.at,
                first,
                format!("{what} `{}` is declared twice", n.v),
                "rename or remove one of them",
            );
        } else {
            seen.insert(n.v.as_str(), n.at);
        }
    }
}

fn labels(cx: &mut Ctx, labels: &Labels, annotations: &Labels) {
    for (k, v) in labels {
        cx.rule(Code::InvalidLabel, k.at, rules::label_key(&k.v));
        if let Some(value) = cx.known(v) {
            let verdict = rules::label_value(value);
            cx.rule(Code::InvalidLabel, v.at, verdict);
        }
        if rules::is_managed_label(&k.v) {
            cx.error(
                Code::InvalidLabel,
                k.at,
                format!("`{}` is set by Piceli", k.v),
                rules::labels::MANAGED_LABEL_HELP,
            );
        }
    }
    for (k, _) in annotations {
        cx.rule(Code::InvalidLabel, k.at, rules::annotation_key(&k.v));
    }
}
