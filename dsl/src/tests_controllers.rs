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
