//! Values written as Rust expressions, put into the model by the code `app!` generates: each one is a typed
//! assignment at its place, after the embedded model is loaded. A scalar, a file's contents, a block value,
//! a whole `env:` or `include objects(…)` goes to the place the macro found for it in the model it checked
//! (`|a| Some(&mut a.workloads.get_mut(0)?.containers.get_mut(0)?.image)`); a map or list from Rust
//! (`pod_labels: (common())`, `args: (flags())`) extends its field, the workload and container found by
//! name. The values are then checked by the same rules as written ones.

use crate::load::{EnvList, Objects};
use piceli_core::model::{
    App, Block, BlockValue, Container, EnvValue, EnvVar, Include, Labels, Workload,
};
use piceli_core::spanned::{Loc, Spanned};
use serde_json::Value;
use std::borrow::Cow;

/// A map of text from a Rust expression, its pairs in order.
pub fn pairs(v: impl TextPairs) -> Vec<(String, String)> {
    v.into_text_pairs()
}

/// A list of text from a Rust expression.
pub fn strings(v: impl TextList) -> Vec<String> {
    v.into_text_list()
}

/// What a map of text (`labels: (…)`, `pod_labels: (…)`, `node_selector: (…)`) may give: pairs of a key
/// and a value, such as `[("team", "shop")]` or a `BTreeMap<String, String>`.
#[diagnostic::on_unimplemented(
    message = "this Rust expression must give pairs of a key and a value, not `{Self}`",
    label = "this gives `{Self}`",
    note = "give e.g. `[(\"team\", \"shop\")]`, a `BTreeMap<String, String>`, or an iterator of `(key, value)` where the key converts into `String` and the value implements `Display`"
)]
pub trait TextPairs {
    /// The pairs, in order.
    fn into_text_pairs(self) -> Vec<(String, String)>;
}

impl<I, K, V> TextPairs for I
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: std::fmt::Display,
{
    fn into_text_pairs(self) -> Vec<(String, String)> {
        self.into_iter()
            .map(|(k, v)| (k.into(), v.to_string()))
            .collect()
    }
}

/// What a list of text (`command: (…)`, `args: (…)`) may give: one string, or a list of them.
#[diagnostic::on_unimplemented(
    message = "this Rust expression must give a string or a list of strings, not `{Self}`",
    label = "this gives `{Self}`",
    note = "give e.g. `vec![\"--port\".to_string(), port.to_string()]`, `[\"serve\", \"--verbose\"]` or one `String`"
)]
pub trait TextList {
    /// The strings, in order.
    fn into_text_list(self) -> Vec<String>;
}

// Each type listed (not a blanket impl over iterators) so that one `String` is a list of one.
macro_rules! one_string {
    ($($t:ty),*) => {$(
        impl TextList for $t {
            fn into_text_list(self) -> Vec<String> {
                vec![self.into()]
            }
        }
    )*};
}
one_string!(String, &str, &String, Cow<'_, str>);

impl<T: Into<String>> TextList for Vec<T> {
    fn into_text_list(self) -> Vec<String> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<T: Into<String>, const N: usize> TextList for [T; N] {
    fn into_text_list(self) -> Vec<String> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<T: Clone + Into<String>> TextList for &[T] {
    fn into_text_list(self) -> Vec<String> {
        self.iter().cloned().map(Into::into).collect()
    }
}

/// A value the generated assignments put into a place of type `F`, each part located at the expression.
pub trait Assign<F> {
    /// Put the value into `place`; `false` when the place holds no value of this kind at `at` (only a
    /// model of another release could do that).
    fn assign(self, place: &mut F, at: Loc) -> bool;
}

/// A scalar written as a Rust expression: the spanned value the macro wrote a placeholder into.
impl Assign<Spanned<String>> for String {
    fn assign(self, place: &mut Spanned<String>, at: Loc) -> bool {
        let here = place.at == at;
        if here {
            place.v = self;
        }
        here
    }
}

impl Assign<Spanned<i64>> for i64 {
    fn assign(self, place: &mut Spanned<i64>, at: Loc) -> bool {
        let here = place.at == at;
        if here {
            place.v = self;
        }
        here
    }
}

/// A value in a schema-checked block: the block's value located at the expression.
impl Assign<Block> for String {
    fn assign(self, place: &mut Block, at: Loc) -> bool {
        match place.value_at_mut(at) {
            Some(BlockValue::Str(s)) => {
                s.v = self;
                true
            }
            _ => false,
        }
    }
}

impl Assign<Block> for i64 {
    fn assign(self, place: &mut Block, at: Loc) -> bool {
        match place.value_at_mut(at) {
            Some(BlockValue::Int(n)) => {
                n.v = self;
                true
            }
            _ => false,
        }
    }
}

impl Assign<Block> for Value {
    fn assign(self, place: &mut Block, at: Loc) -> bool {
        match place.value_at_mut(at) {
            Some(BlockValue::Json(j)) => {
                j.v = self;
                true
            }
            _ => false,
        }
    }
}

/// `env: (…)`: the container's variables, as literals located at the expression.
impl Assign<Container> for EnvList {
    fn assign(self, place: &mut Container, at: Loc) -> bool {
        if place.env_expr != Some(at) {
            return false;
        }
        place.env.extend(self.0.into_iter().map(|(k, v)| EnvVar {
            name: Spanned::new(k, at),
            value: EnvValue::Literal(Spanned::new(v, at)),
        }));
        true
    }
}

/// `include objects((…))`: the include's objects.
impl Assign<Include> for Objects {
    fn assign(self, place: &mut Include, at: Loc) -> bool {
        match place {
            Include::Objects {
                at: here, objects, ..
            } if *here == at => {
                *objects = self.0;
                true
            }
            _ => false,
        }
    }
}

impl Assign<Labels> for Vec<(String, String)> {
    fn assign(self, place: &mut Labels, at: Loc) -> bool {
        place.extend(
            self.into_iter()
                .map(|(k, v)| (Spanned::new(k, at), Spanned::new(v, at))),
        );
        true
    }
}

impl Assign<Vec<Spanned<String>>> for Vec<String> {
    fn assign(self, place: &mut Vec<Spanned<String>>, at: Loc) -> bool {
        place.extend(self.into_iter().map(|s| Spanned::new(s, at)));
        true
    }
}

/// Assign `value`, written at location `at`, to the place `place` picks in the app (generated by the
/// macro from the model it checked, so it always finds it in a model of the same release).
pub fn assign<F, V: Assign<F>>(
    app: &mut App,
    at: u32,
    place: impl FnOnce(&mut App) -> Option<&mut F>,
    value: V,
) {
    let assigned = match place(app) {
        Some(place) => value.assign(place, Loc(at)),
        None => false,
    };
    if !assigned {
        let what = format!("place for the value of {}", app.describe(Loc(at)));
        missing(app, what);
    }
}

/// Assign `value` to the field `field` picks of the workload named `workload`.
pub fn assign_workload<F, V: Assign<F>>(
    app: &mut App,
    workload: &str,
    at: u32,
    field: impl FnOnce(&mut Workload) -> &mut F,
    value: V,
) {
    match app.workloads.iter_mut().find(|w| w.name.v == workload) {
        Some(w) => {
            value.assign(field(w), Loc(at));
        }
        None => missing(app, format!("workload {workload}")),
    }
}

/// Assign `value` to the field `field` picks of the container (or init container) `container` of the
/// workload named `workload`.
pub fn assign_container<F, V: Assign<F>>(
    app: &mut App,
    workload: &str,
    container: &str,
    at: u32,
    field: impl FnOnce(&mut Container) -> &mut F,
    value: V,
) {
    let found = app
        .workloads
        .iter_mut()
        .filter(|w| w.name.v == workload)
        .flat_map(|w| w.containers.iter_mut().chain(w.init_containers.iter_mut()))
        .find(|c| c.name.v == container);
    match found {
        Some(c) => {
            value.assign(field(c), Loc(at));
        }
        None => missing(app, format!("container {container} of workload {workload}")),
    }
}

/// The model lacks what the macro assigned to: only a model of another release could (a load error,
/// reported by `check`; the first one stays).
fn missing(app: &mut App, what: String) {
    if app.load_error.is_none() {
        app.load_error = Some(format!(
            "the embedded model has no {what}, which the app's generated code assigns to"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::model::WorkloadKind;

    fn app() -> App {
        let mut w = Workload {
            kind: WorkloadKind::Deployment,
            name: Spanned::bare("web".to_string()),
            ..Workload::default()
        };
        w.containers.push(Container {
            name: Spanned::bare("web".to_string()),
            ..Container::default()
        });
        App {
            workloads: vec![w],
            ..App::default()
        }
    }

    #[test]
    fn pairs_and_lists_land_in_their_fields_located_at_the_expression() {
        let mut app = app();
        let labels = std::collections::BTreeMap::from([("team", "shop"), ("tier", "web")]);
        assign_workload(&mut app, "web", 7, |w| &mut w.pod_labels, pairs(labels));
        assign_container(
            &mut app,
            "web",
            "web",
            8,
            |c| &mut c.args,
            strings(["serve", "-v"]),
        );
        assign_container(
            &mut app,
            "web",
            "web",
            9,
            |c| &mut c.command,
            strings("/app"),
        );
        let w = &app.workloads[0];
        let labels: Vec<_> = w
            .pod_labels
            .iter()
            .map(|(k, v)| (k.v.as_str(), v.v.as_str(), k.at))
            .collect();
        assert_eq!(labels, [("team", "shop", Loc(7)), ("tier", "web", Loc(7))]);
        let args: Vec<_> = w.containers[0]
            .args
            .iter()
            .map(|a| (a.v.as_str(), a.at))
            .collect();
        assert_eq!(args, [("serve", Loc(8)), ("-v", Loc(8))]);
        assert_eq!(w.containers[0].command[0].v, "/app");
        assert!(app.load_error.is_none());
    }

    #[test]
    fn a_place_the_model_lacks_is_a_load_error_not_a_panic() {
        let mut app = app();
        assign_container(&mut app, "web", "sidecar", 3, |c| &mut c.args, strings("x"));
        assign_workload(&mut app, "api", 4, |w| &mut w.labels, pairs([("a", "b")]));
        let error = app.load_error.expect("a load error");
        assert!(
            error.contains("container sidecar of workload web"),
            "{error}"
        );
    }

    #[test]
    fn scalars_block_values_env_and_objects_land_at_their_places() {
        let mut app = app();
        app.workloads[0].containers[0].image = Spanned::new(String::new(), Loc(3));
        app.workloads[0].replicas = Some(Spanned::new(0, Loc(4)));
        app.workloads[0].containers[0].env_expr = Some(Loc(5));
        app.workloads[0].pod = Block::new(
            Loc(6),
            vec![
                (
                    Spanned::new("terminationGracePeriodSeconds".into(), Loc(7)),
                    BlockValue::Int(Spanned::new(0, Loc(8))),
                ),
                (
                    Spanned::new("tolerations".into(), Loc(9)),
                    BlockValue::Json(Spanned::new(Value::Null, Loc(10))),
                ),
            ],
        );
        app.includes.push(Include::objects(Loc(11), Vec::new()));
        let image = "nginx@sha256:x";
        assign(
            &mut app,
            3,
            |a| Some(&mut a.workloads.get_mut(0)?.containers.get_mut(0)?.image),
            crate::load::string(image),
        );
        assign(
            &mut app,
            4,
            |a| a.workloads.get_mut(0)?.replicas.as_mut(),
            crate::load::int(3_u8),
        );
        assign(
            &mut app,
            5,
            |a| a.workloads.get_mut(0)?.containers.get_mut(0),
            crate::load::env([("MODE", "prod")]),
        );
        assign(
            &mut app,
            8,
            |a| Some(&mut a.workloads.get_mut(0)?.pod),
            crate::load::int(30),
        );
        assign(
            &mut app,
            10,
            |a| Some(&mut a.workloads.get_mut(0)?.pod),
            crate::load::json(vec!["gpu"]),
        );
        assign(
            &mut app,
            11,
            |a| a.includes.get_mut(0),
            crate::load::Objects(vec![serde_json::json!({ "kind": "ConfigMap" })]),
        );
        assert!(app.load_error.is_none(), "{:?}", app.load_error);
        let w = &app.workloads[0];
        assert_eq!(
            w.containers[0].image,
            Spanned::new(image.to_string(), Loc(3))
        );
        assert_eq!(w.replicas, Some(Spanned::new(3, Loc(4))));
        assert_eq!(
            w.containers[0].env[0].name,
            Spanned::new("MODE".into(), Loc(5))
        );
        assert_eq!(
            w.pod.get("terminationGracePeriodSeconds"),
            Some(&BlockValue::Int(Spanned::new(30, Loc(8))))
        );
        assert_eq!(
            w.pod.get("tolerations").map(BlockValue::to_json),
            Some(serde_json::json!(["gpu"]))
        );
        assert!(matches!(&app.includes[0], Include::Objects { objects, .. } if objects.len() == 1));
    }

    #[test]
    fn a_place_that_holds_another_location_or_kind_is_a_load_error() {
        let mut app = app();
        app.workloads[0].containers[0].image = Spanned::new(String::new(), Loc(3));
        // The path leads to a value of another location: not overwritten.
        assign(
            &mut app,
            9,
            |a| Some(&mut a.workloads.get_mut(0)?.containers.get_mut(0)?.image),
            "x".to_string(),
        );
        assert_eq!(app.workloads[0].containers[0].image.v, "");
        assert!(app.load_error.is_some());
        // A path the model lacks, and a block with no such value.
        let mut app = self::app();
        assign(
            &mut app,
            4,
            |a| a.workloads.get_mut(5)?.replicas.as_mut(),
            1_i64,
        );
        let mut other = self::app();
        assign(
            &mut other,
            8,
            |a| Some(&mut a.workloads.get_mut(0)?.pod),
            "x".to_string(),
        );
        for app in [app, other] {
            let error = app.load_error.expect("a load error");
            assert!(error.contains("has no place for the value of"), "{error}");
        }
    }
}
