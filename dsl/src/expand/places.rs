//! Where each value written as a Rust expression sits in the model: its path, as Rust code.
//!
//! The model is walked by its own `Serialize` (the same walk that writes the JSON the runtime loads), with
//! a serializer that keeps the path to the current value: struct fields, list indices, `Some`, tuple
//! elements, enum variants. A placeholder is a `Spanned` whose `Loc` is the expression's (or a bare `Loc`
//! next to what it fills: `env_expr`, an `Include::Objects`'s `at`), or a value of a block (blocks are
//! plain JSON in the model: each is read back to see its values' locations; the place is the block, and
//! the runtime finds the value in it by its location). Each path becomes a closure for `__private::assign`:
//! `|a| Some(&mut a.workloads.get_mut(0)?.containers.get_mut(0)?.image)`. Indices are right because the
//! runtime loads this very model (of the same model format, which `load` checks first).

mod serialize;

use piceli_core::model::{App, Block, BlockValue};
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::quote;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// One step from a value to a part of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A struct's field, or a struct variant's (after its [`Step::Variant`]).
    Field(&'static str),
    /// An element of a list.
    Index(usize),
    /// The value of an `Option`.
    Some,
    /// An element of a tuple, tuple struct or tuple variant.
    Elem(usize),
    /// A variant of an enum of the model: the next step (if any) is in it.
    Variant {
        /// The enum's name, in `piceli_core::model`.
        ty: &'static str,
        /// The variant.
        variant: &'static str,
        /// Newtype, tuple or struct.
        shape: Shape,
    },
    /// A `Spanned`'s location.
    SpannedLoc,
    /// Inside a map (keys are not known statically: no place can be written here).
    Opaque,
}

/// The shape of an enum variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Newtype,
    Tuple,
    Struct,
}

/// What holds a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A `Spanned` value whose location it is (a scalar's or a file's placeholder).
    Spanned,
    /// The struct (or enum value) with the location as a field of its own (`env_expr`,
    /// `Include::Objects { at, … }`).
    Bare,
    /// A block that has a value at the location.
    Block,
}

/// The places found for each wanted location.
pub type Places = HashMap<u32, Vec<(Holder, Vec<Step>)>>;

/// The places of the locations in `wanted`, wherever the model holds them (a value copied to several
/// places is in each).
pub fn find(app: &App, wanted: &HashSet<u32>) -> Places {
    let mut finder = Finder {
        path: Vec::new(),
        wanted,
        found: HashMap::new(),
        next: Next::Value,
    };
    // `App::dynamic` lists the locations: not a place.
    let _ = app.serialize(&mut finder);
    finder.found
}

/// What the next primitive is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Value,
    /// The number inside a `Loc`.
    Loc,
}

struct Finder<'w> {
    path: Vec<Step>,
    wanted: &'w HashSet<u32>,
    found: Places,
    next: Next,
}

impl Finder<'_> {
    fn record(&mut self, loc: u32, holder: Holder) {
        if !self.wanted.contains(&loc) {
            return;
        }
        let mut path = self.path.clone();
        match holder {
            Holder::Spanned => {
                path.pop();
            }
            Holder::Bare => {
                // Up to the struct that has the location as a field, and out of a struct variant.
                while let Some(step) = path.pop() {
                    if matches!(step, Step::Field(_)) {
                        break;
                    }
                }
                if matches!(
                    path.last(),
                    Some(Step::Variant {
                        shape: Shape::Struct,
                        ..
                    })
                ) {
                    path.pop();
                }
            }
            Holder::Block => {}
        }
        let places = self.found.entry(loc).or_default();
        // A shortcut's entry in a block may carry its value's location on its key and map too.
        if !places.iter().any(|(h, p)| *h == holder && *p == path) {
            places.push((holder, path));
        }
    }

    /// A block, from its serialized parts (`["LOCS", BODY]`): read back, every value located in it.
    fn block(&mut self, locs: serde_json::Value, body: String) {
        let text = format!("[{locs},{body}]");
        let Ok(block) = Block::from_model_json(&text) else {
            return;
        };
        let mut locs = Vec::new();
        values(&block, &mut locs);
        for at in locs {
            self.record(at, Holder::Block);
        }
    }

    fn inside<T: Serialize + ?Sized>(
        &mut self,
        step: Step,
        value: &T,
    ) -> Result<(), serialize::Stop> {
        self.path.push(step);
        let out = value.serialize(&mut *self);
        self.path.pop();
        out
    }
}

/// The location of every value in a block that is not a list or map (what [`Block::value_at_mut`] finds).
fn values(block: &Block, out: &mut Vec<u32>) {
    for (_, value) in block.entries() {
        value_locs(value, out);
    }
}

fn value_locs(value: &BlockValue, out: &mut Vec<u32>) {
    match value {
        BlockValue::List(_, items) => items.iter().for_each(|i| value_locs(i, out)),
        BlockValue::Map(m) => values(m, out),
        leaf => out.push(leaf.at().0),
    }
}

/// The closure giving the place a path leads to, from the app (`a`): `None` if the place does not exist
/// (never, in a model of the same release); `None` too for a path through a map, which has no static path
/// (the model has none where a Rust expression can be written).
///
/// Built token by token (a path is appended to, not re-quoted at each step): an app may have thousands.
pub fn closure(path: &[Step]) -> Option<TokenStream> {
    // `expr` is a `&mut` value (`is_ref`), or a place reached through one; a `match` (`is_match`) is put
    // in parentheses only when something follows it. When the last step gives an `Option`
    // (`get_mut`, `as_mut`), the closure returns it as is, without its `?`.
    let mut expr: Vec<TokenTree> = vec![ident("a")];
    let mut is_ref = true;
    let mut is_match = false;
    let mut optional = false;
    let mut steps = path.iter();
    while let Some(step) = steps.next() {
        if is_match {
            expr = vec![group(Delimiter::Parenthesis, expr)];
            is_match = false;
        }
        optional = false;
        match step {
            Step::Field(name) => {
                expr.extend([punct('.'), ident(name)]);
                is_ref = false;
            }
            Step::Elem(i) => {
                expr.extend([punct('.'), Literal::usize_unsuffixed(*i).into()]);
                is_ref = false;
            }
            Step::Index(i) => {
                let index = vec![Literal::usize_unsuffixed(*i).into()];
                expr.extend([punct('.'), ident("get_mut")]);
                expr.extend([group(Delimiter::Parenthesis, index), punct('?')]);
                (is_ref, optional) = (true, true);
            }
            Step::Some => {
                expr.extend([punct('.'), ident("as_mut")]);
                expr.extend([group(Delimiter::Parenthesis, Vec::new()), punct('?')]);
                (is_ref, optional) = (true, true);
            }
            Step::Variant { ty, variant, shape } => {
                let (ty, variant) = (ident(ty), ident(variant));
                // A tuple or struct variant's element or field is the next step.
                let inner = match shape {
                    Shape::Newtype => None,
                    Shape::Tuple | Shape::Struct => steps.next(),
                };
                let pattern = match (shape, inner) {
                    (Shape::Newtype, _) => quote!((x)),
                    (Shape::Tuple, Some(Step::Elem(i))) => {
                        let skipped = (0..*i).map(|_| quote!(_,));
                        quote!((#(#skipped)* x, ..))
                    }
                    (Shape::Struct, Some(Step::Field(field))) => {
                        let field = ident(field);
                        quote!({ #field: x, .. })
                    }
                    _ => return None,
                };
                let scrutinee: TokenStream = expr.into_iter().collect();
                let scrutinee = if is_ref {
                    scrutinee
                } else {
                    quote!(&mut #scrutinee)
                };
                let matched = quote! {
                    match #scrutinee {
                        ::piceli::__private::model::#ty::#variant #pattern => x,
                        _ => return ::core::option::Option::None,
                    }
                };
                expr = matched.into_iter().collect();
                (is_ref, is_match) = (true, true);
            }
            Step::SpannedLoc | Step::Opaque => return None,
        }
    }
    let mut closure = vec![punct('|'), ident("a"), punct('|')];
    if optional {
        expr.pop();
        closure.extend(expr);
    } else {
        if !is_ref {
            expr.splice(0..0, [punct('&'), ident("mut")]);
        }
        for part in ["core", "option", "Option", "Some"] {
            closure.extend([joint(':'), punct(':'), ident(part)]);
        }
        closure.push(group(Delimiter::Parenthesis, expr));
    }
    Some(closure.into_iter().collect())
}

fn ident(name: &str) -> TokenTree {
    Ident::new(name, Span::call_site()).into()
}

fn punct(c: char) -> TokenTree {
    Punct::new(c, Spacing::Alone).into()
}

fn joint(c: char) -> TokenTree {
    Punct::new(c, Spacing::Joint).into()
}

fn group(delimiter: Delimiter, inner: Vec<TokenTree>) -> TokenTree {
    Group::new(delimiter, inner.into_iter().collect()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::model::{Container, EnvValue, EnvVar, Include, Workload};
    use piceli_core::spanned::{Loc, Spanned};

    fn app() -> App {
        let c = Container {
            image: Spanned::new(String::new(), Loc(5)),
            env: vec![EnvVar {
                name: Spanned::new("A".into(), Loc(6)),
                value: EnvValue::Literal(Spanned::new(String::new(), Loc(7))),
            }],
            env_expr: Some(Loc(8)),
            ..Container::default()
        };
        let tolerations = BlockValue::List(
            Loc(12),
            vec![BlockValue::Json(Spanned::new(
                serde_json::Value::Null,
                Loc(13),
            ))],
        );
        let w = Workload {
            replicas: Some(Spanned::new(0, Loc(4))),
            containers: vec![Container::default(), c],
            pod: Block::new(
                Loc(9),
                vec![(Spanned::new("tolerations".into(), Loc(11)), tolerations)],
            ),
            ..Workload::default()
        };
        App {
            workloads: vec![w],
            includes: vec![Include::objects(Loc(10), Vec::new())],
            dynamic: vec![Loc(4), Loc(5), Loc(7), Loc(8), Loc(10)],
            ..App::default()
        }
    }

    fn text(path: &[Step]) -> String {
        closure(path).map(|t| t.to_string()).unwrap_or_default()
    }

    #[test]
    fn every_kind_of_place_is_found_with_its_rust_path() {
        let found = find(&app(), &HashSet::from([4, 5, 7, 8, 13, 10, 6]));
        let one = |loc: u32| {
            let places = &found[&loc];
            assert_eq!(places.len(), 1, "{loc}: {places:?}");
            places[0].clone()
        };
        let (holder, path) = one(4);
        assert_eq!(holder, Holder::Spanned);
        assert_eq!(
            text(&path),
            "| a | a . workloads . get_mut (0) ? . replicas . as_mut ()"
        );
        let (_, path) = one(5);
        assert!(
            text(&path).contains("containers . get_mut (1) ? . image)"),
            "{}",
            text(&path)
        );
        let (_, path) = one(7);
        let env = text(&path);
        assert!(
            env.contains("match & mut a . workloads . get_mut (0) ? . containers . get_mut (1) ? . env . get_mut (0) ? . value"),
            "{env}"
        );
        assert!(
            env.contains("model :: EnvValue :: Literal (x) => x"),
            "{env}"
        );
        let (holder, path) = one(8);
        assert_eq!(holder, Holder::Bare);
        assert!(text(&path).ends_with("a . workloads . get_mut (0) ? . containers . get_mut (1)"));
        let (holder, path) = one(13);
        assert_eq!(holder, Holder::Block);
        assert!(text(&path).ends_with("Some (& mut a . workloads . get_mut (0) ? . pod)"));
        let (holder, path) = one(10);
        assert_eq!(holder, Holder::Bare);
        assert_eq!(text(&path), "| a | a . includes . get_mut (0)");
        // A location that is not a placeholder's (a name's key) is not wanted unless asked for.
        assert_eq!(found[&6][0].0, Holder::Spanned);
        assert!(!found.contains_key(&3) && !found.contains_key(&9));
    }
}
