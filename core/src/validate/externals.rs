//! `external KIND NAME;`: objects the app refers to and someone else makes — valid names, declared once,
//! never also declared by the app.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, ExternalKind};
use crate::rules;
use std::collections::HashSet;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    let mut seen = HashSet::new();
    for e in &app.externals {
        let verdict = match e.kind {
            ExternalKind::Service => rules::rfc1035_label(&e.name.v),
            _ => rules::dns1123_subdomain(&e.name.v),
        };
        cx.rule(Code::InvalidName, e.name.at, verdict);
        let word = e.kind.word();
        if !seen.insert((e.kind, e.name.v.as_str())) {
            cx.error(
                Code::ExternalConflict,
                e.name.at,
                format!("`external {word} {}` is declared twice", e.name.v),
                "remove one of the two lines",
            );
        } else if declared(app, e.kind, &e.name.v) {
            cx.error(
                Code::ExternalConflict,
                e.name.at,
                format!(
                    "{} `{}` is declared both `external` and by the app",
                    e.kind.kind(),
                    e.name.v
                ),
                format!(
                    "keep `external {word} {};` if someone else makes it, or the app's `{}` if the app does",
                    e.name.v,
                    declaration(e.kind, &e.name.v)
                ),
            );
        }
    }
}

/// How the app declares one itself.
fn declaration(kind: ExternalKind, name: &str) -> String {
    match kind {
        ExternalKind::Gateway => format!("resource Gateway {name} {{ … }}"),
        _ => format!("{} {name} {{ … }}", kind.word()),
    }
}

/// Whether the app itself declares an object of this kind and name.
fn declared(app: &App, kind: ExternalKind, name: &str) -> bool {
    match kind {
        ExternalKind::Secret => app.secrets.iter().any(|s| s.name.v == name),
        ExternalKind::ConfigMap => app.config_maps.iter().any(|c| c.name.v == name),
        ExternalKind::ServiceAccount => app.service_accounts.iter().any(|s| s.name.v == name),
        ExternalKind::Pvc => app.pvcs.iter().any(|p| p.name.v == name),
        ExternalKind::Service => app.services.iter().any(|s| s.name.v == name),
        ExternalKind::Gateway => super::refs::custom::gateways(app).contains(&name),
    }
}
