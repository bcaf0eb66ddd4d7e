//! Pass 1 for the operator's own items: the tail of `controller NAME on RESOURCE [(finalizer[: "NAME"])] [{
//! OPTIONS }] => HANDLER;` and the type of `custom_resource path::Type;`.

use super::{Map, NameTok, parse_key, parse_name};
use syn::parse::{Parse, ParseStream};
use syn::{Token, parenthesized};

/// What follows the keyword of a `controller` or `custom_resource` item.
pub enum Tail {
    /// `controller NAME on …`.
    Controller(ControllerTail),
    /// `custom_resource path::Type`.
    CustomResource(syn::Path),
}

/// `on RESOURCE [(FLAGS)] [{ OPTIONS }] => HANDLER`.
pub struct ControllerTail {
    /// `lamps.example.com`, `configmaps`.
    pub resource: NameTok,
    /// `(finalizer)`, `(finalizer: "example.com/cleanup")`: each flag with its value.
    pub flags: Vec<(NameTok, Option<syn::LitStr>)>,
    /// `{ labels: …, namespaces: …, every: …, writes: … }`.
    pub options: Option<Map>,
    /// The handler: a function or a type implementing `Controller<K>`.
    pub handler: syn::Path,
}

/// Parses the tail of a `controller` (after its name) or a `custom_resource` (after its keyword).
pub fn parse(keyword: &str, input: ParseStream) -> syn::Result<Option<Tail>> {
    match keyword {
        "custom_resource" => {
            let path = syn::Path::parse_mod_style(input).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected the custom resource's Rust type, like `custom_resource crate::Lamp;`",
                )
            })?;
            Ok(Some(Tail::CustomResource(path)))
        }
        "controller" if crate::ast::webhook::peek(input) => {
            Ok(Some(Tail::Controller(input.parse()?)))
        }
        _ => Ok(None),
    }
}

impl Parse for ControllerTail {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<crate::ast::webhook::on>()?;
        let resource = parse_key(input).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected the resource after `on` (like `configmaps` or `lamps.example.com`)",
            )
        })?;
        let mut flags = Vec::new();
        if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            while !content.is_empty() {
                let flag = parse_name(&content)?;
                let value = if content.peek(Token![:]) {
                    content.parse::<Token![:]>()?;
                    Some(content.parse::<syn::LitStr>().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            format!("expected a string after `{}:`, like `(finalizer: \"example.com/cleanup\")`", flag.text),
                        )
                    })?)
                } else {
                    None
                };
                flags.push((flag, value));
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
        }
        let options = if input.peek(syn::token::Brace) {
            Some(input.parse::<Map>()?)
        } else {
            None
        };
        input.parse::<Token![=>]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `=>` and the handler, like `=> ops::reconcile_lamp`",
            )
        })?;
        let handler = syn::Path::parse_mod_style(input)?;
        Ok(ControllerTail {
            resource,
            flags,
            options,
            handler,
        })
    }
}
