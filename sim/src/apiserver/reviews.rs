//! The reviews of authentication and authorization: the self reviews clients ask about themselves
//! (SelfSubjectAccessReview for `kubectl auth can-i`, SelfSubjectRulesReview for `can-i --list`,
//! SelfSubjectReview for `kubectl auth whoami`), answered for the request's user, and the reviews
//! delegating servers ask about others (TokenReview: who a bearer token is; SubjectAccessReview
//! and LocalSubjectAccessReview: whether a given user may do something), all by the same
//! authentication and RBAC evaluation requests get.

use serde_json::{Value, json};

use super::attributes::Attributes;
use super::identity::UserInfo;
use super::rbac;
use crate::apiserver::app::App;
use crate::status::ApiError;

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn access(app: &App, user: &UserInfo, spec: &Value) -> Result<Value, ApiError> {
    access_as(app, user, spec, "SelfSubjectAccessReview", None)
}

/// The user a SubjectAccessReview asks about (`spec.user`, `spec.groups`, `spec.uid`).
fn subject(spec: &Value) -> UserInfo {
    UserInfo {
        name: str_at(spec, "user").to_string(),
        uid: str_at(spec, "uid").to_string(),
        groups: spec
            .get("groups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        extra: Vec::new(),
    }
}

/// A SubjectAccessReview's spec must name a user or a group, as kube-apiserver validates it.
fn subject_required(kind: &str, spec: &Value) -> Result<(), ApiError> {
    let who = subject(spec);
    if who.name.is_empty() && who.groups.is_empty() {
        return Err(ApiError::invalid(
            "authorization.k8s.io",
            kind,
            "",
            vec![crate::status::Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: \"\": at least one of user or group must be specified"
                    .into(),
                field: "spec.user".into(),
            }],
        ));
    }
    Ok(())
}

/// Who `spec.token` is: `authenticated` with the user for the admin token and valid ServiceAccount
/// tokens, else `authenticated: false` (kube-apiserver answers a bad token with a 201, not a 401).
fn token(app: &App, spec: &Value) -> Value {
    let token = str_at(spec, "token");
    let user = if !token.is_empty()
        && token.len() == app.token.len()
        && super::identity::constant_time_eq(token.as_bytes(), app.token.as_bytes())
    {
        Some(UserInfo::admin())
    } else {
        super::tokens::authenticate(app, token)
    };
    let audiences = spec
        .get("audiences")
        .filter(|a| a.as_array().is_some_and(|a| !a.is_empty()))
        .cloned()
        .unwrap_or_else(|| json!([super::tokens::API_AUDIENCE]));
    match user {
        Some(u) => json!({"authenticated": true, "user": u.to_json(), "audiences": audiences}),
        None => json!({"user": {}, "error": "[invalid bearer token, token lookup failed]"}),
    }
}

fn access_as(
    app: &App,
    user: &UserInfo,
    spec: &Value,
    kind: &str,
    namespace: Option<&str>,
) -> Result<Value, ApiError> {
    let a = if let Some(r) = spec.get("resourceAttributes").filter(|r| r.is_object()) {
        Attributes::resource(
            user,
            str_at(r, "verb"),
            str_at(r, "group"),
            str_at(r, "resource"),
            str_at(r, "subresource"),
            namespace.unwrap_or(str_at(r, "namespace")),
            str_at(r, "name"),
        )
    } else if let Some(n) = spec.get("nonResourceAttributes").filter(|n| n.is_object()) {
        Attributes::non_resource(user, str_at(n, "verb"), str_at(n, "path"))
    } else {
        return Err(ApiError::invalid(
            "authorization.k8s.io",
            kind,
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
    let everything = || {
        vec![
            json!({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}),
            json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
        ]
    };
    let all = if !app.rbac {
        everything()
    } else {
        // As the RBAC authorizer's RulesFor: every binding the user (or a group of theirs) is a
        // subject of, system:masters' cluster-admin among them.
        let mut rules = rbac::rules_of(app, user, namespace)?;
        let wildcard = rules.iter().any(|r| r["resources"] == json!(["*"]));
        if user.is_master() && !wildcard {
            let mut all = everything();
            all.append(&mut rules);
            rules = all;
        }
        rules
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

/// The `status` of a review of `kind` with body `body`, asked by `user` (in `namespace` for a
/// LocalSubjectAccessReview).
pub fn answer(
    app: &App,
    user: &UserInfo,
    kind: &str,
    namespace: &str,
    body: &Value,
) -> Result<Value, ApiError> {
    let spec = body.get("spec").cloned().unwrap_or_else(|| json!({}));
    match kind {
        "SelfSubjectAccessReview" => access(app, user, &spec),
        "TokenReview" => Ok(token(app, &spec)),
        "SubjectAccessReview" => {
            subject_required(kind, &spec)?;
            access_as(app, &subject(&spec), &spec, kind, None)
        }
        "LocalSubjectAccessReview" => {
            subject_required(kind, &spec)?;
            let asked = spec
                .pointer("/resourceAttributes/namespace")
                .and_then(Value::as_str)
                .unwrap_or("");
            if asked != namespace {
                return Err(ApiError::bad_request(format!(
                    "spec.resourceAttributes.namespace must match namespace: {namespace}"
                )));
            }
            access_as(app, &subject(&spec), &spec, kind, Some(namespace))
        }
        "SelfSubjectRulesReview" => rules(app, user, str_at(&spec, "namespace")),
        _ => Ok(json!({"userInfo": user.to_json()})),
    }
}
