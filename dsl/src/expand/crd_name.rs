//! The compile-time comparison of a custom resource's name as written (`lamps.example.com`) with the CRD
//! name its `#[piceli::custom_resource]` type defines: a constant that panics, so a wrong name fails the
//! build at the name (PCL0175 for a controller, PCL0178 for a webhook). A type from kube's plain derive
//! says nothing at compile time; `render` and `serve` compare it then.

use crate::ast::Sp;
use proc_macro2::TokenStream;
use quote::quote_spanned;

/// The check of `written` (at `sp`) against the CRD name of `object`. `before` is the message up to the
/// name the type defines (`"PCL0175: controller gen is on …"`), which is followed by it and a backtick.
pub fn check(object: &syn::Path, written: &str, sp: Sp, before: &str) -> TokenStream {
    quote_spanned! {sp.start=>
        const _: () = {
            #[allow(unused_imports)]
            use ::piceli::__private::UnknownCrdName as _;
            let (buf, n) = ::piceli::__private::crd_name_mismatch(
                <#object>::__PICELI_CRD_NAME, #written, #before, "`",
            );
            if n > 0 {
                let (text, _) = buf.split_at(n);
                if let ::core::result::Result::Ok(text) = ::core::str::from_utf8(text) {
                    ::core::panic!("{}", text);
                }
            }
        };
    }
}

/// The type's name, for messages: `ConfigMapGenerator` for `crate::ops::ConfigMapGenerator`.
pub fn kind(object: &syn::Path) -> String {
    object
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}
