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
    // A custom resource's name is compared with the CRD name its type defines, when the type says it at
    // compile time (`#[piceli::custom_resource]`): the build fails at the name (PCL0175), not `render`.
    let checks = code.iter().filter_map(|c| {
        let (written, sp) = c.custom_name.as_ref()?;
        let object = &c.object;
        let kind = object.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let before = format!(
            "PCL0175: controller {} is on `{written}`, which is not the CRD name of `{kind}`\n\nhelp: write the name its `#[piceli::custom_resource]` defines: `",
            c.name
        );
        Some(quote_spanned! {sp.start=>
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
        })
    });
    quote! {
        #(#checks)*
        let app = app();
        let c = ::piceli::controller::Controllers::new(&app.name.v);
        #(#registrations)*
        c
    }
}
