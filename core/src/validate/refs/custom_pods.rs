//! The Prometheus Operator's `PodMonitor`: its `selector` selects pods of the app's workloads (by the
//! labels they render with), and each `podMetricsEndpoints[].port` is a named container port of one of
//! them (`portNumber` one of their port numbers).

use super::monitor::{app_labels, match_labels, selects};
use super::{items, string};
use crate::codes::Code;
use crate::model::{App, BlockValue, CustomObject, Workload};
use crate::rules::did_you_mean;
use crate::validate::{Ctx, list};
use std::collections::BTreeMap;

/// The labels that select a workload's pods (as `piceli_runtime::render` writes its selector): an
/// included workload's or a selector written in its `spec:`, else the app's name and the workload's
/// (`app.kubernetes.io/component`).
pub fn pod_selector(app: &App, workload: &str) -> BTreeMap<String, String> {
    if let Some(own) = app.own_selector(workload) {
        return own.into_iter().collect();
    }
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), app.name.v.clone()),
        (
            "app.kubernetes.io/component".to_string(),
            workload.to_string(),
        ),
    ])
}

/// The labels a workload's pods carry (as `piceli_runtime::render` writes its pod template): the app's,
/// the standard ones unless the workload's selector is written in `spec:`, its `pod_labels:`, then its
/// selector's.
pub fn pod_labels(app: &App, w: &Workload) -> BTreeMap<String, String> {
    let mut labels = app_labels(app, w.written_selector().is_none());
    labels.extend(w.pod_labels.iter().map(|(k, v)| (k.v.clone(), v.v.clone())));
    labels.extend(pod_selector(app, &w.name.v));
    labels
}

/// A PodMonitor: its `selector` selects pods of the app's workloads (unless `namespaceSelector` looks
/// elsewhere), and each endpoint's port is one of theirs.
pub(super) fn check(cx: &mut Ctx, app: &App, o: &CustomObject, spec: &BlockValue) {
    let BlockValue::Map(spec) = spec else { return };
    let Some((selector, wanted)) = match_labels(cx, spec) else {
        return;
    };
    // An included workload's pods: known by the labels of its selector (its template may have more).
    let workloads: Vec<(&Workload, BTreeMap<String, String>)> = app
        .workloads
        .iter()
        .map(|w| (w, pod_labels(app, w)))
        .chain(
            app.included_workloads
                .iter()
                .map(|i| (&i.workload, i.selector.iter().cloned().collect())),
        )
        .collect();
    let selected: Vec<&Workload> = workloads
        .iter()
        .filter(|(_, labels)| selects(&wanted, labels))
        .map(|(w, _)| *w)
        .collect();
    if selected.is_empty() {
        if !app.included_workloads.is_empty() {
            return;
        }
        let shown: Vec<String> = wanted.iter().map(|(k, v)| format!("{k}={}", v.v)).collect();
        let help = match workloads.first() {
            Some((w, labels)) => format!(
                "write `selector: (pods {})` for a workload's pods; they carry {}",
                w.name.v,
                labels
                    .iter()
                    .map(|(k, v)| format!("`{k}: \"{v}\"`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "declare the workload it scrapes: `deployment NAME { image: …, ports: { metrics: 9090 } }`".into(),
        };
        cx.error(
            Code::UnknownCustomRef,
            selector.at,
            format!(
                "{} selects no pods of the app's workloads ({})",
                o.what(),
                shown.join(", ")
            ),
            help,
        );
        return;
    }
    let ports: Vec<(&str, i64)> = selected
        .iter()
        .flat_map(|w| w.containers.iter().flat_map(|c| &c.ports))
        .map(|p| (p.name.v.as_str(), p.number.v))
        .collect();
    let selected_names: Vec<&str> = selected.iter().map(|w| w.name.v.as_str()).collect();
    let Some(endpoints) = spec.get("podMetricsEndpoints") else {
        return;
    };
    for e in items(vec![endpoints]) {
        if let Some(port) = string(e, "port") {
            if cx.known(&port).is_none() {
                continue;
            }
            let names: Vec<&str> = ports
                .iter()
                .map(|(n, _)| *n)
                .filter(|n| !n.is_empty())
                .collect();
            if names.contains(&port.v.as_str()) {
                continue;
            }
            let help = match did_you_mean(&port.v, names.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None if names.is_empty() => "name the container port: `ports: { metrics: 9090 }` (a PodMonitor scrapes a port by its name)".into(),
                None => format!("use one of {}", list(&names)),
            };
            cx.error(
                Code::UnknownTargetPort,
                port.at,
                format!(
                    "{}: no workload it selects ({}) exposes a port named `{}`",
                    o.what(),
                    list(&selected_names),
                    port.v
                ),
                help,
            );
        } else if let BlockValue::Map(m) = e
            && let Some(BlockValue::Int(n)) = m.get("portNumber")
            && let Some(&num) = cx.known(n)
            && !ports.iter().any(|(_, p)| *p == num)
        {
            let numbers: Vec<String> = ports.iter().map(|(_, p)| p.to_string()).collect();
            let numbers: Vec<&str> = numbers.iter().map(String::as_str).collect();
            cx.error(
                Code::UnknownTargetPort,
                n.at,
                format!(
                    "{}: no workload it selects ({}) exposes port {num}",
                    o.what(),
                    list(&selected_names)
                ),
                format!(
                    "use one of {}, or the port's name in `port:`",
                    list(&numbers)
                ),
            );
        }
    }
}
