//! Pass 3 for controllers: `controllers()`, the app's handlers registered on
//! `piceli::controller::Controllers`, each typed by its resource (a k8s-openapi type or the app's
//! `custom_resource` type) and registered at its handler's span, so a handler of the wrong shape or for
//! another object type is reported at its path (PCL0069).

use super::crd_name;
use crate::valid::ControllerCode;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// The body of `controllers()`.
pub fn controllers(code: &[ControllerCode]) -> TokenStream {
    let registrations = code.iter().map(|c| {
        let (object, handler, name) = (&c.object, &c.handler, &c.name);
        let register = if c.finalizer {
            quote_spanned!(handler.span()=> ::piceli::__private::finalizing_controller::<#object, _, _>)
        } else {
            quote_spanned!(handler.span()=> ::piceli::__private::controller::<#object, _, _>)
        };
        // The app's functions of the declaration, each registered at its path, so one of the wrong
        // shape is reported there (PCL0075, PCL0076).
        let trigger = c.reconcile_all_on.as_ref().map(|f| {
            quote_spanned!(f.span()=> let o = ::piceli::__private::reconcile_all_on(o, #f);)
        });
        let backoff = c.backoff_fn.as_ref().map(|f| {
            quote_spanned!(f.span()=> let o = ::piceli::__private::backoff_fn(o, #f);)
        });
        quote! {
            let o = ::piceli::__private::controller_options(&app, #name);
            #trigger
            #backoff
            let c = #register(c, o, #name, #handler);
        }
    });
    // A custom resource's name is compared with the CRD name its type defines, when the type says it at
    // compile time (`#[piceli::custom_resource]`): the build fails at the name (PCL0175), not `render`.
    let checks = code.iter().filter_map(|c| {
        let (written, sp) = c.custom_name.as_ref()?;
        let before = format!(
            "PCL0175: controller {} is on `{written}`, which is not the CRD name of `{}`\n\nhelp: write the name its `#[piceli::custom_resource]` defines: `",
            c.name,
            crd_name::kind(&c.object)
        );
        Some(crd_name::check(&c.object, written, *sp, &before))
    });
    quote! {
        #(#checks)*
        let app = app();
        let c = ::piceli::controller::Controllers::new(&app.name.v);
        #(#registrations)*
        c
    }
}
