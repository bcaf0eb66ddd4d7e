//! Authentication: who a request is from. The kubeconfig's admin token (`system:masters`), a
//! ServiceAccount token from the TokenRequest API, then impersonation (`Impersonate-User`,
//! `Impersonate-Group`), which the caller must be allowed (`impersonate` on users, groups or
//! serviceaccounts) as kube-apiserver checks it.

use http::HeaderMap;
use http::header::AUTHORIZATION;

use super::attributes::Attributes;
use super::{rbac, tokens};
use crate::apiserver::app::App;
use crate::status::ApiError;

/// The admin user of the kubeconfig a simulator writes.
pub const ADMIN_USER: &str = "piceli-sim-admin";
/// The group whose members skip authorization, as in kube-apiserver.
pub const MASTERS: &str = "system:masters";
/// Every authenticated user's group.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The user of a request without credentials.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group of a request without credentials.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";

/// An authenticated user: name, uid and groups.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// The user name (`system:anonymous` without credentials).
    pub name: String,
    /// The user's uid (may be empty).
    pub uid: String,
    /// The groups the user belongs to.
    pub groups: Vec<String>,
    /// Extra attributes the authenticator adds (a ServiceAccount token's
    /// `authentication.kubernetes.io/credential-id`), in order.
    pub extra: Vec<(String, Vec<String>)>,
}

impl UserInfo {
    /// The admin of the kubeconfig.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: ADMIN_USER.into(),
            uid: String::new(),
            groups: vec![MASTERS.into(), AUTHENTICATED.into()],
            extra: Vec::new(),
        }
    }

    /// The user of a request without credentials, as kube-apiserver's anonymous authenticator.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS.into(),
            uid: String::new(),
            groups: vec![UNAUTHENTICATED.into()],
            extra: Vec::new(),
        }
    }

    /// A ServiceAccount's user (`system:serviceaccount:NS:NAME`) and groups.
    pub fn service_account(ns: &str, name: &str, uid: &str) -> UserInfo {
        UserInfo {
            name: format!("system:serviceaccount:{ns}:{name}"),
            uid: uid.into(),
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{ns}"),
                AUTHENTICATED.into(),
            ],
            extra: Vec::new(),
        }
    }

    /// Whether authorization is skipped for this user (`system:masters`).
    pub fn is_master(&self) -> bool {
        self.groups.iter().any(|g| g == MASTERS)
    }

    /// The user as `userInfo` / `user` fields of reviews.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({"username": self.name, "groups": self.groups});
        if !self.uid.is_empty() {
            v["uid"] = serde_json::json!(self.uid);
        }
        if !self.extra.is_empty() {
            let extra: serde_json::Map<String, serde_json::Value> = self
                .extra
                .iter()
                .map(|(k, vs)| (k.clone(), serde_json::json!(vs)))
                .collect();
            v["extra"] = serde_json::Value::Object(extra);
        }
        v
    }
}

/// The user a request's bearer token names; 401 for an unknown token. A request without a bearer
/// token is `system:anonymous` (group `system:unauthenticated`), which RBAC then authorizes as
/// kube-apiserver does (403 but for `/version`, `/healthz` and the like); with RBAC off
/// (`--no-rbac`), where anything authenticated is allowed, it stays a 401.
pub fn authenticate(app: &App, headers: &HeaderMap) -> Result<UserInfo, ApiError> {
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    let Some(token) = token else {
        return if app.rbac {
            Ok(UserInfo::anonymous())
        } else {
            Err(ApiError::unauthorized())
        };
    };
    if constant_time_eq(token.as_bytes(), app.token.as_bytes()) {
        return Ok(UserInfo::admin());
    }
    tokens::authenticate(app, token).ok_or_else(ApiError::unauthorized)
}

pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Applies `Impersonate-User` / `Impersonate-Group` headers: the caller must be allowed to
/// impersonate each (403 worded as kube-apiserver's otherwise).
pub fn impersonate(app: &App, user: UserInfo, headers: &HeaderMap) -> Result<UserInfo, ApiError> {
    let values = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    };
    let users = values("impersonate-user");
    let groups = values("impersonate-group");
    if users.is_empty() {
        if groups.is_empty() {
            return Ok(user);
        }
        return Err(ApiError::forbidden(
            "requested impersonation of groups without impersonating a user",
        ));
    }
    let target = users[0].clone();
    let (sa, check) = match target
        .strip_prefix("system:serviceaccount:")
        .and_then(|r| r.split_once(':'))
    {
        Some((ns, name)) => (
            Some((ns.to_string(), name.to_string())),
            Attributes::resource(&user, "impersonate", "", "serviceaccounts", "", ns, name),
        ),
        None => (
            None,
            Attributes::resource(&user, "impersonate", "", "users", "", "", &target),
        ),
    };
    rbac::authorize(app, &check)?;
    for g in &groups {
        let check = Attributes::resource(&user, "impersonate", "", "groups", "", "", g);
        rbac::authorize(app, &check)?;
    }
    let mut out = match sa {
        Some((ns, name)) => UserInfo::service_account(&ns, &name, ""),
        None => UserInfo {
            name: target,
            ..UserInfo::default()
        },
    };
    if !groups.is_empty() {
        out.groups = groups;
    }
    if !out.groups.iter().any(|g| g == AUTHENTICATED) && out.name != ANONYMOUS {
        out.groups.push(AUTHENTICATED.into());
    }
    Ok(out)
}
