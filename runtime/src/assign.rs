//! Maps and lists written as Rust expressions (`pod_labels: (common())`, `args: (flags())`): the code
//! `app!` generates assigns each one to its field by a typed path (`|w| &mut w.pod_labels`), the workload
//! and container found by name. The values are then checked by the same rules as written ones.

use piceli_core::model::{App, Container, Labels, Workload};
use piceli_core::spanned::{Loc, Spanned};
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

/// A value the generated assignments put into a field of type `F`, each part located at the expression.
pub trait Assign<F> {
    /// Put the value into `field`.
    fn assign(self, field: &mut F, at: Loc);
}

impl Assign<Labels> for Vec<(String, String)> {
    fn assign(self, field: &mut Labels, at: Loc) {
        field.extend(
            self.into_iter()
                .map(|(k, v)| (Spanned::new(k, at), Spanned::new(v, at))),
        );
    }
}

impl Assign<Vec<Spanned<String>>> for Vec<String> {
    fn assign(self, field: &mut Vec<Spanned<String>>, at: Loc) {
        field.extend(self.into_iter().map(|s| Spanned::new(s, at)));
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
        Some(w) => value.assign(field(w), Loc(at)),
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
        Some(c) => value.assign(field(c), Loc(at)),
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
}
