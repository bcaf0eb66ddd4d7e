//! Spans of the generated code: every Rust path a declaration names (a controller's or webhook's handler,
//! a `custom_resource` type, a `check code` function) reaches the expansion as the user's own tokens, with
//! the user's spans — what rustc reports a mismatch at, and what rust-analyzer follows to "go to
//! definition" from inside `app!`. proc-macro2's `span-locations` (a dev-dependency feature) gives the
//! spans of `syn::parse_str` line and column numbers here.

use crate::tests::source;
use proc_macro2::{TokenStream, TokenTree};

/// Every identifier of the expansion, with where its span starts (line, column).
fn idents(tokens: TokenStream, out: &mut Vec<(String, usize, usize)>) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(i) => {
                let start = i.span().start();
                out.push((i.to_string(), start.line, start.column));
            }
            TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

#[test]
fn the_paths_a_declaration_names_keep_the_users_spans_in_the_expansion() {
    let text = source(
        "operator lamps { image: IMAGE } \
         custom_resource crate::ops::Lamp; \
         controller lamp on lamps.example.com => ops::reconcile_lamp; \
         validate map-check on configmaps (CREATE) => hooks::check_map; \
         check code(checks::smoke_test);",
    );
    let input: crate::ast::Input = syn::parse_str(&text).expect("parses");
    let checked = crate::valid::check(input, true).unwrap_or_else(|(e, _)| panic!("{e:?}"));
    let mut found = Vec::new();
    idents(crate::expand::expand(checked, true), &mut found);
    for (name, written) in [
        ("Lamp", "Lamp;"),
        ("reconcile_lamp", "reconcile_lamp;"),
        ("check_map", "check_map;"),
        ("smoke_test", "smoke_test)"),
    ] {
        let column = text.find(written).expect("in the source");
        let at: Vec<(usize, usize)> = found
            .iter()
            .filter(|(n, ..)| n == name)
            .map(|(_, line, col)| (*line, *col))
            .collect();
        assert!(!at.is_empty(), "`{name}` is not in the expansion");
        assert!(
            at.iter().all(|&(line, col)| line == 1 && col == column),
            "`{name}` written at 1:{column}, expanded at {at:?}"
        );
    }
}
