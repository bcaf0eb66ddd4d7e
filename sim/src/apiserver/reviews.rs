//! The self reviews clients ask about themselves: SelfSubjectAccessReview (`kubectl auth can-i`),
//! SelfSubjectRulesReview (`kubectl auth can-i --list`) and SelfSubjectReview (`kubectl auth
//! whoami`), answered for the request's user by the same RBAC evaluation requests get.

use serde_json::{Value, json};

use super::attributes::Attributes;
use super::identity::UserInfo;
use super::rbac;
use crate::app::App;
use crate::status::ApiError;

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn access(app: &App, user: &UserInfo, spec: &Value) -> Result<Value, ApiError> {
    let a = if let Some(r) = spec.get("resourceAttributes").filter(|r| r.is_object()) {
        Attributes::resource(
            user,
            str_at(r, "verb"),
            str_at(r, "group"),
            str_at(r, "resource"),
            str_at(r, "subresource"),
            str_at(r, "namespace"),
            str_at(r, "name"),
        )
    } else if let Some(n) = spec.get("nonResourceAttributes").filter(|n| n.is_object()) {
        Attributes::non_resource(user, str_at(n, "verb"), str_at(n, "path"))
    } else {
        return Err(ApiError::invalid(
            "authorization.k8s.io",
            "SelfSubjectAccessReview",
            "",
            vec![crate::status::Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified".into(),
                field: "spec.resourceAttributes".into(),
            }],
        ));
    };
    if !app.rbac || user.is_master() {
        return Ok(json!({"allowed": true}));
    }
    Ok(match rbac::decide(app, &a)? {
        Some(reason) => json!({"allowed": true, "reason": reason}),
        None => json!({"allowed": false}),
    })
}

fn rules(app: &App, user: &UserInfo, namespace: &str) -> Result<Value, ApiError> {
    let all = if !app.rbac || user.is_master() {
        vec![
            json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
            json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
        ]
    } else {
        rbac::rules_of(app, user, namespace)?
    };
    let (mut resource_rules, mut non_resource_rules) = (Vec::new(), Vec::new());
    for r in all {
        if r.get("nonResourceURLs").is_some_and(|u| u.is_array()) {
            non_resource_rules
                .push(json!({"verbs": r["verbs"], "nonResourceURLs": r["nonResourceURLs"]}));
        } else {
            let mut rule = json!({"verbs": r["verbs"], "apiGroups": r["apiGroups"], "resources": r["resources"]});
            if let Some(names) = r.get("resourceNames").filter(|n| n.is_array()) {
                rule["resourceNames"] = names.clone();
            }
            resource_rules.push(rule);
        }
    }
    Ok(
        json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules, "incomplete": false}),
    )
}

/// The `status` of a review of `kind` with body `body`, for `user`.
pub fn answer(app: &App, user: &UserInfo, kind: &str, body: &Value) -> Result<Value, ApiError> {
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    match kind {
        "SelfSubjectAccessReview" => access(app, user, &spec),
        "SelfSubjectRulesReview" => rules(app, user, str_at(&spec, "namespace")),
        _ => Ok(json!({"userInfo": user.to_json()})),
    }
}
