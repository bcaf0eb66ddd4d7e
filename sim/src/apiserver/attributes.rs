//! Authorization attributes of a request (kube-apiserver's `RequestInfo`): the verb (get, list,
//! watch, create, update, patch, delete, deletecollection) and the resource, or the path of a
//! non-resource URL; and the 403 a denial answers, worded as the apiserver words it.

use http::Method;

use super::identity::UserInfo;
use crate::apiserver::query::Query;
use crate::apiserver::router::Route;
use crate::status::ApiError;

/// What is asked, by whom.
#[derive(Debug, Clone)]
pub struct Attributes {
    pub user: UserInfo,
    pub verb: String,
    /// `false`: a non-resource URL (`path`).
    pub resource_request: bool,
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub path: String,
}

impl Attributes {
    /// A resource request.
    pub fn resource(
        user: &UserInfo,
        verb: &str,
        group: &str,
        resource: &str,
        subresource: &str,
        namespace: &str,
        name: &str,
    ) -> Attributes {
        Attributes {
            user: user.clone(),
            verb: verb.into(),
            resource_request: true,
            group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            path: String::new(),
        }
    }

    /// A non-resource URL (`/version`, `/healthz`, `/apis`, …).
    pub fn non_resource(user: &UserInfo, verb: &str, path: &str) -> Attributes {
        Attributes {
            user: user.clone(),
            verb: verb.into(),
            resource_request: false,
            group: String::new(),
            resource: String::new(),
            subresource: String::new(),
            namespace: String::new(),
            name: String::new(),
            path: path.into(),
        }
    }

    /// The attributes of an HTTP request to `path`, which routes to `target`; the user is set by the
    /// caller (after impersonation).
    pub fn of_request(method: &Method, target: &Route, path: &str, query: &Query) -> Attributes {
        let Route::Resource(t) = target else {
            let verb = match *method {
                Method::HEAD => "get".to_string(),
                ref m => m.as_str().to_ascii_lowercase(),
            };
            return Attributes::non_resource(&UserInfo::default(), &verb, path);
        };
        let named = t.name.is_some();
        let sub = t.subresource.as_deref().unwrap_or("");
        let verb = match *method {
            // Streams over websockets need `create` as their POST form does (kube-apiserver 1.31+).
            Method::GET if matches!(sub, "exec" | "attach" | "portforward") => "create",
            Method::GET | Method::HEAD if query.flag("watch") => "watch",
            Method::GET | Method::HEAD if named => "get",
            Method::GET | Method::HEAD => "list",
            Method::POST => "create",
            Method::PUT => "update",
            Method::PATCH => "patch",
            Method::DELETE if named => "delete",
            Method::DELETE => "deletecollection",
            _ => "",
        };
        let name = t.name.as_deref().unwrap_or("");
        // A Namespace is in itself, as RequestInfo has it.
        let namespace = match t.namespace.as_deref() {
            Some(ns) => ns,
            None if t.group.is_empty() && t.resource == "namespaces" => name,
            None => "",
        };
        Attributes::resource(
            &UserInfo::default(),
            verb,
            &t.group,
            &t.resource,
            sub,
            namespace,
            name,
        )
    }

    /// `resource/subresource`.
    pub fn full_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }

    /// The 403 of a denied request (kube-apiserver's `forbiddenMessage` and `NewForbidden`).
    pub fn forbidden(&self) -> ApiError {
        let user = &self.user.name;
        let verb = &self.verb;
        if !self.resource_request {
            let why = format!("User \"{user}\" cannot {verb} path \"{}\"", self.path);
            return ApiError::forbidden_resource("", "", "", &why);
        }
        let scope = if self.namespace.is_empty() {
            "at the cluster scope".to_string()
        } else {
            format!("in the namespace \"{}\"", self.namespace)
        };
        let why = format!(
            "User \"{user}\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
            self.full_resource(),
            self.group
        );
        ApiError::forbidden_resource(&self.group, &self.resource, &self.name, &why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(method: Method, path: &str, query: &str) -> Attributes {
        let target = crate::apiserver::router::route(path);
        Attributes::of_request(&method, &target, path, &Query::parse(query))
    }

    #[test]
    fn verbs_follow_request_info() {
        let a = of(Method::GET, "/api/v1/namespaces/d/pods", "");
        assert_eq!((a.verb.as_str(), a.namespace.as_str()), ("list", "d"));
        let w = of(Method::GET, "/api/v1/pods", "watch=1");
        assert_eq!(w.verb, "watch");
        let s = of(
            Method::PUT,
            "/apis/apps/v1/namespaces/d/deployments/web/scale",
            "",
        );
        assert_eq!(s.full_resource(), "deployments/scale");
        assert_eq!(s.verb, "update");
        let d = of(Method::DELETE, "/api/v1/namespaces/d/pods", "");
        assert_eq!(d.verb, "deletecollection");
        let n = of(Method::GET, "/version", "");
        assert!(!n.resource_request);
        assert_eq!(n.path, "/version");
        let ns = of(Method::GET, "/api/v1/namespaces/d", "");
        assert_eq!((ns.verb.as_str(), ns.namespace.as_str()), ("get", "d"));
    }

    #[test]
    fn forbidden_is_worded_as_the_apiserver() {
        let u = UserInfo::service_account("d", "bot", "");
        let a = Attributes::resource(&u, "get", "apps", "deployments", "", "d", "web");
        assert_eq!(
            a.forbidden().message,
            "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:d:bot\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"d\""
        );
        let n = Attributes::resource(&u, "list", "", "nodes", "", "", "");
        assert_eq!(
            n.forbidden().message,
            "nodes is forbidden: User \"system:serviceaccount:d:bot\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"
        );
        let p = Attributes::non_resource(&u, "get", "/metrics");
        assert_eq!(
            p.forbidden().message,
            "forbidden: User \"system:serviceaccount:d:bot\" cannot get path \"/metrics\""
        );
    }
}
