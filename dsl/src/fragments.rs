//! Fragments shared between apps, still checked at compile time: `piceli::fragment!` defines a
//! `macro_rules!` that hands its tokens back to `app!`, and `app!` splices them where it says `use NAME`.
//!
//! A fragment is tokens, not a value: `use team_labels;` among the items splices items, `use log_shipper`
//! inside a map (`containers: { web: { … }, use log_shipper }`) splices map entries. `app!` cannot read
//! another macro's tokens, so when it meets `use NAME` for a fragment it has not been given, it expands to
//! `NAME! { ORIGINAL INPUT }`; the fragment's macro answers `::piceli::app! { @fragment NAME { TOKENS }
//! ORIGINAL INPUT }` (with `in "DIR"`, its crate's directory, after NAME: its paths are relative to it,
//! see `fragment_paths`), and `app!` tries again. Spliced tokens keep their spans, so an error in a
//! fragment points into the fragment's definition, in every app that uses it.

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use std::collections::HashMap;

/// How deep fragments may use fragments before `app!` calls it a cycle.
const MAX_DEPTH: usize = 16;

/// What `app!` does with its input before parsing it.
pub enum Prepared {
    /// Every `use` resolved: parse these tokens.
    Ready(TokenStream),
    /// A fragment is needed first: emit this (a call of the fragment's macro).
    Fetch(TokenStream),
    /// A mistake in the use of fragments.
    Error(syn::Error),
}

/// Resolve the fragments `input` uses: take the `@fragment NAME { … }` definitions handed back so far
/// off the front, splice them, or ask for the first one still missing.
pub fn prepare(input: TokenStream) -> Prepared {
    let original = input.clone();
    let mut tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut defs: HashMap<String, TokenStream> = HashMap::new();
    let mut rest = 0;
    while let [TokenTree::Punct(at), TokenTree::Ident(kw), name @ ..] = &tokens[rest..]
        && at.as_char() == '@'
        && kw == "fragment"
    {
        let Some((path, used)) = path_at(name) else {
            return Prepared::Error(syn::Error::new(kw.span(), "`@fragment` lacks its name"));
        };
        // `in "DIR"`: the directory of the crate that defines the fragment, which its paths are
        // relative to.
        let (base, used) = match (name.get(used), name.get(used + 1)) {
            (Some(TokenTree::Ident(word)), Some(TokenTree::Literal(dir))) if word == "in" => {
                match syn::parse_str::<syn::LitStr>(&dir.to_string()) {
                    Ok(dir) => (Some(std::path::PathBuf::from(dir.value())), used + 2),
                    Err(e) => return Prepared::Error(e),
                }
            }
            _ => (None, used),
        };
        let Some(TokenTree::Group(body)) = name.get(used) else {
            return Prepared::Error(syn::Error::new(kw.span(), "`@fragment` lacks its `{ … }`"));
        };
        let body = match base {
            Some(base) => crate::fragment_paths::anchor(body.stream(), &base),
            None => body.stream(),
        };
        defs.insert(path_text(&path), body);
        rest += 2 + used + 1;
    }
    if defs.is_empty() && !uses_fragments(&original) {
        return Prepared::Ready(original);
    }
    let body: TokenStream = tokens.split_off(rest).into_iter().collect();
    let mut missing = None;
    match splice(body, &defs, 0, &mut missing) {
        Err(e) => Prepared::Error(e),
        Ok(ready) => match missing {
            None => Prepared::Ready(ready),
            Some(path) => {
                let call: TokenStream = path.iter().cloned().collect();
                Prepared::Fetch(quote!(#call! { #original }))
            }
        },
    }
}

/// Whether any `use` is in the input (the common case, no fragments, stays a single scan).
fn uses_fragments(ts: &TokenStream) -> bool {
    ts.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "use",
        TokenTree::Group(g) => !is_rust(&g) && uses_fragments(&g.stream()),
        _ => false,
    })
}

/// `a`, `a::b`, `::a::b` at the start of `tokens`: the path's tokens and how many tokens it took.
fn path_at(tokens: &[TokenTree]) -> Option<(Vec<TokenTree>, usize)> {
    let colons = |i: usize| {
        matches!(
            (tokens.get(i), tokens.get(i + 1)),
            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
        )
    };
    let mut i = if colons(0) { 2 } else { 0 };
    loop {
        let Some(TokenTree::Ident(_)) = tokens.get(i) else {
            return None;
        };
        i += 1;
        if !colons(i) {
            return Some((tokens[..i].to_vec(), i));
        }
        i += 2;
    }
}

/// The fragment's name: the path's last segment (what its `macro_rules!` is called).
fn path_text(path: &[TokenTree]) -> String {
    path.last().map(|t| t.to_string()).unwrap_or_default()
}

/// A `( … )` group holds a Rust expression: its `use` is Rust's, not a fragment.
fn is_rust(g: &Group) -> bool {
    g.delimiter() == Delimiter::Parenthesis
}

/// Replace every `use PATH` (followed by `;`, `,` or the end of its group) with the fragment's tokens.
/// The first fragment not in `defs` is recorded in `missing` (and its `use` left in place).
fn splice(
    ts: TokenStream,
    defs: &HashMap<String, TokenStream>,
    depth: usize,
    missing: &mut Option<Vec<TokenTree>>,
) -> syn::Result<TokenStream> {
    let tokens: Vec<TokenTree> = ts.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            TokenTree::Ident(kw) if kw == "use" => {
                let Some((path, used)) = path_at(&tokens[i + 1..]) else {
                    return Err(syn::Error::new(
                        kw.span(),
                        format!(
                            "{}: `use` takes the name of a fragment\n\nhelp: write `use NAME;` for a fragment defined with `piceli::fragment! {{ NAME {{ … }} }}`",
                            piceli_core::Code::Syntax
                        ),
                    ));
                };
                let after = i + 1 + used;
                let end = tokens.get(after);
                let semicolon = matches!(end, Some(TokenTree::Punct(p)) if p.as_char() == ';');
                let comma = matches!(end, Some(TokenTree::Punct(p)) if p.as_char() == ',');
                match defs.get(&path_text(&path)) {
                    Some(_) if depth >= MAX_DEPTH => {
                        return Err(syn::Error::new_spanned(
                            path.iter().cloned().collect::<TokenStream>(),
                            format!(
                                "{}: fragment `{}` uses itself (through {MAX_DEPTH} levels of `use`)\n\nhelp: remove the `use` that leads back to it",
                                piceli_core::Code::FragmentCycle,
                                path_text(&path)
                            ),
                        ));
                    }
                    Some(body) => {
                        let inner = splice(body.clone(), defs, depth + 1, missing)?;
                        let mut inner: Vec<TokenTree> = inner.into_iter().collect();
                        if comma
                            && matches!(inner.last(), Some(TokenTree::Punct(p)) if p.as_char() == ',')
                        {
                            inner.pop();
                        }
                        out.extend(inner);
                        i = if semicolon { after + 1 } else { after };
                        continue;
                    }
                    None => {
                        if missing.is_none() {
                            *missing = Some(path);
                        }
                        out.extend(tokens[i..after].iter().cloned());
                        i = after;
                        continue;
                    }
                }
            }
            TokenTree::Group(g) if !is_rust(g) => {
                let inner = splice(g.stream(), defs, depth, missing)?;
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            other => out.push(other.clone()),
        }
        i += 1;
    }
    Ok(out.into_iter().collect())
}

/// `piceli::fragment! { [pub] NAME { TOKENS } }`: a `macro_rules!` named NAME that gives TOKENS back to
/// `app!`. `pub` exports it (`#[macro_export]`) for other crates: `use my_crate::NAME;` in their apps.
pub fn define(input: TokenStream) -> TokenStream {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    // Doc comments and other attributes (`/// …` is `#[doc = "…"]`) go on the generated macro.
    let mut attrs = TokenStream::new();
    let mut start = 0;
    while let (Some(TokenTree::Punct(hash)), Some(TokenTree::Group(g))) =
        (tokens.get(start), tokens.get(start + 1))
        && hash.as_char() == '#'
        && g.delimiter() == Delimiter::Bracket
    {
        attrs.extend(tokens[start..start + 2].iter().cloned());
        start += 2;
    }
    let tokens = &tokens[start..];
    let (public, rest) = match tokens.first() {
        Some(TokenTree::Ident(p)) if p == "pub" => (true, &tokens[1..]),
        _ => (false, tokens),
    };
    let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(body)), None) =
        (rest.first(), rest.get(1), rest.get(2))
    else {
        let span = tokens
            .first()
            .map(|t| t.span())
            .unwrap_or_else(Span::call_site);
        let message = format!(
            "{}: a fragment is `NAME {{ … }}`\n\nhelp: write e.g. `piceli::fragment! {{ team_labels {{ labels {{ team: \"shop\" }} }} }}`",
            piceli_core::Code::Syntax
        );
        return syn::Error::new(span, message).to_compile_error();
    };
    if body.delimiter() != Delimiter::Brace {
        let message = format!(
            "{}: a fragment's tokens go in braces\n\nhelp: write `{name} {{ … }}`",
            piceli_core::Code::Syntax
        );
        return syn::Error::new(body.span(), message).to_compile_error();
    }
    let inner = body.stream();
    let export = public.then(|| quote!(#[macro_export]));
    let doc =
        format!("The `{name}` fragment of `piceli::app!`: `use {name};` in an app splices it.");
    // `$app` is the calling app's whole input; `$` has no meaning to quote!, so it is written as is.
    let dollar = TokenTree::Punct(Punct::new('$', Spacing::Alone));
    let app = Ident::new("app", Span::call_site());
    // Where the fragment's paths (`crds "…"`, `file("…")`, …) are relative to: this crate.
    let base = crate::fragment_paths::crate_dir().map(|dir| {
        let dir = dir.to_string_lossy().into_owned();
        quote!(in #dir)
    });
    let mut out = TokenStream::new();
    let doc = attrs.is_empty().then(|| quote!(#[doc = #doc]));
    quote! {
        #attrs
        #doc
        #export
        macro_rules! #name {
            (#dollar(#dollar #app:tt)*) => {
                ::piceli::app! { @fragment #name #base { #inner } #dollar(#dollar #app)* }
            };
        }
    }
    .to_tokens(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(p: Prepared) -> String {
        match p {
            Prepared::Ready(ts) => ts.to_string(),
            Prepared::Fetch(ts) => panic!("fetch {ts}"),
            Prepared::Error(e) => panic!("error {e}"),
        }
    }

    #[test]
    fn without_use_the_input_is_unchanged() {
        let input: TokenStream = "app a; deployment web { image: \"x\" }".parse().unwrap();
        assert_eq!(ready(prepare(input.clone())), input.to_string());
    }

    #[test]
    fn a_missing_fragment_is_fetched_with_the_whole_input() {
        let input: TokenStream = "app a; use shared::team;".parse().unwrap();
        let Prepared::Fetch(call) = prepare(input) else {
            panic!("expected a fetch")
        };
        assert_eq!(
            call.to_string(),
            "shared :: team ! { app a ; use shared :: team ; }"
        );
    }

    #[test]
    fn items_and_map_entries_are_spliced() {
        let input: TokenStream = "@fragment team { labels { team: \"shop\" } } \
             @fragment sidecar { log: { image: \"y\" }, } \
             app a; use team; deployment web { containers: { web: { image: \"x\" }, use sidecar, } }"
            .parse()
            .unwrap();
        let want: TokenStream = "app a; labels { team: \"shop\" } deployment web { containers: { web: { image: \"x\" }, log: { image: \"y\" }, } }"
            .parse()
            .unwrap();
        assert_eq!(ready(prepare(input)), want.to_string());
    }

    #[test]
    fn a_fragment_using_itself_is_an_error() {
        let input: TokenStream = "@fragment a { use a; } app x; use a;".parse().unwrap();
        let Prepared::Error(e) = prepare(input) else {
            panic!("expected an error")
        };
        assert!(e.to_string().contains("PCL0051"), "{e}");
    }

    #[test]
    fn define_makes_a_macro_rules_callback() {
        let out = define("pub team { labels { team: \"shop\" } }".parse().unwrap()).to_string();
        assert!(out.contains("# [macro_export]"), "{out}");
        assert!(out.contains("macro_rules ! team"), "{out}");
        // With the directory of the crate that defines it (this one's, in a unit test).
        let dir = env!("CARGO_MANIFEST_DIR");
        assert!(
            out.contains(&format!(
                ":: piceli :: app ! {{ @ fragment team in {dir:?} {{ labels {{ team : \"shop\" }} }} $ ($ app) * }}"
            )),
            "{out}"
        );
    }

    #[test]
    fn a_fragment_of_another_crate_reads_its_paths_from_there() {
        let input: TokenStream = "@fragment api in \"/elsewhere/team\" { crds \"crds/\"; } \
             @fragment local in \"LOCAL\" { crds \"crds/\"; } \
             app x; use api; use local;"
            .replace("LOCAL", env!("CARGO_MANIFEST_DIR"))
            .parse()
            .unwrap();
        let out = ready(prepare(input));
        assert!(out.contains("crds \"/elsewhere/team/crds/\""), "{out}");
        // A fragment of the crate being compiled: as written.
        assert!(out.contains("crds \"crds/\""), "{out}");
    }
}
