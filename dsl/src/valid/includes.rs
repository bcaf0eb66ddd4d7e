//! Lowering `include yaml(…) | json(…) | objects(…)` items: objects kept as YAML or JSON, checked as a 1.33 API
//! server would, with their namespaces and the Services and workloads other items refer to.

use super::config::read_crate_file;
use super::{DynamicKind, Fields, IncludedNamespace, Lower};
use crate::ast::{Item, Sp, Value};
use piceli_core::Code;
use piceli_core::model::*;
use piceli_core::spanned::{Loc, Spanned};

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
