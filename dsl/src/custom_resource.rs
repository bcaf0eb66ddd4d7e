//! `#[piceli::custom_resource(group = "…", version = "…", kind = "…", …)]` on a custom resource's spec
//! struct, and `#[piceli::schema]` on the types it holds: kube's `CustomResource` derive (with the
//! arguments as its `#[kube(…)]`), serde's and schemars' derives, all through the crates `piceli`
//! re-exports, so an operator crate depends on `piceli` alone. The kind also gets its CRD name as a
//! constant, which `app!` compares at compile time with the name a controller is declared on (PCL0175).

use piceli_core::Code;
use piceli_core::model::default_plurals;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, Meta, Token};

/// The derives of a type the custom resource holds (its spec, its status and their fields' types).
fn derives() -> TokenStream {
    quote! {
        #[derive(
            ::piceli::serde::Serialize,
            ::piceli::serde::Deserialize,
            ::core::clone::Clone,
            ::core::fmt::Debug,
            ::piceli::schemars::JsonSchema,
        )]
        #[serde(crate = "::piceli::serde")]
        #[schemars(crate = "::piceli::schemars")]
    }
}

/// `#[piceli::schema]`: Serialize, Deserialize, Clone, Debug and JsonSchema through piceli's re-exports.
pub fn schema(attr: TokenStream, item: TokenStream) -> TokenStream {
    if let Some(tt) = attr.into_iter().next() {
        return error(
            tt.span(),
            "`#[piceli::schema]` takes no arguments",
            "write `#[piceli::schema]` on the struct or enum",
        );
    }
    let derives = derives();
    quote!(#derives #item)
}

/// `#[piceli::custom_resource(…)]` on the spec struct.
pub fn custom_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr.clone()) {
        Ok(args) => args,
        Err(e) => {
            return error(
                e.span(),
                &e.to_string(),
                "write `#[piceli::custom_resource(group = \"example.com\", version = \"v1\", kind = \"Lamp\", namespaced)]`",
            );
        }
    };
    let text = |name: &str| {
        args.iter().find_map(|m| match m {
            Meta::NameValue(nv) if nv.path.is_ident(name) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
    };
    let (Some(group), Some(kind), Some(_)) = (text("group"), text("kind"), text("version")) else {
        return error(
            Span::call_site(),
            "`#[piceli::custom_resource]` needs the kind's `group`, `version` and `kind`",
            "write `#[piceli::custom_resource(group = \"example.com\", version = \"v1\", kind = \"Lamp\", namespaced)]`",
        );
    };
    let plural = text("plural").unwrap_or_else(|| default_plurals(&kind)[0].clone());
    let crd_name = format!("{plural}.{group}");
    let root = format_ident!("{}", text("root").unwrap_or(kind));
    let has_crates = args.iter().any(|m| m.path().is_ident("crates"));
    let crates = (!has_crates).then(|| {
        quote! {
            , crates(
                kube = "::piceli::kube",
                kube_core = "::piceli::kube::core",
                k8s_openapi = "::piceli::k8s_openapi",
                schemars = "::piceli::schemars",
                serde = "::piceli::serde",
                serde_json = "::piceli::serde_json",
            )
        }
    });
    let derives = derives();
    quote! {
        #[derive(::piceli::kube::CustomResource)]
        #derives
        #[kube(#attr #crates)]
        #item

        impl #root {
            /// The name of the kind's CustomResourceDefinition (`PLURAL.GROUP`), known at compile time.
            #[doc(hidden)]
            pub const __PICELI_CRD_NAME: &'static str = #crd_name;
        }
    }
}

fn error(span: Span, message: &str, help: &str) -> TokenStream {
    let code = Code::CustomResourceType;
    syn::Error::new(span, format!("{code}: {message}\n\nhelp: {help}")).to_compile_error()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_gets_its_crd_name_and_the_derives_go_through_piceli() {
        let out = custom_resource(
            quote!(
                group = "example.com",
                version = "v1",
                kind = "Policy",
                namespaced
            ),
            quote!(
                pub struct PolicySpec {
                    pub x: String,
                }
            ),
        )
        .to_string();
        assert!(out.contains("\"policies.example.com\""), "{out}");
        assert!(out.contains("impl Policy"), "{out}");
        assert!(
            out.contains("kube_core = \"::piceli::kube::core\""),
            "{out}"
        );
        let named = custom_resource(
            quote!(
                group = "example.com",
                version = "v1",
                kind = "Lamp",
                plural = "lampen"
            ),
            quote!(
                pub struct LampSpec {}
            ),
        )
        .to_string();
        assert!(named.contains("\"lampen.example.com\""), "{named}");
        let missing = custom_resource(
            quote!(version = "v1"),
            quote!(
                pub struct S {}
            ),
        )
        .to_string();
        assert!(missing.contains("PCL0072"), "{missing}");
    }
}
