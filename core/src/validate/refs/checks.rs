//! References of checks: the Service or workload (and port) each one reaches, and its values.

use super::{service_port, workload, workload_port};
use crate::codes::Code;
use crate::model::{App, CheckKind, PortRef};
use crate::rules;
use crate::spanned::{Name, Spanned};
use crate::validate::Ctx;
use crate::validate::pods::one_of;

pub(super) fn checks(cx: &mut Ctx, app: &App) {
    for c in &app.checks {
        for d in [&c.timeout, &c.interval].into_iter().flatten() {
            let verdict = rules::duration(&d.v).map(|_| ());
            cx.rule(Code::InvalidValue, d.at, verdict);
        }
        if let Some(r) = &c.retries
            && let Some(&n) = cx.known(r)
            && n < 0
        {
            cx.error(
                Code::BadBounds,
                r.at,
                format!("retries is {n}"),
                "use 0 or more",
            );
        }
        match &c.kind {
            CheckKind::Http {
                target,
                port,
                path,
                method,
                expect,
                ..
            } => {
                forward_target(cx, app, target, port.as_ref());
                cx.rule(Code::InvalidPath, path.at, rules::http_path(&path.v));
                if let Some(m) = method {
                    one_of(
                        cx,
                        m,
                        &["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
                        "HTTP method",
                    );
                }
                status(cx, expect);
            }
            CheckKind::Metric {
                target,
                port,
                path,
                min,
                max,
                ..
            } => {
                forward_target(cx, app, target, port.as_ref());
                cx.rule(Code::InvalidPath, path.at, rules::http_path(&path.v));
                if min.is_none() && max.is_none() {
                    cx.error(
                        Code::MissingKey,
                        c.name.at,
                        "a metric check needs `min:` or `max:`",
                        "add `min: 1` or `max: 0.5`",
                    );
                }
            }
            CheckKind::Exec {
                workload: w,
                command,
                ..
            } => {
                workload(cx, app, w);
                if command.is_empty() {
                    cx.error(
                        Code::MissingKey,
                        w.at,
                        "an exec check has an empty command",
                        "give the command, e.g. `[\"pg_isready\"]`",
                    );
                }
            }
            CheckKind::Code { .. } => {}
        }
    }
}

fn status(cx: &mut Ctx, expect: &Spanned<i64>) {
    if let Some(&s) = cx.known(expect)
        && !(100..=599).contains(&s)
    {
        cx.error(
            Code::InvalidValue,
            expect.at,
            format!("{s} is not an HTTP status"),
            "expect a status from 100 to 599, e.g. 200",
        );
    }
}

/// A check's target: a declared Service (port = a Service port) or workload (port = a container port).
fn forward_target(cx: &mut Ctx, app: &App, target: &Name, port: Option<&PortRef>) {
    if let Some(s) = app.service(&target.v) {
        if let Some(p) = port {
            service_port(cx, s, p);
        }
    } else if let Some(w) = app.workload(&target.v) {
        if let Some(p) = port {
            workload_port(cx, w, p, Code::UnknownTargetPort);
        }
    } else {
        let candidates = app
            .services
            .iter()
            .chain(&app.included_services)
            .map(|s| s.name.v.as_str())
            .chain(app.workloads.iter().map(|w| w.name.v.as_str()));
        cx.unknown(
            Code::UnknownService,
            "Service or workload",
            target,
            candidates,
        );
    }
}
