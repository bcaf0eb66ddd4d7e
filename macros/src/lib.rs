//! piceli-macros: the `app!` and `fragment!` macros, a thin shim over `piceli-dsl`, which parses, checks
//! and expands them (and is unit-tested as a normal library). Use it through the `piceli` crate:
//! `piceli::app! { … }`.

use proc_macro::TokenStream;

#[doc = include_str!("app_doc.md")]
#[proc_macro]
pub fn app(input: TokenStream) -> TokenStream {
    piceli_dsl::app(input.into()).into()
}

/// Declares a fragment that apps splice with `use NAME`: `piceli::fragment! { [pub] NAME { … } }`. The
/// tokens are checked in every app that uses them, with errors pointing into the fragment.
#[proc_macro]
pub fn fragment(input: TokenStream) -> TokenStream {
    piceli_dsl::fragment(input.into()).into()
}
