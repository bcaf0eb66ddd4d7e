//! Pass 3 for webhooks: `webhooks()`, the app's handlers registered on `piceli::webhook::Webhooks`, each
//! typed by its resource's k8s-openapi type or the app's `custom_resource` type, or by kube's
//! `DynamicObject` for a generic webhook (on a list of resources or a wildcard). Every handler is
//! registered at its own span, so a handler of the wrong shape or for another resource is reported at
//! its path (PCL0065); a custom resource's name that is not its type's CRD name fails the build there
//! (PCL0178).

use super::crd_name;
use crate::valid::WebhookCode;
use piceli_core::model::WebhookKind;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The body of `webhooks()`.
pub fn webhooks(hooks: &[WebhookCode]) -> TokenStream {
    let registrations = hooks.iter().filter_map(|h| {
        // Validation accepted the resource, so it resolves: to the app's custom resource type, or to a
        // 1.33 resource's k8s-openapi type.
        let ty: syn::Path = match &h.object {
            _ if h.generic => syn::parse_quote!(::piceli::kube::core::DynamicObject),
            Some(path) => path.clone(),
            None => {
                let resource = piceli_core::resources::lookup(&h.resource)?;
                syn::parse_str(&format!("::piceli::k8s_openapi::api::{}", resource.rust_type))
                    .ok()?
            }
        };
        let name = &h.name;
        let timeout = h.timeout_seconds as u64;
        let ignore = h.ignore_failures;
        let options = quote!(::piceli::__private::webhook_options(#timeout, #ignore));
        Some(match h.kind {
            WebhookKind::Validate => {
                let handler = h.handlers.first()?;
                let call = quote_spanned!(handler.span()=>
                    ::piceli::__private::validator::<#ty, _>(#handler)
                );
                quote!(let hooks = hooks.validate_with(#name, #options, #call);)
            }
            WebhookKind::Mutate => {
                let mutators = h.handlers.iter().map(|p| {
                    quote_spanned!(p.span()=> ::piceli::__private::mutator::<#ty, _>(#p))
                });
                quote!(let hooks = hooks.mutate_all_with(#name, #options, ::std::vec![#(#mutators),*]);)
            }
        })
    });
    let checks = hooks.iter().flat_map(|h| {
        h.custom_names.iter().map(move |(object, written, sp)| {
            let before = format!(
                "PCL0178: {} {} is on `{written}`, which is not the CRD name of `{}`\n\nhelp: write the name its `#[piceli::custom_resource]` defines: `",
                h.kind.keyword(),
                h.name,
                crd_name::kind(object)
            );
            crd_name::check(object, written, *sp, &before)
        })
    });
    quote! {
        #(#checks)*
        let hooks = ::piceli::webhook::Webhooks::new();
        #(#registrations)*
        hooks
    }
}
