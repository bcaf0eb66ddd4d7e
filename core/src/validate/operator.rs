//! The operator and its webhooks: one operator when there are webhooks, a pinned image, resources of the
//! 1.33 API, valid operations, names that qualify to DNS subdomains, one path per webhook, options in
//! range.

use super::Ctx;
use crate::codes::Code;
use crate::model::{App, OperatorTls, WebhookKind, WebhookResource};
use crate::resources::{self, OPERATIONS, RESOURCES};
use crate::rules::{self, did_you_mean};
use std::collections::HashMap;

pub(super) fn check(cx: &mut Ctx, app: &App) {
    operator(cx, app);
    let operator = app.operator.as_ref().map(|o| o.name.v.as_str());
    if operator.is_none()
        && let Some(first) = app.webhooks.first()
    {
        cx.error(
            Code::WebhookWithoutOperator,
            first.name.at,
            format!(
                "`{} {}` has no operator to serve it",
                first.kind.keyword(),
                first.name.v
            ),
            "declare `operator NAME { image: \"…@sha256:…\", tls: cert_manager(issuer: self_signed) }` in this app",
        );
    }
    let mut paths: HashMap<String, ()> = HashMap::new();
    for w in &app.webhooks {
        if let Some(name) = cx.known(&w.name) {
            match rules::dns1123_label(name) {
                Err(e) => cx.error(
                    Code::InvalidWebhookName,
                    w.name.at,
                    format!("webhook {}", e.message),
                    e.help,
                ),
                Ok(()) => {
                    let qualified = w.qualified_name(operator.unwrap_or("operator"));
                    if let Err(e) = rules::dns1123_subdomain(&qualified) {
                        cx.error(
                            Code::InvalidWebhookName,
                            w.name.at,
                            format!("the qualified webhook name: {}", e.message),
                            "shorten the webhook's or the operator's name",
                        );
                    }
                }
            }
            if paths.insert(w.path(), ()).is_some() {
                cx.error(
                    Code::DuplicateWebhook,
                    w.name.at,
                    format!("`{}` is served twice", w.path()),
                    format!("rename one of the `{} {name}` webhooks", w.kind.keyword()),
                );
            }
        }
        let mut listed: Vec<&str> = Vec::new();
        for r in &w.resources {
            let Some(written) = cx.known(&r.name) else {
                continue;
            };
            if listed.contains(&written.as_str()) {
                cx.error(
                    Code::UnknownResource,
                    r.name.at,
                    format!("`{written}` is listed twice"),
                    "list each resource once",
                );
            }
            listed.push(written);
            resource(cx, r);
        }
        let mut seen = Vec::new();
        for op in &w.operations {
            let Some(text) = cx.known(op) else { continue };
            if !OPERATIONS.contains(&text.as_str()) {
                let help =
                    match did_you_mean(&text.to_ascii_uppercase(), OPERATIONS.iter().copied()) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => "use `CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`".to_string(),
                    };
                cx.error(
                    Code::InvalidOperation,
                    op.at,
                    format!("`{text}` is not an admission operation"),
                    help,
                );
            } else if seen.contains(text) {
                cx.error(
                    Code::InvalidOperation,
                    op.at,
                    format!("`{text}` is listed twice"),
                    "list each operation once",
                );
            }
            seen.push(text.clone());
        }
        if w.kind == WebhookKind::Validate
            && let Some(second) = w.handlers.get(1)
        {
            cx.error(
                Code::WebhookHandler,
                second.at,
                format!("validating webhook `{}` has {} handlers", w.name.v, w.handlers.len()),
                "a validating webhook has one handler; only `mutate` runs a list of handlers (a composite)",
            );
        }
        if let Some(t) = &w.timeout
            && let Some(secs) = cx.known(t)
            && !(1..=30).contains(secs)
        {
            cx.error(
                Code::WebhookOption,
                t.at,
                format!("timeout {secs} is outside 1 to 30 seconds"),
                "write e.g. `timeout: 5` (the API server allows 1 to 30 seconds)",
            );
        }
        for (k, v) in w.namespaces.iter().chain(&w.objects) {
            if let Some(key) = cx.known(k) {
                let verdict = rules::label_key(key);
                cx.rule(Code::InvalidLabel, k.at, verdict);
            }
            if let Some(value) = cx.known(v) {
                let verdict = rules::label_value(value);
                cx.rule(Code::InvalidLabel, v.at, verdict);
            }
        }
    }
}

fn operator(cx: &mut Ctx, app: &App) {
    let Some(op) = &app.operator else { return };
    if let Some(name) = cx.known(&op.name) {
        let verdict = rules::rfc1035_label(name);
        cx.rule(Code::InvalidName, op.name.at, verdict);
    }
    if let Some(image) = cx.known(&op.image)
        && app.build_of(image).is_none()
    {
        match rules::parse_image(image) {
            Err(e) => cx.error(Code::InvalidImage, op.image.at, e.message, e.help),
            Ok(_) if !op.unpinned => {
                let verdict = rules::require_digest(image);
                cx.rule(Code::ImageNotPinned, op.image.at, verdict);
            }
            Ok(_) => {}
        }
    }
    if let Some(n) = cx.known(&op.replicas)
        && *n < 1
    {
        cx.error(
            Code::BadBounds,
            op.replicas.at,
            format!("the operator needs at least 1 replica, not {n}"),
            "write `replicas: 2` (2 or more keeps admission available during a rollout)",
        );
    }
    operator_env(cx, app, op);
    match &op.tls {
        OperatorTls::SelfSigned | OperatorTls::SelfManaged => {}
        OperatorTls::ClusterIssuer(name) | OperatorTls::Secret(name) => {
            if let Some(text) = cx.known(name) {
                let verdict = rules::dns1123_subdomain(text);
                cx.rule(Code::InvalidName, name.at, verdict);
            }
        }
    }
}

/// The variables the render sets in the operator's container itself.
const OPERATOR_ENV: [&str; 2] = ["POD_NAME", "POD_NAMESPACE"];

/// `env:` of the operator: a container's rules, and none of the variables the render sets.
fn operator_env(cx: &mut Ctx, app: &App, op: &crate::model::Operator) {
    for e in op
        .env
        .iter()
        .filter(|e| OPERATOR_ENV.contains(&e.name.v.as_str()))
    {
        cx.error(
            Code::DuplicateEnv,
            e.name.at,
            format!("`{}` is set by the operator's render (the pod's name and namespace, its leader-election identity)", e.name.v),
            "remove it from the operator's `env:`",
        );
    }
    super::pods::env(cx, app, &op.env, "the operator's `env:`");
}

/// One resource of a webhook: a 1.33 resource, one of the app's custom resources, or `*.GROUP`.
fn resource(cx: &mut Ctx, r: &WebhookResource) {
    let written = &r.name.v;
    if r.custom || resources::lookup(written).is_some() {
        return;
    }
    if let Some(group) = r.wildcard_group() {
        if group.contains('*') || rules::dns1123_subdomain(group).is_err() || !group.contains('.') {
            cx.error(
                Code::UnknownResource,
                r.name.at,
                format!("`{written}` does not name an API group"),
                "a wildcard is `\"*.GROUP\"` with the group's full name, like `\"*.example.com\"`",
            );
        }
        return;
    }
    let names: Vec<String> = RESOURCES.iter().map(|r| r.written()).collect();
    let guess = did_you_mean(written, names.iter().map(String::as_str))
        .map(str::to_string)
        .or_else(|| {
            // `deployments` without its group, `Deployment` by kind.
            RESOURCES
                .iter()
                .find(|r| r.plural == written || r.kind.eq_ignore_ascii_case(written))
                .map(|r| r.written())
        });
    let help = match guess {
        Some(s) => format!("did you mean `{s}`?"),
        None if written.contains('*') => {
            "a wildcard names every resource of one group: `\"*.example.com\"`".to_string()
        }
        None if written.contains('.') => format!(
            "write a 1.33 resource (`pods`, `deployments.apps`), or declare the type of `{written}` in this app with `custom_resource crate::Lamp;`"
        ),
        None => "write the plural and the API group: `pods`, `deployments.apps`, `jobs.batch`"
            .to_string(),
    };
    cx.error(
        Code::UnknownResource,
        r.name.at,
        format!("the 1.33 API has no resource `{written}`"),
        help,
    );
}

#[cfg(test)]
mod tests {
    use crate::codes::Code;
    use crate::model::{App, Operator, Webhook, WebhookKind, WebhookResource};
    use crate::spanned::{Loc, Spanned};
    use crate::validate::validate;

    fn s(v: &str, at: u32) -> Spanned<String> {
        Spanned::new(v.to_string(), Loc(at))
    }

    fn hook(name: &str, resource: &str, op: &str) -> Webhook {
        Webhook {
            kind: WebhookKind::Validate,
            name: s(name, 10),
            resources: vec![WebhookResource::new(s(resource, 11))],
            operations: vec![s(op, 12)],
            handlers: vec![s("policy::h", 13)],
            ..Webhook::default()
        }
    }

    fn app(webhooks: Vec<Webhook>) -> App {
        App {
            name: s("guard", 0),
            operator: Some(Operator {
                name: s("guard", 1),
                image: s(
                    "ghcr.io/acme/guard:1.0@sha256:4f2a6b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
                    2,
                ),
                replicas: Spanned::new(2, Loc(3)),
                ..Operator::default()
            }),
            webhooks,
            ..App::default()
        }
    }

    fn codes(app: &App) -> Vec<(Code, u32)> {
        validate(app).iter().map(|d| (d.code, d.at.0)).collect()
    }

    #[test]
    fn a_valid_operator_and_webhook_pass() {
        assert_eq!(
            codes(&app(vec![hook("no-latest", "deployments.apps", "CREATE")])),
            []
        );
    }

    #[test]
    fn every_problem_is_reported_at_its_value() {
        let mut dup = hook("no-latest", "deployments.apps", "UPDATE");
        dup.name.at = Loc(20);
        let found = codes(&app(vec![
            hook("no-latest", "deployment.apps", "DESTROY"),
            dup,
        ]));
        assert_eq!(
            found,
            [
                (Code::UnknownResource, 11),
                (Code::InvalidOperation, 12),
                (Code::DuplicateWebhook, 20)
            ]
        );
    }

    #[test]
    fn webhooks_need_an_operator_and_in_range_timeouts() {
        let mut h = hook("no-latest", "pods", "*");
        h.timeout = Some(Spanned::new(31, Loc(14)));
        let mut a = app(vec![h]);
        a.operator = None;
        assert_eq!(
            codes(&a),
            [
                (Code::WebhookWithoutOperator, 10),
                (Code::WebhookOption, 14)
            ]
        );
    }

    #[test]
    fn a_custom_resource_is_not_looked_up_in_the_1_33_table() {
        let mut h = hook("lamp-owner", "lamps.example.com", "CREATE");
        assert_eq!(codes(&app(vec![h.clone()])), [(Code::UnknownResource, 11)]);
        h.resources[0].custom = true;
        assert_eq!(codes(&app(vec![h])), []);
    }

    #[test]
    fn a_webhook_name_must_be_a_dns_label() {
        let found = codes(&app(vec![hook("No_Latest", "pods", "CREATE")]));
        assert_eq!(found, [(Code::InvalidWebhookName, 10)]);
    }

    #[test]
    fn a_generic_webhook_lists_resources_and_group_wildcards() {
        let mut h = hook("add-label", "configmaps", "CREATE");
        h.generic = true;
        for (name, at) in [("secrets", 15), ("*.example.com", 16)] {
            h.resources.push(WebhookResource::new(s(name, at)));
        }
        assert_eq!(codes(&app(vec![h.clone()])), []);
        for (name, at) in [
            ("secrets", 17),
            ("*.example", 18),
            ("*", 19),
            ("*.*.io", 21),
        ] {
            h.resources.push(WebhookResource::new(s(name, at)));
        }
        assert_eq!(
            codes(&app(vec![h])),
            [
                (Code::UnknownResource, 17),
                (Code::UnknownResource, 18),
                (Code::UnknownResource, 19),
                (Code::UnknownResource, 21)
            ]
        );
    }
}
