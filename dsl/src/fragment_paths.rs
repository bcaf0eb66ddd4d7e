//! Paths in a fragment of another crate: `crds "crds/"`, `file("…")`, `yaml("…")` and `json("…")` in a
//! fragment are relative to the crate that defines it (as `include_str!` is relative to its own file), so
//! an app that uses a `pub` fragment of another crate reads that crate's files. `fragment!` records its
//! crate's directory; when an app of another crate splices the fragment, its relative paths are made
//! absolute (an app of the same crate keeps them as written).

use proc_macro2::{Delimiter, Group, Literal, TokenStream, TokenTree};
use std::path::{Path, PathBuf};

/// The words whose string argument is a path: `crds "…"` and the calls `file("…")`, `yaml("…")`,
/// `json("…")`.
const ITEM_PATHS: &[&str] = &["crds"];
const CALL_PATHS: &[&str] = &["file", "yaml", "json"];

/// The directory of the crate being compiled (where its Cargo.toml is).
pub fn crate_dir() -> Option<PathBuf> {
    std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from)
}

/// The fragment's tokens with its relative paths made relative to `base` — unless `base` is the crate
/// being compiled, whose apps read paths relative to themselves anyway.
pub fn anchor(tokens: TokenStream, base: &Path) -> TokenStream {
    if crate_dir().is_some_and(|here| here == base) {
        return tokens;
    }
    rewrite(tokens, base)
}

fn rewrite(tokens: TokenStream, base: &Path) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let mut after_path_word = false;
    let mut after_call_word = false;
    for t in tokens {
        let next = match t {
            TokenTree::Literal(lit) if after_path_word => TokenTree::Literal(anchored(&lit, base)),
            TokenTree::Group(g) if after_call_word && g.delimiter() == Delimiter::Parenthesis => {
                let mut inner: Vec<TokenTree> = g.stream().into_iter().collect();
                if let Some(TokenTree::Literal(lit)) = inner.first() {
                    inner[0] = TokenTree::Literal(anchored(lit, base));
                }
                regroup(&g, inner.into_iter().collect())
            }
            // A `( … )` that is no call of a path word is a Rust expression: left as written.
            TokenTree::Group(g) if g.delimiter() != Delimiter::Parenthesis => {
                regroup(&g, rewrite(g.stream(), base))
            }
            other => other,
        };
        after_path_word = matches!(&next, TokenTree::Ident(i) if ITEM_PATHS.iter().any(|w| i == w));
        after_call_word = matches!(&next, TokenTree::Ident(i) if CALL_PATHS.iter().any(|w| i == w));
        out.push(next);
    }
    out.into_iter().collect()
}

fn regroup(g: &Group, stream: TokenStream) -> TokenTree {
    let mut group = Group::new(g.delimiter(), stream);
    group.set_span(g.span());
    TokenTree::Group(group)
}

/// A string literal holding a relative path, as the same path under `base` (same span); anything else
/// as it was.
fn anchored(lit: &Literal, base: &Path) -> Literal {
    let Ok(syn::Lit::Str(s)) = syn::parse_str::<syn::Lit>(&lit.to_string()) else {
        return lit.clone();
    };
    let path = s.value();
    if Path::new(&path).is_absolute() {
        return lit.clone();
    }
    let mut full = base.join(&path).to_string_lossy().into_owned();
    // `crds "crds/"` names a directory: keep the slash that says so.
    if path.ends_with('/') && !full.ends_with('/') {
        full.push('/');
    }
    let mut out = Literal::string(&full);
    out.set_span(lit.span());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_of_path_words_are_anchored_and_nothing_else_is() {
        let input: TokenStream = r#"
            crds "crds/";
            config_map c { a: file("conf/a.toml"), b: "conf/b.toml", c: (file("x")) }
            include yaml("k8s/extra.yaml");
            include json("/abs/x.json");
        "#
        .parse()
        .expect("tokens");
        let out = rewrite(input, Path::new("/team")).to_string();
        assert!(out.contains(r#"crds "/team/crds/""#), "{out}");
        assert!(out.contains(r#"file ("/team/conf/a.toml")"#), "{out}");
        assert!(out.contains(r#"b : "conf/b.toml""#), "{out}");
        assert!(out.contains(r#"(file ("x"))"#), "{out}");
        assert!(out.contains(r#"yaml ("/team/k8s/extra.yaml")"#), "{out}");
        assert!(out.contains(r#"json ("/abs/x.json")"#), "{out}");
    }
}
