//! Lowering targets (with overrides), checks and includes.

use super::config::read_crate_file;
use super::{DynamicKind, Fields, IncludedNamespace, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::{Loc, Spanned};

pub(super) fn target(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let owner = format!("target {}", name.v);
    let Some(how) = &item.eq else {
        lw.fail(
            Code::MissingKey,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            format!("{owner} does not say where it deploys"),
            "write `target dev = kubeconfig(\"dev.kubeconfig\", context: \"dev\", namespace: \"hello\");` or `target local = local(namespace: \"hello\");`",
        );
        return;
    };
    let Some(call) = lw.call(
        how,
        &["kubeconfig", "local"],
        "kubeconfig(\"dev.kubeconfig\", context: \"dev\", namespace: \"hello\")",
    ) else {
        return;
    };
    let mut nf = lw.named(call, &owner);
    let namespace = match nf.take("namespace") {
        Some(v) => lw.str(v, format!("{owner} › namespace")),
        None => Some(Spanned::new(
            "default".to_string(),
            lw.loc(call.sp, format!("{owner} › namespace")),
        )),
    };
    let cluster = if call.name.text == "kubeconfig" {
        let path = lw
            .arg(
                call,
                0,
                "the kubeconfig file",
                "kubeconfig(\"dev.kubeconfig\", context: \"dev\")",
            )
            .and_then(|p| lw.str(p, format!("{owner} › kubeconfig")));
        let context = match nf.take("context") {
            Some(v) => lw.str(v, format!("{owner} › context")),
            None => {
                lw.fail(
                    Code::MissingKey,
                    call.sp,
                    format!("{owner} names no context"),
                    "add `context: \"NAME\"`: Piceli never uses the current context implicitly",
                );
                None
            }
        };
        lw.max_args(call, 1, "kubeconfig(\"dev.kubeconfig\", context: \"dev\")");
        nf.finish(lw, &["context", "namespace"]);
        match (path, context) {
            (Some(path), Some(context)) => Cluster::Kubeconfig { path, context },
            _ => return,
        }
    } else {
        lw.max_args(call, 0, "local(namespace: \"hello\")");
        nf.finish(lw, &["namespace"]);
        Cluster::Local
    };
    let mut t = Target {
        name,
        cluster,
        namespace: namespace.unwrap_or_default(),
        ..Target::default()
    };
    let mut f = Fields::of(lw, item.body.as_ref(), format!("{owner} › overrides"));
    for (k, v) in f.all() {
        if k.text == "registry" {
            t.registry = lw.str(v, format!("{owner} › registry"));
            continue;
        }
        if k.text == "rollback_on_failed_checks" {
            t.rollback_on_failed_checks = lw.bool(v).unwrap_or(false);
            continue;
        }
        let desc = format!("{owner} › {}", k.text);
        let Some((object, field)) = k.text.split_once('.') else {
            lw.fail(
                Code::UnknownOverride,
                k.sp,
                format!("`{}` is not an override", k.text),
                "write `WORKLOAD.FIELD: value`, e.g. `web.replicas: 3`, or `rollback_on_failed_checks: true`",
            );
            continue;
        };
        let object_sp = k.parts.first().copied().unwrap_or(k.sp);
        let field_sp = match (k.parts.get(1), k.parts.last()) {
            (Some(first), Some(last)) => first.to(*last),
            _ => k.sp,
        };
        let object_at = lw.loc(object_sp, format!("{owner} › {object}"));
        let field_at = lw.loc(field_sp, desc.clone());
        let value = match v {
            Value::Int(..) => lw.int(v, format!("{desc} value")).map(OverrideValue::Int),
            Value::Expr(..) if field == "replicas" => {
                lw.int(v, format!("{desc} value")).map(OverrideValue::Int)
            }
            _ => lw.str(v, format!("{desc} value")).map(OverrideValue::Str),
        };
        let Some(value) = value else { continue };
        t.overrides.push(Override {
            object: Spanned::new(object.to_string(), object_at),
            field: Spanned::new(field.to_string(), field_at),
            value,
        });
    }
    lw.app.targets.push(t);
}

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

/// What an `include yaml/json/objects(…) { … }` accepts of its objects.
#[derive(Clone, Copy)]
struct IncludeOptions {
    /// `namespace: keep`: an object may name a namespace other than the targets'.
    keep_namespace: bool,
    /// `images: unpinned`: images without a digest are accepted.
    images_unpinned: bool,
}

/// One object of an included file: what a 1.33 API server would refuse (reported at the file's token),
/// its namespace for the end-of-app check, and, for a workload, what the items referring to it see.
fn included_object(
    lw: &mut Lower,
    o: &piceli_core::include::IncludedObject,
    path: &str,
    sp: Sp,
    options: IncludeOptions,
) {
    use piceli_core::include as inc;
    let kind = o.object["kind"].as_str().unwrap_or_default();
    let name = o.object["metadata"]["name"].as_str().unwrap_or_default();
    let what = format!("{path}:{}: {kind} `{name}`", o.line);
    for (e, help) in inc::object_problems(o) {
        lw.fail(e.code, sp, e.describe(path), help);
    }
    for d in inc::schema_problems(&o.object, &what) {
        lw.fail(d.code, sp, &d.message, &d.help);
    }
    if !options.images_unpinned {
        for image in inc::unpinned_images(&o.object) {
            lw.fail(
                Code::IncludeUnpinnedImage,
                sp,
                inc::unpinned_message(&what, &image),
                "pin it in the file (`…@sha256:<digest>`; `piceli import yaml FILE --pin` looks digests up), or write `{ images: unpinned }` after the include to accept tags that can move",
            );
        }
    }
    if let Some(ns) = inc::own_namespace(&o.object)
        && !options.keep_namespace
    {
        lw.included_namespaces.push(IncludedNamespace {
            what: what.clone(),
            namespace: ns.to_string(),
            sp,
        });
    }
    // Its workloads are known to the items that refer to them (`service api -> api`).
    if inc::workload_kind(&o.object).is_some() {
        let at = lw.loc(sp, format!("include {path} › {kind} {name}"));
        if let Some(w) = inc::included_workload(&o.object, at) {
            lw.app.included_workloads.push(w);
        }
    }
}

/// A Service of an included file, known to the items that refer to it by name and port.
fn included_service(lw: &mut Lower, o: &piceli_core::include::IncludedObject, path: &str, sp: Sp) {
    if o.object["kind"] != "Service" {
        return;
    }
    let name = o.object["metadata"]["name"].as_str().unwrap_or_default();
    let at = lw.loc(sp, format!("include {path} › Service {name}"));
    if let Some(s) =
        piceli_core::include::included_service(&o.object, at, &lw.app.included_workloads)
    {
        lw.app.included_services.push(s);
    }
}

/// `{ namespace: keep, images: unpinned }` after an included file or `objects((…))`.
fn include_options(lw: &mut Lower, item: &Item, kind: &str) -> IncludeOptions {
    let mut options = Fields::of(lw, item.body.as_ref(), format!("include {kind}"));
    let (other_team, legacy) = match kind {
        "objects" => ("objects((other_team()))", "objects((legacy()))"),
        _ => ("yaml(\"k8s/other-team.yaml\")", "yaml(\"k8s/legacy.yaml\")"),
    };
    let keep_namespace = word_option(
        lw,
        &mut options,
        "namespace",
        "keep",
        &format!("include {other_team} {{ namespace: keep }}"),
    );
    let images_unpinned = word_option(
        lw,
        &mut options,
        "images",
        "unpinned",
        &format!("include {legacy} {{ images: unpinned }}"),
    );
    options.finish(lw, &["namespace", "images"]);
    IncludeOptions {
        keep_namespace,
        images_unpinned,
    }
}

/// An include option that takes one word (`namespace: keep`): whether it was given; another value is an
/// error at the value.
fn word_option(lw: &mut Lower, options: &mut Fields, key: &str, word: &str, example: &str) -> bool {
    match options.take(key) {
        Some(Value::Path(p)) if p.len() == 1 && p[0].text == word => true,
        Some(other) => {
            lw.wrong_type(other, &format!("`{word}`"), example);
            false
        }
        None => false,
    }
}

pub(super) fn include(lw: &mut Lower, item: &Item) {
    let Some(v) = item.call.as_ref() else {
        lw.fail(
            Code::MissingKey,
            item.keyword.sp,
            "`include` needs what to include",
            "write `include yaml(\"k8s/extra.yaml\");`",
        );
        return;
    };
    let Some(call) = lw.call(
        v,
        &["yaml", "json", "objects", "app"],
        "yaml(\"k8s/extra.yaml\")",
    ) else {
        return;
    };
    if call.name.text == "app" {
        // A part is checked as the app is; it takes no options.
        Fields::of(lw, item.body.as_ref(), "include app").finish(lw, &[]);
    }
    if call.name.text == "app" {
        let example = "app((extra::workers(3)))";
        let Some(arg) = lw.arg(call, 0, "a Rust expression giving a `piceli::App`", example) else {
            return;
        };
        lw.max_args(call, 1, example);
        match arg {
            Value::Expr(e, _) => lw.parts.push(e.clone()),
            Value::RustPath(p) => lw.parts.push(syn::parse_quote!(#p)),
            other => lw.wrong_type(other, "a Rust expression in parentheses", example),
        }
        return;
    }
    if call.name.text == "objects" {
        let Some(arg) = lw.arg(call, 0, "a Rust expression", "objects((my_objects()))") else {
            return;
        };
        let expr = match arg {
            Value::Expr(e, _) => e.clone(),
            Value::RustPath(p) => syn::parse_quote!(#p),
            other => {
                lw.wrong_type(
                    other,
                    "a Rust expression in parentheses",
                    "objects((extra::objects()))",
                );
                return;
            }
        };
        let options = include_options(lw, item, "objects");
        // Known only when the binary runs: checked then, as a file's objects are now.
        let at: Loc = lw.loc(arg.sp(), "include objects");
        lw.dynamic(at, DynamicKind::Objects(expr));
        lw.app.includes.push(Include::Objects {
            at,
            objects: Vec::new(),
            keep_namespace: options.keep_namespace,
            images_unpinned: options.images_unpinned,
        });
        return;
    }
    let json = call.name.text == "json";
    let IncludeOptions {
        keep_namespace,
        images_unpinned,
    } = include_options(lw, item, &call.name.text);
    let Some(arg) = lw.arg(
        call,
        0,
        "a path relative to the crate",
        "yaml(\"k8s/extra.yaml\")",
    ) else {
        return;
    };
    lw.max_args(call, 1, "yaml(\"k8s/extra.yaml\")");
    let Some(path) = lw.str(arg, format!("include {}", call.name.text)) else {
        return;
    };
    if let Some(text) = read_crate_file(lw, &path.v, arg) {
        match piceli_core::include::parse_objects(&text, json) {
            // Its workloads are known to the items that refer to them (`service api -> api`).
            Ok(objects) => {
                let options = IncludeOptions {
                    keep_namespace,
                    images_unpinned,
                };
                for o in &objects {
                    included_object(lw, o, &path.v, arg.sp(), options);
                }
                // Its Services too (`"/": api => http`), each after every workload of the file is known.
                for o in &objects {
                    included_service(lw, o, &path.v, arg.sp());
                }
            }
            Err(e) => {
                let help = match e.code {
                    Code::IncludeNotObject => {
                        "every document needs `apiVersion`, `kind` and `metadata.name`"
                    }
                    _ => "fix the file so it parses (documents are separated by `---`)",
                };
                lw.fail(e.code, arg.sp(), e.describe(&path.v), help);
                return;
            }
        }
    }
    let at = lw.loc(arg.sp(), format!("include {} contents", path.v));
    lw.dynamic(at, DynamicKind::File(path.v.clone()));
    lw.app.includes.push(Include::File {
        path,
        contents: Spanned::new(String::new(), at),
        json,
    });
}
