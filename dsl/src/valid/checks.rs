//! Lowering `check NAME = http(…) | metric(…) | exec(…)` items: the checks `deploy` and `check` run after a rollout.

use super::Lower;
use crate::ast::{Item, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::Spanned;

pub(super) fn check(lw: &mut Lower, item: &Item) {
    let Some(v) = item.call.as_ref().or(item.eq.as_ref()) else {
        lw.fail(
            Code::MissingKey,
            item.keyword.sp,
            "`check` needs a check",
            "write `check http(web, \"/\", expect: 200);`",
        );
        return;
    };
    let Some(call) = lw.call(
        v,
        &["http", "exec", "metric", "code"],
        "http(web, \"/\", expect: 200)",
    ) else {
        return;
    };
    let kind_name = call.name.text.clone();
    let first = call.args.first().map(|a| match a {
        Value::Path(p) => p
            .iter()
            .map(|n| n.text.clone())
            .collect::<Vec<_>>()
            .join("."),
        Value::RustPath(p) => p
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    });
    let name_text = match &item.name {
        Some(n) => n.text.clone(),
        None => {
            let base = format!(
                "{kind_name}-{}",
                first.unwrap_or_default().replace(['_', '.'], "-")
            );
            let n = lw
                .app
                .checks
                .iter()
                .filter(|c| c.name.v == base || c.name.v.starts_with(&format!("{base}-")))
                .count();
            if n == 0 {
                base
            } else {
                format!("{base}-{}", n + 1)
            }
        }
    };
    let name_sp = item.name.as_ref().map(|n| n.sp).unwrap_or(call.name.sp);
    let owner = format!("check {name_text}");
    let name = Spanned::new(name_text, lw.loc(name_sp, owner.clone()));
    let mut nf = lw.named(call, &owner);
    let kind = match kind_name.as_str() {
        "http" | "metric" => {
            let example = if kind_name == "http" {
                "http(web, \"/\", expect: 200)"
            } else {
                "metric(web, \"/metrics\", series: \"up\", min: 1)"
            };
            let target = lw
                .arg(call, 0, "a Service or workload", example)
                .and_then(|a| lw.name(a, format!("{owner} › target")));
            let path = lw
                .arg(call, 1, "a path", example)
                .and_then(|a| lw.str(a, format!("{owner} › path")));
            lw.max_args(call, 2, example);
            let port = nf
                .take("port")
                .and_then(|p| lw.port_ref(p, &format!("{owner} › port")));
            if kind_name == "http" {
                let method = nf
                    .take("method")
                    .and_then(|m| lw.str(m, format!("{owner} › method")));
                let expect = match nf.take("expect") {
                    Some(e) => lw.int(e, format!("{owner} › expect")),
                    None => Some(Spanned::new(
                        200,
                        lw.loc(call.sp, format!("{owner} › expect")),
                    )),
                };
                let body = nf
                    .take("body")
                    .and_then(|b| lw.str(b, format!("{owner} › body")));
                match (target, path, expect) {
                    (Some(target), Some(path), Some(expect)) => CheckKind::Http {
                        target,
                        port,
                        path,
                        method,
                        expect,
                        body,
                    },
                    _ => return,
                }
            } else {
                let series = match nf.take("series") {
                    Some(s) => lw.str(s, format!("{owner} › series")),
                    None => {
                        lw.fail(
                            Code::MissingKey,
                            call.sp,
                            "a metric check needs `series:`",
                            "add `series: \"up\"`",
                        );
                        None
                    }
                };
                let min = nf
                    .take("min")
                    .and_then(|m| lw.float(m, format!("{owner} › min")));
                let max = nf
                    .take("max")
                    .and_then(|m| lw.float(m, format!("{owner} › max")));
                match (target, path, series) {
                    (Some(target), Some(path), Some(series)) => CheckKind::Metric {
                        target,
                        port,
                        path,
                        series,
                        min,
                        max,
                    },
                    _ => return,
                }
            }
        }
        "exec" => {
            let example = "exec(db, [\"pg_isready\"], expect: 0)";
            let workload = lw
                .arg(call, 0, "a workload", example)
                .and_then(|a| lw.name(a, format!("{owner} › workload")));
            let command = lw
                .arg(call, 1, "a command", example)
                .map(|a| lw.str_list(a, &format!("{owner} › command")));
            lw.max_args(call, 2, example);
            let expect = match nf.take("expect") {
                Some(e) => lw.int(e, format!("{owner} › expect")),
                None => Some(Spanned::new(
                    0,
                    lw.loc(call.sp, format!("{owner} › expect")),
                )),
            };
            let output = nf
                .take("output")
                .and_then(|o| lw.str(o, format!("{owner} › output")));
            match (workload, command, expect) {
                (Some(workload), Some(command), Some(expect)) => CheckKind::Exec {
                    workload,
                    command,
                    expect,
                    output,
                },
                _ => return,
            }
        }
        _ => {
            let example = "code(checks::orders_flow)";
            let Some(arg) = lw.arg(call, 0, "a function", example) else {
                return;
            };
            lw.max_args(call, 1, example);
            let path = match arg {
                Value::RustPath(p) => p.clone(),
                Value::Path(parts) if parts.len() == 1 => {
                    syn::Path::from(syn::Ident::new(&parts[0].text, parts[0].sp.start))
                }
                other => {
                    lw.wrong_type(other, "a Rust function path", example);
                    return;
                }
            };
            let text = quote::quote!(#path).to_string().replace(' ', "");
            let at = lw.loc(arg.sp(), format!("{owner} › function"));
            lw.rust_path(path);
            CheckKind::Code {
                function: Spanned::new(text, at),
            }
        }
    };
    let timeout = nf
        .take("timeout")
        .and_then(|t| lw.str(t, format!("{owner} › timeout")));
    let retries = nf
        .take("retries")
        .and_then(|t| lw.int(t, format!("{owner} › retries")));
    let interval = nf
        .take("interval")
        .and_then(|t| lw.str(t, format!("{owner} › interval")));
    let allowed: &[&str] = match kind_name.as_str() {
        "http" => &[
            "port", "method", "expect", "body", "timeout", "retries", "interval",
        ],
        "metric" => &[
            "port", "series", "min", "max", "timeout", "retries", "interval",
        ],
        "exec" => &["expect", "output", "timeout", "retries", "interval"],
        _ => &["timeout", "retries", "interval"],
    };
    nf.finish(lw, allowed);
    lw.app.checks.push(Check {
        name,
        kind,
        timeout,
        retries,
        interval,
    });
}
