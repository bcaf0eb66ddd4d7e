//! Pass 3, expand: the checked app becomes a module with `app()` and `main()`.
//!
//! The model travels as JSON (the same serde model the runtime reads), with placeholders where values are
//! written as Rust expressions or read from files; `app()` loads it and then assigns each such value to
//! its place, by a typed assignment the expansion writes from the model's path to it (`places.rs`). The
//! generated code only calls `::piceli::__private`, so `cargo expand` shows a short, readable module.

mod controller;
mod crd_name;
mod places;
mod webhook;

use crate::valid::{Checked, Dynamic, DynamicKind};
use places::{Holder, Places};
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::HashSet;
use syn::spanned::Spanned;

/// The module for a checked app; `operator`: piceli's `operator` feature is on (then the module has
/// `webhooks()` and `controllers()`, and `main()` serves them).
pub fn expand(checked: Checked, operator: bool) -> TokenStream {
    let module = module_ident(&checked.app.name.v);
    let model = match serde_json::to_string(&checked.app) {
        Ok(json) => json,
        Err(e) => {
            let msg = format!("piceli: internal error serializing the app model: {e}");
            return quote!(::core::compile_error!(#msg););
        }
    };
    // Where each value goes: found in the model only when the app has such values.
    let wanted: HashSet<u32> = checked
        .dynamics
        .iter()
        .filter(|d| !matches!(d.kind, DynamicKind::Pairs(..) | DynamicKind::Strings(..)))
        .map(|d| d.at.0)
        .collect();
    let places = if wanted.is_empty() {
        Places::new()
    } else {
        places::find(&checked.app, &wanted)
    };
    // Values at a place of the model first; then maps and lists that extend a field.
    let assignments = checked
        .dynamics
        .iter()
        .filter_map(|d| placed(d, &places))
        .chain(checked.dynamics.iter().filter_map(extension))
        .collect::<Vec<_>>();
    // `include app((…))`: each part merged in, its type checked at the expression.
    let parts = checked
        .parts
        .iter()
        .map(|e| quote_spanned!(e.span()=> .merge(::piceli::__private::part(#e))));
    let paths = &checked.paths;
    // The same text the model stores for `CheckKind::Code { function }`, so the runtime finds each one.
    // Each registration carries its path's span, so a function of the wrong shape is reported there.
    let registrations = paths.iter().map(|p| {
        let text = quote!(#p).to_string().replace(' ', "");
        quote_spanned!(p.span()=> ::piceli::__private::code_check(#text, #p))
    });
    let operator_fns = operator.then(|| {
        let webhooks = crate::expand::webhook::webhooks(&checked.webhooks);
        let controllers = controller::controllers(&checked.controllers);
        quote! {
            /// The app's admission webhooks, typed by their resources, as `serve` runs them.
            pub fn webhooks() -> ::piceli::webhook::Webhooks {
                #webhooks
            }

            /// The app's controllers, typed by their resources, as `serve` runs them.
            pub fn controllers() -> ::piceli::controller::Controllers {
                #controllers
            }
        }
    });
    let with_operator = operator.then(|| quote!(.operator(webhooks, controllers)));
    // The CRD files the macro read: inputs of the build (an edit to one rebuilds and re-checks the app).
    let tracked = checked.tracked.iter().map(|path| {
        let path = crate_file(path);
        quote!(
            const _: &[u8] = ::core::include_bytes!(#path);
        )
    });
    let model = raw_str(&model);
    let locations = raw_str(&checked.app.locations.text());
    let format = piceli_core::model::MODEL_FORMAT;
    let name = &checked.app.name.v;
    let doc =
        format!("The `{name}` app, as declared in `piceli::app!` and checked at compile time.");
    quote! {
        #[doc = #doc]
        pub mod #module {
            #[allow(unused_imports)]
            use super::*;

            #(#tracked)*

            /// The app model, with the values written as Rust expressions assigned to their places.
            pub fn app() -> ::piceli::__private::App {
                #[allow(unused_mut)]
                let mut app = ::piceli::__private::load(#format, MODEL, LOCATIONS);
                #(#assignments)*
                app #(#parts)*
            }

            /// The app's `check code(…)` functions, registered for the runtime to call.
            pub fn code_checks() -> ::std::vec::Vec<::piceli::__private::CodeCheck> {
                ::std::vec![#(#registrations),*]
            }

            #operator_fns

            /// Runs the app's command line (`render`, `plan`, `deploy`, `serve`, …); call it from `main`.
            pub fn main() -> ::std::process::ExitCode {
                ::piceli::__private::AppBinary::new(app(), code_checks())
                    #with_operator
                    .main()
            }

            const MODEL: &str = #model;

            /// Where each value was written, for run-time errors: a line per location.
            const LOCATIONS: &str = #locations;
        }
    }
}

/// Whether a value of this kind goes into a place held this way: a scalar or a file's contents into its
/// `Spanned` placeholder or into a block; JSON into a block; a whole `env: (…)` or `include objects(…)`
/// into the struct that has its location (`env_expr`, `Include::Objects { at, … }`).
fn fits(kind: &DynamicKind, holder: Holder) -> bool {
    match kind {
        DynamicKind::Str(_) | DynamicKind::Int(_) | DynamicKind::File(_) => {
            matches!(holder, Holder::Spanned | Holder::Block)
        }
        DynamicKind::Json(_) => holder == Holder::Block,
        DynamicKind::Env(_) | DynamicKind::Objects(_) => holder == Holder::Bare,
        DynamicKind::Pairs(..) | DynamicKind::Strings(..) => false,
    }
}

/// A file `app!` names, for `include_str!`/`include_bytes!`: relative to the app crate, or absolute (a
/// path a fragment of another crate names, relative to that crate).
fn crate_file(path: &str) -> TokenStream {
    if std::path::Path::new(path).is_absolute() {
        return quote!(#path);
    }
    let path = format!("/{path}");
    quote!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), #path))
}

/// A value assigned at its place in the model: `assign(&mut app, AT, |a| Some(&mut a.…), string(EXPR))`.
/// The conversion carries the expression's span, so a value of the wrong type is reported there with the
/// conversion trait's message. A value the model holds in several places (copied by the checks) is
/// evaluated once and cloned.
fn placed(d: &Dynamic, places: &Places) -> Option<TokenStream> {
    let value = match &d.kind {
        DynamicKind::Str(e) => quote_spanned!(e.span()=> ::piceli::__private::string(#e)),
        DynamicKind::Int(e) => quote_spanned!(e.span()=> ::piceli::__private::int(#e)),
        DynamicKind::Json(e) => quote_spanned!(e.span()=> ::piceli::__private::json(#e)),
        DynamicKind::File(path) => {
            let path = crate_file(path);
            quote!(::piceli::__private::string(::core::include_str!(#path)))
        }
        DynamicKind::Objects(e) => quote!(::piceli::__private::objects(#e)),
        DynamicKind::Env(e) => quote_spanned!(e.span()=> ::piceli::__private::env(#e)),
        DynamicKind::Pairs(..) | DynamicKind::Strings(..) => return None,
    };
    let at = Literal::u32_unsuffixed(d.at.0);
    let closures: Option<Vec<TokenStream>> = places
        .get(&d.at.0)
        .into_iter()
        .flatten()
        .filter(|(holder, _)| fits(&d.kind, *holder))
        .map(|(_, path)| places::closure(path))
        .collect();
    let Some(closures) = closures else {
        let msg = format!(
            "piceli: internal error: no path in the model to the value at location {}",
            d.at.0
        );
        return Some(quote!(::core::compile_error!(#msg);));
    };
    Some(match closures.as_slice() {
        // Not in the model (nothing refers to it): still evaluated, and its type checked.
        [] => quote!(let _ = #value;),
        [one] => quote!(::piceli::__private::assign(&mut app, #at, #one, #value);),
        [first @ .., last] => quote!({
            let value = #value;
            #(::piceli::__private::assign(&mut app, #at, #first, ::core::clone::Clone::clone(&value));)*
            ::piceli::__private::assign(&mut app, #at, #last, value);
        }),
    })
}

/// A map or list from Rust, which extends its field by a typed path: `app.workload("web").pod_labels`,
/// or a container's `args`. The runtime finds the workload and container by name and records a load
/// error if the model lacks them (it cannot: both come from the same checked app).
fn extension(d: &Dynamic) -> Option<TokenStream> {
    // The conversion carries the expression's span, so a wrong type is reported there.
    let (place, value) = match &d.kind {
        DynamicKind::Pairs(e, place) => (
            place,
            quote_spanned!(e.span()=> ::piceli::__private::pairs(#e)),
        ),
        DynamicKind::Strings(e, place) => (
            place,
            quote_spanned!(e.span()=> ::piceli::__private::strings(#e)),
        ),
        _ => return None,
    };
    let at = Literal::u32_unsuffixed(d.at.0);
    let workload = &place.workload;
    let field = format_ident!("{}", place.field);
    Some(match &place.container {
        None => quote! {
            ::piceli::__private::assign_workload(&mut app, #workload, #at, |w| &mut w.#field, #value);
        },
        Some(container) => quote! {
            ::piceli::__private::assign_container(&mut app, #workload, #container, #at, |c| &mut c.#field, #value);
        },
    })
}

/// `text` as a raw string literal (`r#"…"#`, with enough `#`s): a model of megabytes full of `"` is not
/// escaped character by character, here nor in rustc.
fn raw_str(text: &str) -> TokenStream {
    let mut hashes = 1;
    let mut run: Option<usize> = None;
    for c in text.chars() {
        run = match (c, run) {
            ('"', _) => Some(0),
            ('#', Some(n)) => Some(n + 1),
            _ => None,
        };
        if let Some(n) = run {
            hashes = hashes.max(n + 1);
        }
    }
    let fence = "#".repeat(hashes);
    match format!("r{fence}\"{text}\"{fence}").parse::<proc_macro2::Literal>() {
        Ok(literal) => quote!(#literal),
        // A text a raw string cannot hold (a bare carriage return): an ordinary literal.
        Err(_) => quote!(#text),
    }
}

/// What is emitted when the app has errors: the errors, plus a module with the same items so that code
/// using it (`hello::main()`) adds no follow-on errors.
pub fn fallback(errors: Vec<syn::Error>, name: Option<String>, operator: bool) -> TokenStream {
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    let module = name.map(|n| {
        let module = module_ident(&n);
        let operator_fns = operator.then(|| {
            quote! {
                pub fn webhooks() -> ::piceli::webhook::Webhooks { ::core::unreachable!() }
                pub fn controllers() -> ::piceli::controller::Controllers { ::core::unreachable!() }
            }
        });
        quote! {
            #[allow(dead_code, unreachable_code)]
            pub mod #module {
                pub fn app() -> ::piceli::__private::App { ::core::unreachable!() }
                pub fn main() -> ::std::process::ExitCode { ::core::unreachable!() }
                #operator_fns
            }
        }
    });
    quote!(#(#errors)* #module)
}

fn module_ident(name: &str) -> syn::Ident {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    let cleaned = if cleaned.starts_with(|c: char| c.is_ascii_digit()) || cleaned.is_empty() {
        format!("app_{cleaned}")
    } else {
        cleaned
    };
    match cleaned.as_str() {
        // Keywords that cannot be raw identifiers either (`r#super` panics): `app super;` is `super_`.
        "self" | "super" | "crate" | "_" => format_ident!("{}_", cleaned, span = Span::call_site()),
        _ => syn::parse_str::<syn::Ident>(&cleaned)
            .unwrap_or_else(|_| format_ident!("r#{}", cleaned, span = Span::call_site())),
    }
}

#[cfg(test)]
mod tests {
    use super::{module_ident, raw_str};

    /// Found by the `dsl` fuzz target (fuzz/regressions/dsl/app_super): `app super;` panicked in the
    /// expansion (`r#super` cannot be a raw identifier).
    #[test]
    fn every_app_name_makes_a_module_ident() {
        for (name, module) in [
            ("super", "super_"),
            ("self", "self_"),
            ("crate", "crate_"),
            ("Self", "self_"),
            ("_", "__"),
            ("type", "r#type"),
            ("9lives", "app_9lives"),
            ("my-app", "my_app"),
        ] {
            assert_eq!(module_ident(name).to_string(), module, "{name}");
        }
        let out = crate::app("app super;".parse().expect("tokens")).to_string();
        assert!(out.contains("mod super_"), "{out}");
    }

    #[test]
    fn a_raw_string_holds_any_text_with_enough_hashes() {
        for text in [
            "",
            "plain",
            r#"{"a":"b"}"#,
            "a\"#b\"##c",
            "line\nbreak",
            "tab\tand \\ slash",
        ] {
            let tokens = raw_str(text).to_string();
            let literal: syn::LitStr = syn::parse_str(&tokens).expect("a string literal");
            assert_eq!(literal.value(), text, "{tokens}");
        }
        assert!(raw_str("a\"#b\"##c").to_string().starts_with("r###\""));
    }
}
