//! Pass 3 for controllers: `controllers()`, the app's handlers registered on
//! `piceli::controller::Controllers`, each typed by its resource (a k8s-openapi type or the app's
//! `custom_resource` type) and registered at its handler's span, so a handler of the wrong shape or for
//! another object type is reported at its path (PCL0069).

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
        quote!(let c = #register(c, &app, #name, #handler);)
    });
    quote! {
        let app = app();
        let c = ::piceli::controller::Controllers::new(&app.name.v);
        #(#registrations)*
        c
    }
}
