//! The Prometheus Operator's `ServiceMonitor`: its `selector` selects Services of the app (by the labels
//! they render with), and each `endpoints[].port` is a named port of one of them.

use super::{items, string};
use crate::codes::Code;
use crate::model::{App, Block, BlockValue, CustomObject, Service};
use crate::rules::did_you_mean;
use crate::spanned::Spanned;
use crate::validate::Ctx;
use std::collections::BTreeMap;

/// The labels a Service of the app carries (as `piceli_runtime::render` writes them: the app's, the
/// standard name and managed-by labels, then its own).
pub fn service_labels(app: &App, s: &Service) -> BTreeMap<String, String> {
    let mut labels = app_labels(app, true);
    labels.extend(s.labels.iter().map(|(k, v)| (k.v.clone(), v.v.clone())));
    labels
}

/// The labels every object of the app renders with: the app's own, and (`standard`) the name and
/// managed-by labels.
pub(super) fn app_labels(app: &App, standard: bool) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = app
        .labels
        .iter()
        .map(|(k, v)| (k.v.clone(), v.v.clone()))
        .collect();
    if standard {
        labels.insert("app.kubernetes.io/name".into(), app.name.v.clone());
        labels.insert("app.kubernetes.io/managed-by".into(), "piceli".into());
    }
    labels
}

/// The `matchLabels` pairs a selector wants: each key with its value as written.
pub(super) type Wanted = Vec<(String, Spanned<String>)>;

/// A monitor's `selector` as the checks can judge it: the selector and its `matchLabels` pairs. None when
/// they cannot: it looks in other namespaces (`namespaceSelector`), uses `matchExpressions` or a value
/// from Rust, or is empty (it selects everything in the namespace, the app's or not).
pub(super) fn match_labels<'a>(cx: &Ctx, spec: &'a Block) -> Option<(&'a Block, Wanted)> {
    if spec.get("namespaceSelector").is_some() {
        return None;
    }
    let Some(BlockValue::Map(selector)) = spec.get("selector") else {
        return None;
    };
    if selector.get("matchExpressions").is_some() {
        return None;
    }
    let mut wanted: Wanted = Vec::new();
    match selector.get("matchLabels") {
        None => {}
        Some(BlockValue::Map(m)) => {
            for (k, v) in m.entries() {
                match v {
                    BlockValue::Str(s) if cx.known(s).is_some() => {
                        wanted.push((k.v.clone(), s.clone()))
                    }
                    _ => return None, // a value from Rust: checked nowhere before the cluster
                }
            }
        }
        Some(_) => return None,
    }
    (!wanted.is_empty()).then_some((selector, wanted))
}

/// Whether `labels` carry every wanted pair.
pub(super) fn selects(
    wanted: &[(String, Spanned<String>)],
    labels: &BTreeMap<String, String>,
) -> bool {
    wanted
        .iter()
        .all(|(k, v)| labels.get(k).is_some_and(|l| *l == v.v))
}

/// A ServiceMonitor: its `selector` selects Services of the app (unless `namespaceSelector` looks
/// elsewhere), and each `endpoints[].port` is a named port of one of them.
pub(super) fn check(cx: &mut Ctx, app: &App, o: &CustomObject, spec: &BlockValue) {
    let BlockValue::Map(spec) = spec else { return };
    let Some((selector, wanted)) = match_labels(cx, spec) else {
        return;
    };
    let services: Vec<&Service> = app.services.iter().chain(&app.included_services).collect();
    let selected: Vec<&Service> = services
        .iter()
        .copied()
        .filter(|s| selects(&wanted, &service_labels(app, s)))
        .collect();
    // An included Service carries the labels its file gives it, which may select it.
    if selected.is_empty() && !app.included_services.is_empty() {
        return;
    }
    if selected.is_empty() {
        let shown: Vec<String> = wanted.iter().map(|(k, v)| format!("{k}={}", v.v)).collect();
        let help = match services.first() {
            Some(s) => format!(
                "write `selector: (service {})` for one Service; the app's Services carry `app.kubernetes.io/name: \"{}\"` and their own `labels:`; e.g. Service `{}` has {}",
                s.name.v,
                app.name.v,
                s.name.v,
                service_labels(app, s)
                    .iter()
                    .map(|(k, v)| format!("`{k}: \"{v}\"`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => {
                "declare the Service it scrapes: `service NAME -> WORKLOAD { port: 80 => http }`"
                    .into()
            }
        };
        cx.error(
            Code::UnknownCustomRef,
            selector.at,
            format!(
                "{} selects no Service of the app ({})",
                o.what(),
                shown.join(", ")
            ),
            help,
        );
        return;
    }
    // The DSL's ports, or those written in `spec: { ports: [ … ] }`.
    let names: Vec<&str> = selected
        .iter()
        .flat_map(|s| {
            let written = s.spec_ports().unwrap_or_default();
            s.ports
                .iter()
                .map(|p| p.name.v.as_str())
                .chain(
                    written
                        .into_iter()
                        .filter_map(|(n, _)| n.map(|n| n.v.as_str())),
                )
                .collect::<Vec<_>>()
        })
        .filter(|n| !n.is_empty())
        .collect();
    let Some(endpoints) = spec.get("endpoints") else {
        return;
    };
    for e in items(vec![endpoints]) {
        let Some(port) = string(e, "port") else {
            continue;
        };
        if cx.known(&port).is_none() || names.contains(&port.v.as_str()) {
            continue;
        }
        let selected_names: Vec<&str> = selected.iter().map(|s| s.name.v.as_str()).collect();
        let help = match did_you_mean(&port.v, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`?"),
            None if names.is_empty() => {
                "name the Service's ports: `ports: { http: 80 => http }` (a ServiceMonitor scrapes a port by its name)".into()
            }
            None => format!("use one of {}", crate::validate::list(&names)),
        };
        cx.error(
            Code::UnknownServicePort,
            port.at,
            format!(
                "{}: no Service it selects ({}) has a port named `{}`",
                o.what(),
                crate::validate::list(&selected_names),
                port.v
            ),
            help,
        );
    }
}
