//! Pass 1, parse: the `app!` input as a generic tree of items and values, with the spans of every token.
//!
//! This pass knows the grammar, not the meaning: `deployment web { replicas: 2 }` is an item with a
//! keyword, a name and a map. Pass 2 ([`crate::valid`]) gives it meaning.

pub mod controller;
pub mod webhook;

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitBool, LitInt, LitStr, Token, braced, bracketed, parenthesized};

/// The start and end of some tokens, for errors that underline all of them.
#[derive(Clone, Copy)]
pub struct Sp {
    /// First token.
    pub start: Span,
    /// Last token.
    pub end: Span,
}

impl Sp {
    /// One token.
    pub fn one(span: Span) -> Self {
        Sp {
            start: span,
            end: span,
        }
    }
    /// From the start of `self` to the end of `other`.
    pub fn to(self, other: Sp) -> Self {
        Sp {
            start: self.start,
            end: other.end,
        }
    }
    /// The line these tokens start on, when the compiler runs the macro (unit tests have no lines).
    pub fn line(self) -> Option<usize> {
        proc_macro::is_available().then(|| self.start.unwrap().line())
    }
    /// An error underlining these tokens.
    pub fn error(self, message: impl std::fmt::Display) -> syn::Error {
        let mut tokens = TokenStream::new();
        tokens.extend([
            TokenTree::Ident(Ident::new("start", self.start)),
            TokenTree::Ident(Ident::new("end", self.end)),
        ]);
        syn::Error::new_spanned(tokens, message)
    }
}

/// A name as written: `web`, `web-api`, `redis-0`, or `"web.v2"`.
#[derive(Clone)]
pub struct NameTok {
    /// The text.
    pub text: String,
    /// Where.
    pub sp: Sp,
    /// Where each dot-separated part is (`web.replicas` has two), for errors about one part.
    pub parts: Vec<Sp>,
}

/// The whole input: items in order.
pub struct Input {
    /// The items.
    pub items: Vec<Item>,
}

/// One item: `KEYWORD [NAME | CALL] [-> NAME] [= VALUE] [{ MAP }] [;]`.
pub struct Item {
    /// `deployment`, `service`, `target`, `check`, …
    pub keyword: NameTok,
    /// The kind word of `external KIND NAME;` (`secret`, `config_map`, …), or the kind of a
    /// `resource KIND NAME { … }` (`gateway.networking.k8s.io/v1/HTTPRoute`).
    pub qualifier: Option<NameTok>,
    /// The declared name.
    pub name: Option<NameTok>,
    /// A call right after the keyword (`check http(…)`, `include yaml(…)`).
    pub call: Option<Value>,
    /// `-> NAME`: what a Service selects, what a policy applies to.
    pub arrow: Option<NameTok>,
    /// `= VALUE`: a target's cluster, a named check.
    pub eq: Option<Value>,
    /// `{ … }`: the body.
    pub body: Option<Value>,
    /// `on RESOURCE (OPS) … => HANDLER` of a `validate`/`mutate` item.
    pub webhook: Option<crate::ast::webhook::WebhookTail>,
    /// `on RESOURCE … => HANDLER` of a `controller`, or the type of a `custom_resource`.
    pub tail: Option<controller::Tail>,
}

/// A value.
#[derive(Clone)]
pub enum Value {
    /// `"text"`.
    Str(LitStr),
    /// `42`, `-1`.
    Int(i64, Sp),
    /// `0.5`.
    Float(f64, Sp),
    /// `true`.
    Bool(bool, Sp),
    /// `web`, `api.key`, `settings.MODE`: a reference to something declared.
    Path(Vec<NameTok>),
    /// `checks::orders` — a Rust path (for `code(...)` checks).
    RustPath(syn::Path),
    /// `http_get("/", port: http)`.
    Call(Call),
    /// `{ key: value, … }`.
    Map(Map),
    /// `[a, b]`.
    List(Vec<Value>, Sp),
    /// `80 => http`.
    Arrow(Box<Value>, Box<Value>),
    /// `(any Rust expression)`, evaluated at run time.
    Expr(syn::Expr, Sp),
    /// `(service api)`: the labels that select an item of the app (in a `resource` block's label
    /// selector); two names in parentheses, which no Rust expression is.
    Select(Box<Select>),
}

/// `(KIND NAME)`: a selector of the app's item `NAME` of `KIND`.
#[derive(Clone)]
pub struct Select {
    /// `service`.
    pub kind: NameTok,
    /// `api`.
    pub name: NameTok,
    /// The parentheses.
    pub sp: Sp,
}

/// A call: `name(positional, …, key: value, …)`.
#[derive(Clone)]
pub struct Call {
    /// The function name.
    pub name: NameTok,
    /// Positional arguments.
    pub args: Vec<Value>,
    /// Named arguments.
    pub named: Vec<(NameTok, Value)>,
    /// The whole call.
    pub sp: Sp,
}

/// A map: `{ key: value, … }`; keys may be dotted (`web.replicas`) or strings (`"app.conf"`).
#[derive(Clone)]
pub struct Map {
    /// Entries in order.
    pub entries: Vec<(NameTok, Value)>,
    /// The braces.
    pub sp: Sp,
}

impl Value {
    /// Where the value was written.
    pub fn sp(&self) -> Sp {
        match self {
            Value::Str(s) => Sp::one(s.span()),
            Value::Int(_, sp)
            | Value::Float(_, sp)
            | Value::Bool(_, sp)
            | Value::List(_, sp)
            | Value::Expr(_, sp) => *sp,
            Value::Path(parts) => match (parts.first(), parts.last()) {
                (Some(a), Some(b)) => a.sp.to(b.sp),
                _ => Sp::one(Span::call_site()),
            },
            Value::RustPath(p) => {
                let first = p
                    .segments
                    .first()
                    .map(|s| s.ident.span())
                    .unwrap_or_else(Span::call_site);
                let last = p.segments.last().map(|s| s.ident.span()).unwrap_or(first);
                Sp {
                    start: first,
                    end: last,
                }
            }
            Value::Call(c) => c.sp,
            Value::Select(s) => s.sp,
            Value::Map(m) => m.sp,
            Value::Arrow(a, b) => a.sp().to(b.sp()),
        }
    }

    /// What kind of value this is, for "expected …, found …" messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(..) => "a number",
            Value::Float(..) => "a decimal number",
            Value::Bool(..) => "a boolean",
            Value::Path(_) => "a name",
            Value::RustPath(_) => "a Rust path",
            Value::Call(_) => "a call",
            Value::Map(_) => "a map",
            Value::List(..) => "a list",
            Value::Arrow(..) => "a mapping `a => b`",
            Value::Expr(..) => "a Rust expression",
            Value::Select(_) => "a selector `(KIND NAME)`",
        }
    }
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut items = Vec::new();
        while !input.is_empty() {
            items.push(input.parse()?);
        }
        Ok(Input { items })
    }
}

/// `///` doc comments before an item or a key (`#[doc = "…"]` to the parser): they document the app for
/// its readers and are dropped. Any other attribute is an error, since nothing inside `app!` reads one.
fn skip_doc_comments(input: ParseStream) -> syn::Result<()> {
    for attr in input.call(syn::Attribute::parse_outer)? {
        if !attr.path().is_ident("doc") {
            return Err(syn::Error::new_spanned(
                attr.path(),
                "only `///` doc comments may stand before an item or a key in `app!`",
            ));
        }
    }
    Ok(())
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        skip_doc_comments(input)?;
        let keyword = parse_name(input)?;
        let mut item = Item {
            keyword,
            qualifier: None,
            name: None,
            call: None,
            arrow: None,
            eq: None,
            body: None,
            webhook: None,
            tail: None,
        };
        if item.keyword.text == "external"
            && input.peek(Ident::peek_any)
            && (input.peek2(Ident::peek_any) || input.peek2(LitStr))
        {
            item.qualifier = Some(parse_name(input)?);
        }
        if item.keyword.text == "custom_resource" {
            item.tail = controller::parse("custom_resource", input)?;
        } else if item.keyword.text == "resource" && input.peek(Ident::peek_any) {
            // `resource gateway.networking.k8s.io/v1/HTTPRoute web` or `resource HTTPRoute web`.
            item.qualifier = Some(parse_kind(input)?);
            if input.peek(Ident::peek_any) || input.peek(LitStr) {
                item.name = Some(parse_name(input)?);
            }
        } else if (input.peek(Ident::peek_any) && input.peek2(syn::token::Paren))
            && !input.peek2(Token![-])
        {
            item.call = Some(input.parse()?);
        } else if input.peek(Ident::peek_any) || input.peek(LitStr) {
            item.name = Some(parse_name(input)?);
        }
        if matches!(item.keyword.text.as_str(), "validate" | "mutate")
            && crate::ast::webhook::peek(input)
        {
            item.webhook = Some(input.parse()?);
        }
        if item.keyword.text == "controller" {
            item.tail = controller::parse("controller", input)?;
        }
        if input.peek(Token![->]) {
            input.parse::<Token![->]>()?;
            item.arrow = Some(parse_name(input)?);
        }
        if input.peek(Token![=]) && !input.peek(Token![=>]) {
            input.parse::<Token![=]>()?;
            item.eq = Some(parse_primary(input)?);
        }
        if input.peek(syn::token::Brace) {
            item.body = Some(Value::Map(input.parse()?));
        }
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        } else if item.body.is_none() && !input.is_empty() {
            return Err(input.error("expected `;` or `{ … }` after this item"));
        }
        Ok(item)
    }
}

/// `web`, `web-api`, `redis-0`, `"a.b"`; keywords are allowed as names (`type`).
pub fn parse_name(input: ParseStream) -> syn::Result<NameTok> {
    if let Some(syn::Lit::Str(s)) = take_literal(input, |l| matches!(l, syn::Lit::Str(_))) {
        let sp = Sp::one(s.span());
        return Ok(NameTok {
            text: s.value(),
            sp,
            parts: vec![sp],
        });
    }
    let first = Ident::parse_any(input)
        .map_err(|e| syn::Error::new(e.span(), "expected a name (like `web` or `web-api`)"))?;
    let mut text = first.to_string();
    let mut sp = Sp::one(first.span());
    while input.peek(Token![-])
        && !input.peek(Token![->])
        && (input.peek2(Ident::peek_any) || input.peek2(LitInt))
    {
        input.parse::<Token![-]>()?;
        text.push('-');
        if input.peek(LitInt) {
            let n: LitInt = input.parse()?;
            text.push_str(&n.to_string());
            sp = sp.to(Sp::one(n.span()));
        } else {
            let part = Ident::parse_any(input)?;
            text.push_str(&part.to_string());
            sp = sp.to(Sp::one(part.span()));
        }
    }
    Ok(NameTok {
        text,
        sp,
        parts: vec![sp],
    })
}

/// A custom resource kind: `Kind`, or `group/version/Kind` (the group dotted, its parts possibly with
/// dashes: `cert-manager.io/v1/Certificate`).
fn parse_kind(input: ParseStream) -> syn::Result<NameTok> {
    let mut kind = parse_name(input)?;
    while input.peek(Token![.]) || input.peek(Token![/]) {
        if input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            kind.text.push('.');
        } else {
            input.parse::<Token![/]>()?;
            kind.text.push('/');
        }
        let next = parse_name(input)?;
        kind.text.push_str(&next.text);
        kind.sp = kind.sp.to(next.sp);
    }
    kind.parts = vec![kind.sp];
    Ok(kind)
}

/// A map key: a name, dotted names (`web.replicas`, `env.MODE`), or a string.
pub fn parse_key(input: ParseStream) -> syn::Result<NameTok> {
    let mut key = parse_name(input)?;
    while input.peek(Token![.]) {
        input.parse::<Token![.]>()?;
        let next = parse_name(input)?;
        key.text.push('.');
        key.text.push_str(&next.text);
        key.sp = key.sp.to(next.sp);
        key.parts.push(next.sp);
    }
    Ok(key)
}

impl Parse for Map {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let content;
        let brace = braced!(content in input);
        let mut entries = Vec::new();
        while !content.is_empty() {
            skip_doc_comments(&content)?;
            let key = parse_key(&content)?;
            content.parse::<Token![:]>().map_err(|e| {
                syn::Error::new(e.span(), format!("expected `:` after `{}`", key.text))
            })?;
            let value = parse_value(&content)?;
            entries.push((key, value));
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        let span = brace.span.join();
        Ok(Map {
            entries,
            sp: Sp::one(span),
        })
    }
}

impl Parse for Value {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        parse_value(input)
    }
}

/// A value, possibly `a => b`.
pub fn parse_value(input: ParseStream) -> syn::Result<Value> {
    let left = parse_primary(input)?;
    if input.peek(Token![=>]) {
        input.parse::<Token![=>]>()?;
        let right = parse_primary(input)?;
        return Ok(Value::Arrow(Box::new(left), Box::new(right)));
    }
    // `api:http`, the same as `api => http`: after a value a colon is no other syntax.
    if matches!(&left, Value::Path(parts) if parts.len() == 1)
        && input.peek(Token![:])
        && !input.peek(Token![::])
    {
        input.parse::<Token![:]>()?;
        let right = parse_primary(input)?;
        return Ok(Value::Arrow(Box::new(left), Box::new(right)));
    }
    Ok(left)
}

fn parse_primary(input: ParseStream) -> syn::Result<Value> {
    match take_literal(input, |l| {
        matches!(l, syn::Lit::Str(_) | syn::Lit::Int(_) | syn::Lit::Float(_))
    }) {
        Some(syn::Lit::Str(s)) => return Ok(Value::Str(s)),
        Some(syn::Lit::Int(lit)) => {
            return Ok(Value::Int(lit.base10_parse()?, Sp::one(lit.span())));
        }
        Some(syn::Lit::Float(lit)) => {
            return Ok(Value::Float(lit.base10_parse()?, Sp::one(lit.span())));
        }
        _ => {}
    }
    if input.peek(Token![-]) && input.peek2(LitInt) {
        let negative = input.peek(Token![-]);
        let minus = if negative {
            Some(input.parse::<Token![-]>()?)
        } else {
            None
        };
        let lit: LitInt = input.parse()?;
        let n: i64 = lit.base10_parse()?;
        let sp = minus
            .map(|m| Sp::one(m.span).to(Sp::one(lit.span())))
            .unwrap_or(Sp::one(lit.span()));
        return Ok(Value::Int(if negative { -n } else { n }, sp));
    }
    if input.peek(LitBool) {
        let lit: LitBool = input.parse()?;
        return Ok(Value::Bool(lit.value, Sp::one(lit.span)));
    }
    if input.peek(syn::token::Brace) {
        return Ok(Value::Map(input.parse()?));
    }
    if input.peek(syn::token::Bracket) {
        let content;
        let bracket = bracketed!(content in input);
        let items = content.parse_terminated(parse_value, Token![,])?;
        return Ok(Value::List(
            items.into_iter().collect(),
            Sp::one(bracket.span.join()),
        ));
    }
    if input.peek(syn::token::Paren) {
        let content;
        let paren = parenthesized!(content in input);
        let sp = Sp::one(paren.span.join());
        // Two names (`(service api)`) are no Rust expression: a selector of the app's item.
        if content.peek(Ident) && content.peek2(Ident) {
            let kind = parse_name(&content)?;
            let name = parse_name(&content)?;
            if !content.is_empty() {
                return Err(content
                    .error("expected `)`: a selector is `(KIND NAME)`, e.g. `(service api)`"));
            }
            return Ok(Value::Select(Box::new(Select { kind, name, sp })));
        }
        let expr: syn::Expr = content.parse()?;
        return Ok(Value::Expr(expr, sp));
    }
    if input.peek(Ident::peek_any) && input.peek2(Token![::]) {
        return Ok(Value::RustPath(input.parse()?));
    }
    if input.peek(Ident::peek_any) {
        if input.peek2(syn::token::Paren) {
            return Ok(Value::Call(input.parse()?));
        }
        let first = parse_name(input)?;
        if input.peek(syn::token::Paren) {
            return Ok(Value::Call(parse_call_after(first, input)?));
        }
        let mut parts = vec![first];
        while input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            parts.push(parse_name(input)?);
        }
        return Ok(Value::Path(parts));
    }
    Err(input.error("expected a value: a string, a number, a name, a call, `{ … }`, `[ … ]` or `( rust expression )`"))
}

/// The literal at the cursor, taken when `wanted`: the token is read once (syn's `peek(LitStr)` reads it
/// into a new parse buffer each time it is asked, which was most of the parse of a large app).
fn take_literal(input: ParseStream, wanted: impl Fn(&syn::Lit) -> bool) -> Option<syn::Lit> {
    input
        .step(|cursor| match cursor.literal() {
            Some((token, rest)) => {
                let lit = syn::Lit::new(token);
                Ok(if wanted(&lit) {
                    (Some(lit), rest)
                } else {
                    (None, *cursor)
                })
            }
            None => Ok((None, *cursor)),
        })
        .ok()
        .flatten()
}

impl Parse for Call {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = parse_name(input)?;
        parse_call_after(name, input)
    }
}

fn parse_call_after(name: NameTok, input: ParseStream) -> syn::Result<Call> {
    let content;
    let paren = parenthesized!(content in input);
    let mut args = Vec::new();
    let mut named = Vec::new();
    while !content.is_empty() {
        if content.peek(Ident::peek_any) && content.peek2(Token![:]) && !content.peek2(Token![::]) {
            let key = parse_name(&content)?;
            content.parse::<Token![:]>()?;
            named.push((key, parse_value(&content)?));
        } else {
            if !named.is_empty() {
                return Err(content.error("positional arguments go before named ones"));
            }
            args.push(parse_value(&content)?);
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    let sp = name.sp.to(Sp::one(paren.span.close()));
    Ok(Call {
        name,
        args,
        named,
        sp,
    })
}
