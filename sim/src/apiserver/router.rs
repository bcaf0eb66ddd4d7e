//! Maps request paths to what they address: health and version endpoints, discovery, OpenAPI, or a
//! resource (collection, object or subresource).

/// A resource request's coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The API group (`""` for the core group, `/api/v1`).
    pub group: String,
    /// The version (`v1`).
    pub version: String,
    /// The plural resource name (`pods`).
    pub resource: String,
    /// The namespace, for namespaced paths (`/namespaces/NS/RESOURCE…`); `None` otherwise.
    pub namespace: Option<String>,
    /// The object's name; `None` for a collection.
    pub name: Option<String>,
    /// The subresource (`status`, `scale`, `log`, …); `None` for the object or collection itself.
    pub subresource: Option<String>,
}

/// What a path addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/healthz`, `/readyz` and `/livez` (and their sub-paths).
    Health,
    /// `/openapi/v3`: the index of OpenAPI v3 documents.
    OpenApiIndex,
    /// `/openapi/v3/PATH`: one OpenAPI v3 document (`api/v1`, `apis/GROUP/VERSION`, `version`, …).
    OpenApiDoc {
        /// The PATH below `/openapi/v3/`.
        path: String,
    },
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/api`: the core API versions.
    ApiVersions,
    /// `/apis`: the API groups.
    Apis,
    /// `/apis/GROUP`: one API group.
    ApiGroup {
        /// The API group.
        group: String,
    },
    /// `/api/VERSION` or `/apis/GROUP/VERSION`: the resources of a group-version.
    ApiResources {
        /// The API group (`""` for `/api/VERSION`).
        group: String,
        /// The version.
        version: String,
    },
    /// A resource path: collection, object or subresource.
    Resource(Target),
    /// Anything else.
    NotFound,
}

/// Routes a path (without query string).
pub fn route(path: &str) -> Route {
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["openapi", "v3"] => Route::OpenApiIndex,
        ["openapi", "v3", rest @ ..] => Route::OpenApiDoc {
            path: rest.join("/"),
        },
        ["openapi", "v2"] => Route::OpenApiV2,
        ["api"] => Route::ApiVersions,
        ["apis"] => Route::Apis,
        ["api", v] => Route::ApiResources {
            group: String::new(),
            version: v.to_string(),
        },
        ["apis", g] => Route::ApiGroup {
            group: g.to_string(),
        },
        ["apis", g, v] => Route::ApiResources {
            group: g.to_string(),
            version: v.to_string(),
        },
        ["api", v, rest @ ..] => resource("", v, rest),
        ["apis", g, v, rest @ ..] => resource(g, v, rest),
        _ => Route::NotFound,
    }
}

/// A deprecated watch path (`/api/v1/watch/…`, `/apis/GROUP/VERSION/watch/…`, still served by
/// kube-apiserver 1.33): the path without its `watch` segment, and the object's name for a watch of one
/// object (which watches its collection with `fieldSelector=metadata.name=NAME`).
pub fn legacy_watch(path: &str) -> Option<(String, Option<String>)> {
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let (prefix, rest) = match segs.as_slice() {
        ["api", v, "watch", rest @ ..] => (format!("/api/{v}"), rest),
        ["apis", g, v, "watch", rest @ ..] => (format!("/apis/{g}/{v}"), rest),
        _ => return None,
    };
    let (collection, name) = match rest {
        [res] => (vec![*res], None),
        [res, name] => (vec![*res], Some(*name)),
        ["namespaces", ns, res] => (vec!["namespaces", ns, res], None),
        ["namespaces", ns, res, name] => (vec!["namespaces", ns, res], Some(*name)),
        _ => return None,
    };
    Some((
        format!("{prefix}/{}", collection.join("/")),
        name.map(String::from),
    ))
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Route {
    let t = |ns: Option<&str>, res: &str, name: Option<&str>, sub: Option<&str>| {
        Route::Resource(Target {
            group: group.to_string(),
            version: version.to_string(),
            resource: res.to_string(),
            namespace: ns.map(String::from),
            name: name.map(String::from),
            subresource: sub.map(String::from),
        })
    };
    match rest {
        [res] => t(None, res, None, None),
        [res, name] => t(None, res, Some(name), None),
        ["namespaces", name, sub @ ("status" | "finalize")] => {
            t(None, "namespaces", Some(name), Some(sub))
        }
        ["namespaces", ns, res] => t(Some(ns), res, None, None),
        ["namespaces", ns, res, name] => t(Some(ns), res, Some(name), None),
        [
            "namespaces",
            ns,
            res @ ("pods" | "services"),
            name,
            "proxy",
            ..,
        ] => t(Some(ns), res, Some(name), Some("proxy")),
        ["namespaces", ns, res, name, sub] => t(Some(ns), res, Some(name), Some(sub)),
        ["nodes", name, "proxy", ..] => t(None, "nodes", Some(name), Some("proxy")),
        [res, name, sub] => t(None, res, Some(name), Some(sub)),
        _ => Route::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(path: &str) -> Target {
        match route(path) {
            Route::Resource(t) => t,
            other => panic!("{path} routed to {other:?}"),
        }
    }

    #[test]
    fn routes_resources() {
        let t = target("/apis/apps/v1/namespaces/default/deployments/web/scale");
        assert_eq!(
            (
                t.group.as_str(),
                t.resource.as_str(),
                t.namespace.as_deref(),
                t.name.as_deref(),
                t.subresource.as_deref()
            ),
            (
                "apps",
                "deployments",
                Some("default"),
                Some("web"),
                Some("scale")
            )
        );
        let ns = target("/api/v1/namespaces/team");
        assert_eq!(
            (ns.resource.as_str(), ns.namespace, ns.name.as_deref()),
            ("namespaces", None, Some("team"))
        );
        let st = target("/api/v1/namespaces/team/status");
        assert_eq!(st.subresource.as_deref(), Some("status"));
        let cms = target("/api/v1/namespaces/team/configmaps");
        assert_eq!((cms.namespace.as_deref(), cms.name), (Some("team"), None));
        assert_eq!(
            route("/apis/apps/v1"),
            Route::ApiResources {
                group: "apps".into(),
                version: "v1".into()
            }
        );
        assert_eq!(route("/healthz/ping"), Route::Health);
        assert_eq!(
            target("/api/v1/nodes/n1/proxy/healthz")
                .subresource
                .as_deref(),
            Some("proxy")
        );
        assert_eq!(
            legacy_watch("/api/v1/watch/namespaces/team/configmaps/a"),
            Some((
                "/api/v1/namespaces/team/configmaps".into(),
                Some("a".into())
            ))
        );
        assert_eq!(
            legacy_watch("/apis/apps/v1/watch/deployments"),
            Some(("/apis/apps/v1/deployments".into(), None))
        );
        assert_eq!(legacy_watch("/api/v1/configmaps"), None);
        assert_eq!(route("/nope"), Route::NotFound);
    }
}
