//! piceli-macros: the `app!` macro. Three passes, three types:
//! [`ast`] parses the input into a generic tree, [`valid`] turns it into the checked app model (collecting
//! every problem, each spanned at the narrowest token, with a code and a `help:`), and [`expand`] emits a
//! small module that calls into the runtime. Use it through the `piceli` crate: `piceli::app! { … }`.

mod ast;
mod expand;
mod fragments;
mod valid;
mod webhook_ast;
mod webhook_expand;

use proc_macro::TokenStream;

#[doc = include_str!("app_doc.md")]
#[proc_macro]
pub fn app(input: TokenStream) -> TokenStream {
    let input = match fragments::prepare(input.into()) {
        fragments::Prepared::Ready(tokens) => tokens,
        fragments::Prepared::Fetch(call) => return call.into(),
        fragments::Prepared::Error(e) => return e.to_compile_error().into(),
    };
    let parsed = match syn::parse2::<ast::Input>(input) {
        Ok(parsed) => parsed,
        Err(e) => return syntax_error(e).into(),
    };
    match valid::check(parsed) {
        Ok(checked) => expand::expand(checked).into(),
        Err((errors, name)) => expand::fallback(errors, name).into(),
    }
}

/// Declares a fragment that apps splice with `use NAME`: `piceli::fragment! { [pub] NAME { … } }`. The
/// tokens are checked in every app that uses them, with errors pointing into the fragment.
#[proc_macro]
pub fn fragment(input: TokenStream) -> TokenStream {
    fragments::define(input.into()).into()
}

/// A parse error with its code and a pointer to the grammar.
fn syntax_error(e: syn::Error) -> proc_macro2::TokenStream {
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
