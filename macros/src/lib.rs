//! piceli-macros: the `app!` and `fragment!` macros and the `custom_resource` and `schema` attributes, a thin shim over `piceli-dsl`, which parses, checks
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

/// A custom resource's spec struct: `#[piceli::custom_resource(group = "example.com", version = "v1",
/// kind = "Lamp", namespaced, status = "LampStatus")]` derives kube's `CustomResource` (the arguments are
/// its `#[kube(…)]`), `Serialize`, `Deserialize`, `Clone`, `Debug` and `JsonSchema` through the crates
/// `piceli` re-exports, and gives the kind its CRD name, which `app!` checks at compile time.
#[proc_macro_attribute]
pub fn custom_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    piceli_dsl::custom_resource(attr.into(), item.into()).into()
}

/// A type a custom resource holds (its status, its fields' types): `Serialize`, `Deserialize`, `Clone`,
/// `Debug` and `JsonSchema` through the crates `piceli` re-exports.
#[proc_macro_attribute]
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    piceli_dsl::schema(attr.into(), item.into()).into()
}
