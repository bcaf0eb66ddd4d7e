//! Pass 1 for webhook items: the tail of `validate NAME on RESOURCES (OPS) [{ OPTIONS }] => HANDLER;`,
//! where RESOURCES is one resource or a list of them (`[configmaps, secrets, "*.example.com"]`) and
//! HANDLER a Rust path or a list of them (`[policy::add_team, policy::add_tier]`).

use super::{Map, NameTok, Sp, parse_key, parse_name};
use syn::parse::{Parse, ParseStream};
use syn::{Token, bracketed, parenthesized};

syn::custom_keyword!(on);

/// Whether a webhook tail (`on …`) follows.
pub fn peek(input: ParseStream) -> bool {
    input.peek(on)
}

/// `on RESOURCES (OPS) [{ OPTIONS }] => HANDLERS`.
pub struct WebhookTail {
    /// `deployments.apps`, `pods`, `"*.example.com"`: one, or those of a list.
    pub resources: Vec<NameTok>,
    /// Written as a list `[configmaps, secrets]`, with its brackets.
    pub resource_list: Option<Sp>,
    /// `CREATE`, `UPDATE`, `*`, each with its token.
    pub operations: Vec<NameTok>,
    /// The parentheses around the operations.
    pub operations_sp: Sp,
    /// `{ failure: ignore, timeout: 5, namespaces: { … } }`.
    pub options: Option<Map>,
    /// The handlers, in order.
    pub handlers: Vec<syn::Path>,
    /// Written as a list `[a, b]` (a composite), with its brackets.
    pub list: Option<Sp>,
}

impl Parse for WebhookTail {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        input.parse::<on>()?;
        let expected = |e: syn::Error| {
            syn::Error::new(
                e.span(),
                "expected the resource after `on` (like `pods`, `deployments.apps` or a list `[configmaps, secrets]`)",
            )
        };
        let (resources, resource_list) = if input.peek(syn::token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let mut resources = Vec::new();
            while !content.is_empty() {
                resources.push(parse_key(&content).map_err(expected)?);
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            (resources, Some(Sp::one(bracket.span.join())))
        } else {
            (vec![parse_key(input).map_err(expected)?], None)
        };
        if !input.peek(syn::token::Paren) {
            return Err(input.error(
                "expected the operations in parentheses after the resource, like `(CREATE, UPDATE)`",
            ));
        }
        let content;
        let paren = parenthesized!(content in input);
        let mut operations = Vec::new();
        while !content.is_empty() {
            if content.peek(Token![*]) {
                let star: Token![*] = content.parse()?;
                let sp = Sp::one(star.span);
                operations.push(NameTok {
                    text: "*".into(),
                    sp,
                    parts: vec![sp],
                });
            } else {
                operations.push(parse_name(&content)?);
            }
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        let options = if input.peek(syn::token::Brace) {
            Some(input.parse::<Map>()?)
        } else {
            None
        };
        input.parse::<Token![=>]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `=>` and the handler, like `=> policy::no_latest_tag`",
            )
        })?;
        let (handlers, list) = if input.peek(syn::token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let paths = content.parse_terminated(syn::Path::parse_mod_style, Token![,])?;
            (
                paths.into_iter().collect(),
                Some(Sp::one(bracket.span.join())),
            )
        } else {
            (vec![syn::Path::parse_mod_style(input)?], None)
        };
        Ok(WebhookTail {
            resources,
            resource_list,
            operations,
            operations_sp: Sp::one(paren.span.join()),
            options,
            handlers,
            list,
        })
    }
}
