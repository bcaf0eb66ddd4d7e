//! Lowering `controller NAME on RESOURCE [(finalizer[: "NAME"])] [{ … }] => handler;` and `custom_resource path::Type;`.
//! Controllers (and webhooks on the app's own CRDs) are resolved once every item is read (a custom
//! resource may be declared after them): built-in kinds from the 1.33 table, custom ones by the kind of a
//! `custom_resource` type.

use super::controller_options::options;
use super::{DynamicKind, Lower};
use crate::ast::controller::Tail;
use crate::ast::{Item, NameTok, Sp};
use piceli_core::Code;
use piceli_core::model::{
    ControllerDecl, Include, OwnerMapping, RelatedKind, default_plurals, finalizer_name_problem,
};
use piceli_core::resources;
use piceli_core::rules::did_you_mean;
use piceli_core::spanned::Spanned;
use syn::spanned::Spanned as _;

/// What the expansion registers for one controller.
pub struct ControllerCode {
    /// The declared name.
    pub name: String,
    /// The object type: a k8s-openapi path, or the custom resource's path as written.
    pub object: syn::Path,
    /// The handler as written (its span is where a mismatch is reported).
    pub handler: syn::Path,
    /// `(finalizer)`.
    pub finalizer: bool,
    /// A custom resource as written (`lamps.example.com`) and its token: compared at compile time with
    /// the CRD name a `#[piceli::custom_resource]` type defines.
    pub custom_name: Option<(String, Sp)>,
    /// `backoff: ops::my_backoff`: the app's function, registered at its span (PCL0076).
    pub backoff_fn: Option<syn::Path>,
    /// `reconcile_all_on: ops::config_changes`: the app's function, registered at its span (PCL0075).
    pub reconcile_all_on: Option<syn::Path>,
}

/// Controllers and custom resources read so far, resolved by [`resolve`].
#[derive(Default)]
pub struct State {
    pending: Vec<Pending>,
    custom: Vec<syn::Path>,
    /// The registrations, once resolved.
    pub code: Vec<ControllerCode>,
}

struct Pending {
    keyword: Sp,
    tail_resource: NameTok,
    writes: Vec<(NameTok, Sp)>,
    owns: Vec<NameTok>,
    watches: Vec<(NameTok, OwnerMapping)>,
    handler: syn::Path,
    backoff_fn: Option<syn::Path>,
    reconcile_all_on: Option<syn::Path>,
    index: usize,
}

/// `custom_resource crate::Lamp;`: its CRD becomes an included object, built from the type at run time.
pub fn custom_resource(lw: &mut Lower, item: &Item) {
    let Some(Tail::CustomResource(path)) = &item.tail else {
        lw.fail(
            Code::CustomResourceType,
            item.keyword.sp,
            "`custom_resource` does not name its type",
            "write `custom_resource crate::Lamp;` (the type `#[derive(CustomResource)]` generates)",
        );
        return;
    };
    let text = path_text(path);
    if lw.controllers.custom.iter().any(|p| path_text(p) == text) {
        lw.fail(
            Code::CustomResourceType,
            path_sp(path),
            format!("`custom_resource {text}` is declared twice"),
            "keep one of them",
        );
        return;
    }
    let expr: syn::Expr = syn::parse_quote_spanned!(path.span()=>
        ::std::vec![::piceli::__private::custom_resource::<#path>()]
    );
    let at = lw.loc(path_sp(path), format!("custom_resource {text}"));
    lw.dynamic(at, DynamicKind::Objects(expr));
    lw.app.includes.push(Include::objects(at, Vec::new()));
    lw.controllers.custom.push(path.clone());
}

/// `controller NAME on RESOURCE [(finalizer)] [{ … }] => handler;`.
pub fn controller(lw: &mut Lower, item: &Item) {
    let Some(name) = lw.item_name(item) else {
        return;
    };
    let Some(Tail::Controller(tail)) = &item.tail else {
        lw.fail(
            Code::MissingKey,
            item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp),
            format!("`controller {}` does not say what it watches", name.v),
            format!(
                "write `controller {} on configmaps => ops::reconcile;`",
                name.v
            ),
        );
        return;
    };
    if let Some(body) = &item.body {
        lw.fail(
            Code::Syntax,
            body.sp(),
            "a controller's options go before `=>`",
            format!(
                "write `controller {} on RESOURCE {{ every: \"5m\" }} => ops::reconcile;`",
                name.v
            ),
        );
    }
    let owner = format!("controller {}", name.v);
    if !piceli_core::rules::is_dns1123_label(&name.v) {
        let sp = item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp);
        lw.fail(
            Code::InvalidControllerName,
            sp,
            format!("`{}` is not a DNS label", name.v),
            "use lowercase letters, digits and '-' (at most 63), e.g. `lamp-status`",
        );
    } else if lw.app.controllers.iter().any(|c| c.name.v == name.v) {
        let sp = item.name.as_ref().map(|n| n.sp).unwrap_or(item.keyword.sp);
        lw.fail(
            Code::InvalidControllerName,
            sp,
            format!("two controllers are named `{}`", name.v),
            "rename one: two controllers may watch one resource, under distinct names",
        );
    }
    let mut decl = ControllerDecl {
        resource: Spanned::new(
            tail.resource.text.clone(),
            lw.loc(tail.resource.sp, format!("{owner} › resource")),
        ),
        handler: Spanned::new(
            path_text(&tail.handler),
            lw.loc(path_sp(&tail.handler), format!("{owner} › handler")),
        ),
        name,
        ..ControllerDecl::default()
    };
    for (flag, value) in &tail.flags {
        if flag.text == "finalizer" {
            decl.finalizer = true;
            if let Some(value) = value {
                let name = value.value();
                match finalizer_name_problem(&name) {
                    None => decl.finalizer_name = Some(name),
                    Some(problem) => lw.fail(
                        Code::ControllerOption,
                        Sp::one(value.span()),
                        format!("{owner}'s finalizer name: {problem}"),
                        "a finalizer's name is a domain you own, `/`, and a name: `(finalizer: \"example.com/cleanup\")`",
                    ),
                }
            }
        } else {
            let help = match did_you_mean(&flag.text, ["finalizer"]) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "the only flag is `(finalizer)`".to_string(),
            };
            lw.fail(
                Code::ControllerOption,
                flag.sp,
                format!("unknown flag `{}` in {owner}", flag.text),
                help,
            );
        }
    }
    let read = options(lw, tail, &owner, &mut decl);
    lw.controllers.pending.push(Pending {
        keyword: item.keyword.sp,
        tail_resource: tail.resource.clone(),
        writes: read.writes,
        owns: read.owns,
        watches: read.watches,
        handler: tail.handler.clone(),
        backoff_fn: read.backoff_fn,
        reconcile_all_on: read.reconcile_all_on,
        index: lw.app.controllers.len(),
    });
    lw.app.controllers.push(decl);
}

/// A resource name resolved: (group, plural, namespaced, custom type).
type Resolved = (String, String, bool, Option<syn::Path>);

/// Resolves every controller's resource and `writes:`, and the webhooks' resources, against the 1.33
/// table and the custom resources.
pub fn resolve(lw: &mut Lower) {
    resolve_webhooks(lw);
    let pending = std::mem::take(&mut lw.controllers.pending);
    if let (Some(first), None) = (pending.first(), &lw.app.operator) {
        lw.fail(
            Code::ControllerWithoutOperator,
            first.keyword,
            "the app declares a controller but no operator to run it",
            "add `operator NAME { image: \"registry/repo:tag@sha256:…\" }`: its `serve` runs the controllers",
        );
    }
    for p in pending {
        let Some(resolved) = lookup(lw, &p.tail_resource) else {
            continue;
        };
        for (tok, _) in &p.writes {
            if let Some((group, plural, _, _)) = lookup(lw, tok) {
                lw.app.controllers[p.index].writes.push((group, plural));
            }
        }
        for tok in &p.owns {
            if let Some(kind) = related(lw, tok) {
                lw.app.controllers[p.index].owns.push(kind);
            }
        }
        for (tok, mapping) in &p.watches {
            if let Some(kind) = related(lw, tok) {
                lw.app.controllers[p.index]
                    .watches
                    .push((kind, mapping.clone()));
            }
        }
        let (group, plural, namespaced, custom) = resolved;
        let object = match &custom {
            Some(path) => kind_path(path),
            None => {
                let Some(r) = resources::lookup(&p.tail_resource.text) else {
                    continue;
                };
                match syn::parse_str(&format!("::piceli::k8s_openapi::api::{}", r.rust_type)) {
                    Ok(path) => path,
                    Err(_) => continue,
                }
            }
        };
        let decl = &mut lw.app.controllers[p.index];
        decl.group = group;
        decl.plural = plural;
        decl.namespaced = namespaced;
        decl.custom = custom.is_some();
        let code = ControllerCode {
            name: decl.name.v.clone(),
            object,
            handler: p.handler,
            finalizer: decl.finalizer,
            custom_name: custom
                .is_some()
                .then(|| (p.tail_resource.text.clone(), p.tail_resource.sp)),
            backoff_fn: p.backoff_fn,
            reconcile_all_on: p.reconcile_all_on,
        };
        lw.controllers.code.push(code);
    }
}

/// An owned or watched resource: a 1.33 one with its version and kind, or one of the app's custom
/// resources (its kind from the type's name; its version and scope are its CRD's at run time).
fn related(lw: &mut Lower, tok: &NameTok) -> Option<RelatedKind> {
    let (group, plural, namespaced, custom) = lookup(lw, tok)?;
    let (version, kind) = match (&custom, resources::lookup(&tok.text)) {
        (None, Some(r)) => (r.version.to_string(), r.kind.to_string()),
        (Some(path), _) => (
            String::new(),
            path.segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
        ),
        (None, None) => return None,
    };
    Some(RelatedKind {
        resource: tok.text.clone(),
        group,
        version,
        kind,
        plural,
        namespaced,
        custom: custom.is_some(),
    })
}

/// The kind a `custom_resource` path names: the path itself, or, for the spec struct (`LampSpec`), the
/// kind the derive generates beside it (`Lamp`), so a controller on it is typed by the kind and the one
/// error is PCL0072 at the `custom_resource` path.
fn kind_path(path: &syn::Path) -> syn::Path {
    let mut kind = path.clone();
    if let Some(last) = kind.segments.last_mut()
        && let Some(stem) = last.ident.to_string().strip_suffix("Spec")
        && !stem.is_empty()
    {
        last.ident = syn::Ident::new(stem, last.ident.span());
    }
    kind
}

/// The kind's name of a `custom_resource` path (`Lamp` for `Lamp` and for `LampSpec`).
fn kind_name(path: &syn::Path) -> String {
    kind_path(path)
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

/// The `custom_resource` type a `PLURAL.GROUP` names: the one whose kind pluralizes to PLURAL. The scope
/// and versions are the CRD's (rendered from the type); the group is checked against the type's CRD name
/// when the app is loaded (PCL0175 for a controller, PCL0178 for a webhook).
fn custom(lw: &Lower, written: &str) -> Option<Resolved> {
    let (plural, group) = written.split_once('.')?;
    let path = lw.controllers.custom.iter().find(|path| {
        default_plurals(&kind_name(path))
            .iter()
            .any(|p| p == plural)
    })?;
    Some((group.into(), plural.into(), true, Some(path.clone())))
}

/// Resolves each webhook resource on a `PLURAL.GROUP` that is not a 1.33 resource to the app's
/// `custom_resource` type, the same way a controller's resource is: the handlers of a webhook that is not
/// generic are then typed by it, and the name is compared with the type's CRD name at compile time. One
/// that is neither is left to the model's validation (PCL0061 at its token).
fn resolve_webhooks(lw: &mut Lower) {
    for i in 0..lw.app.webhooks.len() {
        for j in 0..lw.app.webhooks[i].resources.len() {
            let written = lw.app.webhooks[i].resources[j].name.v.clone();
            if resources::lookup(&written).is_some() {
                continue;
            }
            let Some((_, _, _, Some(path))) = custom(lw, &written) else {
                continue;
            };
            lw.app.webhooks[i].resources[j].custom = true;
            let generic = lw.app.webhooks[i].generic;
            if let Some(code) = lw.webhooks.get_mut(i) {
                if !generic {
                    code.object = Some(kind_path(&path));
                }
                if let Some(sp) = code.resource_sps.get(j).copied() {
                    code.custom_names.push((kind_path(&path), written, sp));
                }
            }
        }
    }
}

/// A resource as a controller writes it, or PCL0067 at its token.
fn lookup(lw: &mut Lower, written: &NameTok) -> Option<Resolved> {
    if let Some(r) = resources::lookup(&written.text) {
        return Some((r.group.into(), r.plural.into(), r.namespaced, None));
    }
    if let Some(found) = custom(lw, &written.text) {
        return Some(found);
    }
    let mut known: Vec<String> = resources::RESOURCES.iter().map(|r| r.written()).collect();
    for path in &lw.controllers.custom {
        known.push(format!("{}.<group>", default_plurals(&kind_name(path))[0]));
    }
    let help = match did_you_mean(&written.text, known.iter().map(String::as_str)) {
        Some(s) => format!("did you mean `{s}`?"),
        None if lw.controllers.custom.is_empty() => {
            "write a built-in resource (`configmaps`, `deployments.apps`), or declare the custom resource's type with `custom_resource crate::Lamp;`".to_string()
        }
        None => "write a built-in resource (`configmaps`, `deployments.apps`) or `PLURAL.GROUP` of a `custom_resource` type (`lamps.example.com` for `Lamp`)".to_string(),
    };
    lw.fail(
        Code::UnknownControllerResource,
        written.sp,
        format!(
            "`{}` is neither a 1.33 resource nor one of the app's custom resources",
            written.text
        ),
        help,
    );
    None
}

fn path_text(p: &syn::Path) -> String {
    quote::quote!(#p).to_string().replace(' ', "")
}

fn path_sp(p: &syn::Path) -> Sp {
    let first = p
        .segments
        .first()
        .map(|s| s.ident.span())
        .unwrap_or_else(proc_macro2::Span::call_site);
    let last = p.segments.last().map(|s| s.ident.span()).unwrap_or(first);
    Sp {
        start: first,
        end: last,
    }
}
