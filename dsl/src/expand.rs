//! Pass 3, expand: the checked app becomes a module with `app()` and `main()`.
//!
//! The model travels as JSON (the same serde model the runtime reads), and values written as Rust
//! expressions or read from files are filled in at their locations when `app()` runs. The generated code
//! only calls `::piceli::__private`, so `cargo expand` shows a short, readable module.

mod controller;

use crate::valid::{Checked, DynamicKind};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// The module for a checked app.
pub fn expand(checked: Checked) -> TokenStream {
    let module = module_ident(&checked.app.name.v);
    let model = match serde_json::to_string(&checked.app) {
        Ok(json) => json,
        Err(e) => {
            let msg = format!("piceli: internal error serializing the app model: {e}");
            return quote!(::core::compile_error!(#msg););
        }
    };
    let fills = checked.dynamics.iter().filter_map(|d| {
        let at = d.at.0;
        let value = match &d.kind {
            DynamicKind::Str(e) => quote::quote_spanned!(syn::spanned::Spanned::span(e)=> ::piceli::__private::string(#e)),
            DynamicKind::Int(e) => quote::quote_spanned!(syn::spanned::Spanned::span(e)=> ::piceli::__private::int(#e)),
            DynamicKind::Json(e) => quote::quote_spanned!(syn::spanned::Spanned::span(e)=> ::piceli::__private::json(#e)),
            DynamicKind::File(path) => {
                let path = format!("/{path}");
                quote!(::piceli::__private::string(::core::include_str!(
                    ::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), #path)
                )))
            }
            DynamicKind::Objects(e) => quote!(::piceli::__private::objects(#e)),
            DynamicKind::Env(e) => quote::quote_spanned!(syn::spanned::Spanned::span(e)=> ::piceli::__private::env(#e)),
            DynamicKind::Pairs(..) | DynamicKind::Strings(..) => return None,
        };
        Some(quote!((#at, #value)))
    });
    let assignments = checked.dynamics.iter().filter_map(assignment);
    // `include app((…))`: each part merged in, its type checked at the expression.
    let parts = checked.parts.iter().map(|e| {
        quote::quote_spanned!(syn::spanned::Spanned::span(e)=> .merge(::piceli::__private::part(#e)))
    });
    let paths = &checked.paths;
    // The same text the model stores for `CheckKind::Code { function }`, so the runtime finds each one.
    // Each registration carries its path's span, so a function of the wrong shape is reported there.
    let registrations = paths.iter().map(|p| {
        let text = quote!(#p).to_string().replace(' ', "");
        quote::quote_spanned!(syn::spanned::Spanned::span(p)=> ::piceli::__private::code_check(#text, #p))
    });
    let webhooks = crate::webhook_expand::webhooks(&checked.webhooks);
    let controllers = controller::controllers(&checked.controllers);
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

            /// The app model, with the values written as Rust expressions filled in.
            pub fn app() -> ::piceli::__private::App {
                #[allow(unused_mut)]
                let mut app =
                    ::piceli::__private::load(#format, MODEL, LOCATIONS, ::std::vec![#(#fills),*]);
                #(#assignments)*
                app #(#parts)*
            }

            /// The app's `check code(…)` functions, registered for the runtime to call.
            pub fn code_checks() -> ::std::vec::Vec<::piceli::__private::CodeCheck> {
                ::std::vec![#(#registrations),*]
            }

            /// The app's admission webhooks, typed by their resources, as `serve` runs them.
            pub fn webhooks() -> ::piceli::webhook::Webhooks {
                #webhooks
            }

            /// The app's controllers, typed by their resources, as `serve` runs them.
            pub fn controllers() -> ::piceli::controller::Controllers {
                #controllers
            }

            /// Runs the app's command line (`render`, `plan`, `deploy`, `serve`, …); call it from `main`.
            pub fn main() -> ::std::process::ExitCode {
                ::piceli::__private::AppBinary {
                    app: app(),
                    code_checks: code_checks(),
                    webhooks,
                    controllers,
                }
                .main()
            }

            const MODEL: &str = #model;

            /// Where each value was written, for run-time errors: a line per location.
            const LOCATIONS: &str = #locations;
        }
    }
}

/// A map or list from Rust, assigned to its field by a typed path: `app.workload("web").pod_labels`, or
/// a container's `args`. The runtime finds the workload and container by name and records a load error
/// if the model lacks them (it cannot: both come from the same checked app).
fn assignment(d: &crate::valid::Dynamic) -> Option<TokenStream> {
    // The conversion carries the expression's span, so a wrong type is reported there.
    let (place, value) = match &d.kind {
        DynamicKind::Pairs(e, place) => (
            place,
            quote::quote_spanned!(syn::spanned::Spanned::span(e)=> ::piceli::__private::pairs(#e)),
        ),
        DynamicKind::Strings(e, place) => (
            place,
            quote::quote_spanned!(syn::spanned::Spanned::span(e)=> ::piceli::__private::strings(#e)),
        ),
        _ => return None,
    };
    let at = d.at.0;
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
pub fn fallback(errors: Vec<syn::Error>, name: Option<String>) -> TokenStream {
    let errors = errors.into_iter().map(|e| e.to_compile_error());
    let module = name.map(|n| {
        let module = module_ident(&n);
        quote! {
            #[allow(dead_code, unreachable_code)]
            pub mod #module {
                pub fn app() -> ::piceli::__private::App { ::core::unreachable!() }
                pub fn main() -> ::std::process::ExitCode { ::core::unreachable!() }
                pub fn webhooks() -> ::piceli::webhook::Webhooks { ::core::unreachable!() }
                pub fn controllers() -> ::piceli::controller::Controllers { ::core::unreachable!() }
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
    syn::parse_str::<syn::Ident>(&cleaned)
        .unwrap_or_else(|_| format_ident!("r#{}", cleaned, span = Span::call_site()))
}

#[cfg(test)]
mod tests {
    use super::raw_str;

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
