//! `include objects((…))`: objects built in Rust are known only when the binary runs, so they get the
//! checks an included file gets at compile time here — API versions no longer served, names, the 1.33
//! schema of their spec, images without a digest and another namespace than a target's — with the same
//! codes, each at the include's location.

use super::Ctx;
use crate::codes::Code;
use crate::include::{self as inc, IncludedObject};
use crate::model::{App, Include};
use crate::spanned::Loc;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    for include in &app.includes {
        let Include::Objects {
            at,
            objects,
            keep_namespace,
            images_unpinned,
        } = include
        else {
            continue;
        };
        // Objects without apiVersion, kind or name are refused before rendering (PCL0036, by position).
        let Ok(objects) = inc::flatten_values(objects) else {
            continue;
        };
        for o in &objects {
            object(cx, app, *at, o, !keep_namespace, !images_unpinned);
        }
    }
}

fn object(
    cx: &mut Ctx,
    app: &App,
    at: Loc,
    o: &IncludedObject,
    check_namespace: bool,
    check_images: bool,
) {
    let kind = o.object["kind"].as_str().unwrap_or_default();
    let name = o.object["metadata"]["name"].as_str().unwrap_or_default();
    let what = format!("include objects, object #{}: {kind} `{name}`", o.line);
    for (e, help) in inc::object_problems(o) {
        cx.error(
            e.code,
            at,
            format!("include objects, object #{}: {}", o.line, e.message),
            help,
        );
    }
    for d in inc::schema_problems(&o.object, &what) {
        cx.error(d.code, at, d.message, d.help);
    }
    if check_images {
        for image in inc::unpinned_images(&o.object) {
            cx.error(
                Code::IncludeUnpinnedImage,
                at,
                inc::unpinned_message(&what, &image),
                "pin it by digest (`…@sha256:<digest>`), or write `{ images: unpinned }` after the include to accept tags that can move",
            );
        }
    }
    if check_namespace
        && let Some(ns) = inc::own_namespace(&o.object)
        && let Some(message) = inc::other_namespace(&what, ns, &app.targets)
    {
        cx.error(
            Code::IncludeOtherNamespace,
            at,
            message,
            inc::OTHER_NAMESPACE_HELP,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{App, Include, Target};
    use crate::spanned::{Loc, Spanned};
    use serde_json::json;

    fn app(objects: Vec<serde_json::Value>, keep_namespace: bool, images_unpinned: bool) -> App {
        let mut app = App::new("objects");
        app.targets.push(Target {
            name: Spanned::bare("local".into()),
            namespace: Spanned::bare("shop".into()),
            ..Target::default()
        });
        app.includes.push(Include::Objects {
            at: Loc(7),
            objects,
            keep_namespace,
            images_unpinned,
        });
        app
    }

    fn deployment(
        namespace: Option<&str>,
        image: &str,
        extra_spec_field: bool,
    ) -> serde_json::Value {
        let mut d = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": { "name": "worker" },
            "spec": {
                "selector": { "matchLabels": { "app": "worker" } },
                "template": {
                    "metadata": { "labels": { "app": "worker" } },
                    "spec": { "containers": [{ "name": "worker", "image": image }] }
                }
            }
        });
        if let Some(ns) = namespace {
            d["metadata"]["namespace"] = json!(ns);
        }
        if extra_spec_field {
            d["spec"]["replicaz"] = json!(2);
        }
        d
    }

    const PINNED: &str =
        "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000";

    fn codes(app: &App) -> Vec<&'static str> {
        crate::validate::validate(app)
            .iter()
            .map(|d| d.code.as_str())
            .collect()
    }

    #[test]
    fn a_good_object_has_no_problem() {
        assert_eq!(
            codes(&app(vec![deployment(None, PINNED, false)], false, false)),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn another_namespace_an_unpinned_image_and_an_unknown_field_are_each_reported_at_the_include() {
        let app = app(
            vec![deployment(Some("other"), "nginx:1.27", true)],
            false,
            false,
        );
        let diags = crate::validate::validate(&app);
        let mut codes: Vec<&str> = diags.iter().map(|d| d.code.as_str()).collect();
        codes.sort();
        assert_eq!(codes, ["PCL0045", "PCL0073", "PCL0074"], "{diags:#?}");
        assert!(diags.iter().all(|d| d.at == Loc(7)), "{diags:#?}");
        let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        assert!(
            messages
                .iter()
                .all(|m| m.contains("include objects, object #1")),
            "{messages:?}"
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("`other`") && m.contains("`shop`")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.contains("nginx:1.27")),
            "{messages:?}"
        );
    }

    #[test]
    fn the_include_options_accept_another_namespace_and_moving_tags() {
        let app = app(
            vec![deployment(Some("other"), "nginx:1.27", false)],
            true,
            true,
        );
        assert_eq!(codes(&app), Vec::<&str>::new());
    }

    #[test]
    fn items_of_a_list_are_checked_by_the_lists_position() {
        let list = json!({ "apiVersion": "v1", "kind": "List", "items": [
            { "apiVersion": "extensions/v1beta1", "kind": "Ingress", "metadata": { "name": "old" } }
        ] });
        let app = app(vec![deployment(None, PINNED, false), list], false, false);
        let diags = crate::validate::validate(&app);
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert_eq!(diags[0].code.as_str(), "PCL0058");
        assert!(
            diags[0].message.starts_with("include objects, object #2:"),
            "{}",
            diags[0].message
        );
    }
}
