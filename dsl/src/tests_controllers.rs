//! Controllers' options lowered into the model: `owns`, `watches`, a finalizer's own name and the retry
//! policy, and their errors (the trybuild cases in `tests/ui` show them as rustc prints them).

use crate::tests::{check, errors};
use piceli_core::model::{OwnerMapping, RelatedKind};

#[test]
fn owned_and_watched_kinds_a_finalizer_name_and_a_backoff_reach_the_model() {
    let checked = check(
        "operator gen { image: IMAGE } \
         controller gen on configmaps (finalizer: \"example.com/cleanup\") { \
           owns: [secrets, deployments.apps], \
           watches: [services => by_label(\"app\"), namespaces => by_name], \
           backoff: { base: \"50ms\", max: \"2s\" } } => ops::reconcile;",
    )
    .unwrap_or_else(|e| panic!("the app checks: {e:?}"));
    let c = &checked.app.controllers[0];
    assert_eq!(c.finalizer_name.as_deref(), Some("example.com/cleanup"));
    assert!(c.finalizer);
    assert_eq!(c.backoff_ms, Some((50, 2000)));
    let secrets = RelatedKind {
        resource: "secrets".into(),
        group: String::new(),
        version: "v1".into(),
        kind: "Secret".into(),
        plural: "secrets".into(),
        namespaced: true,
        custom: false,
    };
    assert_eq!(c.owns[0], secrets);
    assert_eq!(
        (c.owns[1].group.as_str(), c.owns[1].kind.as_str()),
        ("apps", "Deployment")
    );
    assert_eq!(c.watches[0].0.kind, "Service");
    assert_eq!(c.watches[0].1, OwnerMapping::Label("app".into()));
    assert_eq!(c.watches[1].1, OwnerMapping::Name);
    assert!(!c.watches[1].0.namespaced, "namespaces are cluster-scoped");
}

#[test]
fn the_defaults_stay_without_the_new_options() {
    let checked = check(
        "operator gen { image: IMAGE } controller gen on configmaps (finalizer) => ops::reconcile;",
    )
    .unwrap_or_else(|e| panic!("the app checks: {e:?}"));
    let c = &checked.app.controllers[0];
    assert_eq!((c.finalizer_name.as_ref(), c.backoff_ms), (None, None));
    assert!(c.owns.is_empty() && c.watches.is_empty());
}

#[test]
fn wrong_owns_watches_finalizer_names_and_backoffs_are_each_one_error_with_help() {
    let errors = errors(
        "operator gen { image: IMAGE } \
         controller gen on configmaps (finalizer: \"cleanup\") { \
           owns: [secretz], \
           watches: [services => by_lable(\"app\"), secrets, pods => by_label(\"a=b\")], \
           backoff: { base: \"1m\", max: \"1s\", cap: \"2s\" } } => ops::reconcile;",
    );
    let all = errors.join("\n---\n");
    for (i, expected) in [
        "finalizer name: `cleanup` is not domain-qualified",
        "a watched resource maps to its owner",
        "a watched resource needs the rule",
        "`a=b` is not a label key",
        "`cap` is not a backoff setting",
        "the backoff's `base` is longer than its `max`",
        "`secretz` is neither a 1.33 resource",
    ]
    .iter()
    .enumerate()
    {
        assert!(
            errors.get(i).is_some_and(|e| e.contains(expected)),
            "{i}: {expected}\n\n{all}"
        );
    }
    assert_eq!(errors.len(), 7, "no follow-on errors:\n{all}");
    assert!(all.contains("did you mean `by_label`?"), "{all}");
    assert!(all.contains("did you mean `secrets`?"), "{all}");
}

#[test]
fn the_apps_functions_for_reconcile_all_on_and_backoff_reach_the_model_and_the_expansion() {
    let checked = check(
        "operator gen { image: IMAGE } \
         controller gen on configmaps { reconcile_all_on: ops::config_changes, backoff: my_backoff } \
           => ops::reconcile; \
         controller other on configmaps { backoff: { base: \"1s\", max: \"1m\" } } => ops::reconcile;",
    )
    .unwrap_or_else(|e| panic!("the app checks: {e:?}"));
    let c = &checked.app.controllers[0];
    let text = |s: &Option<piceli_core::spanned::Spanned<String>>| s.as_ref().map(|s| s.v.clone());
    assert_eq!(
        text(&c.reconcile_all_on).as_deref(),
        Some("ops::config_changes")
    );
    assert_eq!(text(&c.backoff_fn).as_deref(), Some("my_backoff"));
    assert_eq!(c.backoff_ms, None);
    let other = &checked.app.controllers[1];
    assert_eq!(
        (other.backoff_ms, other.backoff_fn.is_none()),
        (Some((1000, 60_000)), true)
    );
    let code = crate::expand::expand(checked, true)
        .to_string()
        .replace(' ', "");
    assert!(
        code.contains("::piceli::__private::reconcile_all_on(o,ops::config_changes)"),
        "{code}"
    );
    assert!(
        code.contains("::piceli::__private::backoff_fn(o,my_backoff)"),
        "{code}"
    );
    assert_eq!(code.matches("backoff_fn(").count(), 1, "{code}");
}

#[test]
fn a_function_option_that_is_not_a_path_is_an_error_with_help() {
    let errors = errors(
        "operator gen { image: IMAGE } \
         controller gen on configmaps { reconcile_all_on: \"changes\", backoff: 5 } => ops::reconcile;",
    );
    let all = errors.join("\n---\n");
    assert_eq!(errors.len(), 2, "{all}");
    // In the order of the options table: `backoff` before `reconcile_all_on`.
    assert!(
        errors[0].contains("expected the path of a Rust function, found a number"),
        "{all}"
    );
    assert!(
        errors[1].contains("expected the path of a Rust function, found a string"),
        "{all}"
    );
    assert!(all.contains("backoff: ops::my_backoff"), "{all}");
}

/// Without piceli's `operator` feature, the first controller or webhook is PCL0240 (one error: one line of
/// Cargo.toml fixes them all), and the expansion emits no `webhooks()`/`controllers()` to fail after it.
#[test]
fn without_the_operator_feature_the_first_declaration_is_pcl0250_and_nothing_follows() {
    let source = crate::tests::source(
        "operator gen { image: IMAGE } \
         validate one on configmaps (CREATE) => ops::one; \
         controller gen on configmaps => ops::reconcile;",
    );
    let input: crate::ast::Input = syn::parse_str(&source).expect("parses");
    let errors = match crate::valid::check(input, false) {
        Ok(_) => panic!("a webhook without the operator feature checks"),
        Err((errors, _)) => errors.iter().map(ToString::to_string).collect::<Vec<_>>(),
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "PCL0240: this app declares an admission webhook, but piceli's `operator` feature is off"
        ) && errors[0].contains("features = [\"operator\"]"),
        "{errors:?}"
    );
    let fallback = crate::expand::fallback(Vec::new(), Some("demo".into()), false).to_string();
    assert!(
        !fallback.contains("webhooks") && !fallback.contains("controllers"),
        "{fallback}"
    );
    // With the feature, the same app checks and its module registers both.
    let input: crate::ast::Input = syn::parse_str(&source).expect("parses");
    let checked = crate::valid::check(input, true).unwrap_or_else(|_| panic!("checks"));
    let code = crate::expand::expand(checked, true).to_string();
    assert!(
        code.contains("pub fn webhooks") && code.contains(". operator (webhooks , controllers)"),
        "{code}"
    );
}
