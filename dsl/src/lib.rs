//! piceli-dsl: the `app!` DSL as a normal library, so its parsing and checks are unit-tested with
//! `syn::parse_str` and no compiler run. Three passes, three types: [`ast`] parses the input into a generic
//! tree, [`valid`] turns it into the checked app model (collecting every problem, each spanned at the
//! narrowest token, with a code and a `help:`), and [`expand`] emits a small module that calls into the
//! runtime. The proc-macro crate `piceli-macros` is a shim that hands its tokens to [`app`] and
//! [`fragment`]; users write `piceli::app! { … }`.

// The compiler's own spans give "declared first on line N"; outside a macro (unit tests) there are none.
extern crate proc_macro;

mod ast;
mod custom_resource;
mod expand;
mod fragment_paths;
mod fragments;
mod valid;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_controllers;
#[cfg(test)]
mod tests_resources;
#[cfg(test)]
mod tests_routes;
#[cfg(test)]
mod tests_selectors;
#[cfg(test)]
mod tests_spans;
#[cfg(test)]
mod tests_webhooks;

use proc_macro2::TokenStream;

/// `app! { … }`: resolve the fragments the input uses, parse, check, and expand into the app's module —
/// or, when something is wrong, every error at its token plus a fallback module so rustc adds none.
pub fn app(input: TokenStream) -> TokenStream {
    let input = match fragments::prepare(input) {
        fragments::Prepared::Ready(tokens) => tokens,
        fragments::Prepared::Fetch(call) => return call,
        fragments::Prepared::Error(e) => return e.to_compile_error(),
    };
    let parsed = match syn::parse2::<ast::Input>(input) {
        Ok(parsed) => parsed,
        Err(e) => return syntax_error(e),
    };
    let operator = cfg!(feature = "operator");
    match valid::check(parsed, operator) {
        Ok(checked) => expand::expand(checked, operator),
        Err((errors, name)) => expand::fallback(errors, name, operator),
    }
}

/// `fragment! { [pub] NAME { … } }`: a fragment that apps splice with `use NAME`, checked in every app that
/// uses it, with errors pointing into the fragment.
pub fn fragment(input: TokenStream) -> TokenStream {
    fragments::define(input)
}

/// `#[piceli::custom_resource(group = "…", version = "…", kind = "…", …)]` on a spec struct: kube's
/// `CustomResource` derive and serde's and schemars', through `piceli`'s re-exports, and the kind's CRD
/// name as a constant `app!` checks.
pub fn custom_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    custom_resource::custom_resource(attr, item)
}

/// `#[piceli::schema]`: serde's and schemars' derives (and Clone, Debug) through `piceli`'s re-exports.
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    custom_resource::schema(attr, item)
}

/// A parse error with its code and a pointer to the grammar.
fn syntax_error(e: syn::Error) -> TokenStream {
    let code = piceli_core::Code::Syntax;
    e.into_iter()
        .map(|e| {
            let message = format!(
                "{code}: {e}\n\nhelp: see the grammar in docs/dsl.md (items look like `deployment web {{ image: \"…\" }}`)"
            );
            syn::Error::new(e.span(), message).to_compile_error()
        })
        .collect()
}
