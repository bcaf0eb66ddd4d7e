//! The request pipeline: authentication and impersonation, RBAC authorization, body reading,
//! routing, and dispatch to the discovery, OpenAPI and resource handlers.

mod limits;
pub use limits::MAX_HEAD;
mod read;
mod scale;
mod watch;
pub(crate) use watch::{DEFAULT_BOOKMARK_INTERVAL, bookmark_interval};
mod write;

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, header};
use serde_json::json;

use crate::apiserver::attributes::Attributes;
use crate::apiserver::http::{Query, Req, Resp, error, json as json_resp, raw};
use crate::apiserver::router::{Route, Target, route};
use crate::apiserver::{UserInfo, identity, rbac, reviews, tokens};
use crate::apiserver::{discovery, openapi};
use crate::app::App;
use crate::registry::ResourceType;
use crate::status::ApiError;

/// Handles one HTTP request.
pub async fn handle(app: Arc<App>, req: Request<hyper::body::Incoming>) -> Resp {
    let user = match identity::authenticate(&app, req.headers()) {
        Ok(u) => u,
        Err(e) => return error(&e),
    };
    let (parts, body) = req.into_parts();
    if let Err(e) = limits::check_head(&parts) {
        return error(&e);
    }
    let query = Query::parse(parts.uri.query().unwrap_or(""));
    let target = route(parts.uri.path());
    let (user, policy) = match authorize(&app, user, &parts, &query, &target).await {
        Ok(u) => u,
        Err(e) => return error(&e),
    };
    if let Route::Resource(t) = &target
        && crate::kubelet::stream::is_stream(t)
    {
        let t = t.clone();
        return crate::kubelet::stream::handle(app, Request::from_parts(parts, body), t).await;
    }
    if let Route::Resource(t) = &target
        && crate::apiserver::proxy::is_proxy(t)
    {
        let t = t.clone();
        return crate::apiserver::proxy::handle(app, Request::from_parts(parts, body), t).await;
    }
    let body = match limits::read_body(body).await {
        Ok(b) => b,
        Err(e) => return error(&e),
    };
    let req = Req {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query,
        headers: parts.headers,
        body,
        user,
        policy,
    };
    match target {
        Route::Resource(t) => resource(app, req, t).await,
        other => {
            if req.method != Method::GET && req.method != Method::HEAD {
                return error(&ApiError::method_not_allowed(&req.path));
            }
            match non_resource(&app, &req, other) {
                Ok(r) => r,
                Err(e) => error(&e),
            }
        }
    }
}

/// Applies impersonation and authorizes the request by RBAC: in place when the cached policy is
/// current, off the async threads when it must be read from the store first. Returns the user and
/// the policy that authorized the request (`None` when RBAC did not apply).
async fn authorize(
    app: &Arc<App>,
    user: UserInfo,
    parts: &http::request::Parts,
    query: &Query,
    target: &Route,
) -> Result<(UserInfo, Option<Arc<rbac::Policy>>), ApiError> {
    let impersonating = parts.headers.contains_key("impersonate-user")
        || parts.headers.contains_key("impersonate-group");
    if !impersonating && (!app.rbac || user.is_master()) {
        return Ok((user, None));
    }
    let mut attrs = Attributes::of_request(&parts.method, target, parts.uri.path(), query);
    let check = move |app: &App, policy: Arc<rbac::Policy>, headers: &http::HeaderMap| {
        attrs.user = identity::impersonate(app, user, headers)?;
        rbac::authorize_by(app, &policy, &attrs)?;
        Ok((attrs.user, Some(policy)))
    };
    if let Some(policy) = app.rbac_policy.current(app) {
        return check(app, policy, &parts.headers);
    }
    let (app, headers) = (app.clone(), parts.headers.clone());
    tokio::task::spawn_blocking(move || check(&app, app.rbac_policy.get(&app)?, &headers))
        .await
        .map_err(ApiError::internal)?
}

fn non_resource(app: &App, req: &Req, r: Route) -> Result<Resp, ApiError> {
    let types = app.registry.all();
    let accept = req.header(header::ACCEPT);
    Ok(match r {
        Route::Version => json_resp(
            200,
            &json!({
                "major": "1", "minor": "33", "gitVersion": "v1.33.0-piceli-sim", "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean", "buildDate": "2025-04-23T00:00:00Z", "goVersion": "go1.24.2", "compiler": "gc",
                "platform": "linux/amd64",
            }),
        ),
        Route::Health => raw(200, "text/plain; charset=utf-8", Bytes::from_static(b"ok")),
        Route::OpenApiIndex => json_resp(200, &openapi::index(&types)),
        Route::OpenApiDoc { group, version } => match openapi::document(&types, &group, &version) {
            Some(doc) => json_resp(200, &doc),
            None => return Err(ApiError::no_route()),
        },
        Route::OpenApiV2 => return Err(ApiError::no_route()),
        Route::ApiVersions => match discovery::aggregated_wanted(accept) {
            Some(ct) => raw(
                200,
                ct,
                Bytes::from(discovery::aggregated(&types, true, ct).to_string()),
            ),
            None => json_resp(200, &discovery::api_versions(&app.addr)),
        },
        Route::Apis => match discovery::aggregated_wanted(accept) {
            Some(ct) => raw(
                200,
                ct,
                Bytes::from(discovery::aggregated(&types, false, ct).to_string()),
            ),
            None => json_resp(200, &discovery::api_group_list(&types)),
        },
        Route::ApiGroup { group } => match discovery::api_group(&types, &group) {
            Some(doc) => json_resp(200, &doc),
            None => return Err(ApiError::no_route()),
        },
        Route::ApiResources { group, version } => {
            match discovery::api_resource_list(&types, &group, &version) {
                Some(doc) => json_resp(200, &doc),
                None => return Err(ApiError::no_route()),
            }
        }
        Route::Resource(_) | Route::NotFound => return Err(ApiError::no_route()),
    })
}

/// The resolved type and coordinates of a resource request.
pub struct Resolved {
    pub rt: ResourceType,
    pub ns: String,
    pub name: Option<String>,
    pub sub: Option<String>,
}

fn resolve(app: &App, t: Target) -> Result<Resolved, ApiError> {
    let rt = app
        .registry
        .lookup(&t.group, &t.version, &t.resource)
        .ok_or_else(ApiError::no_route)?;
    if !rt.namespaced && t.namespace.is_some() {
        return Err(ApiError::no_route());
    }
    if rt.namespaced && t.namespace.is_none() && t.name.is_some() {
        return Err(ApiError::no_route());
    }
    match t.subresource.as_deref() {
        None => {}
        Some("status") if rt.status_subresource => {}
        Some("scale") if rt.scale.is_some() => {}
        Some("finalize") if rt.kind == "Namespace" => {}
        Some("token") if rt.kind == "ServiceAccount" => {}
        Some(_) => return Err(ApiError::no_route()),
    }
    Ok(Resolved {
        rt,
        ns: t.namespace.unwrap_or_default(),
        name: t.name,
        sub: t.subresource,
    })
}

async fn resource(app: Arc<App>, req: Req, t: Target) -> Resp {
    let r = match resolve(&app, t) {
        Ok(r) => r,
        Err(e) => return error(&e),
    };
    let watching = req.query.flag("watch");
    if req.method == Method::GET && r.name.is_none() {
        // ListOptions decoding: integers that do not parse are the apiserver's 400.
        for key in ["limit", "timeoutSeconds"] {
            if let Err(e) = req.query.int64(key) {
                return error(&e);
            }
        }
    }
    if req.method == Method::GET
        && r.name.is_none()
        && let Err(e) = wait_for_resource_version(&app, &req).await
    {
        return error(&e);
    }
    if req.method == Method::GET && r.name.is_none() && watching {
        return watch::watch(app, req, r).await;
    }
    let app2 = app.clone();
    let result = tokio::task::spawn_blocking(move || dispatch(&app2, &req, &r)).await;
    match result {
        Ok(Ok(resp)) => resp,
        Ok(Err(e)) => error(&e),
        Err(e) => error(&ApiError::internal(e)),
    }
}

/// How long a list or watch from a future resourceVersion waits for the store to reach it (as the
/// watch cache's `waitUntilFreshAndBlock`).
const FRESHNESS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Waits until the store has reached a list's or watch's `resourceVersion`; 504 when it does not.
async fn wait_for_resource_version(app: &App, req: &Req) -> Result<(), ApiError> {
    let Some(want) = req
        .query
        .get("resourceVersion")
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|v| *v > 0)
    else {
        return Ok(());
    };
    let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
    loop {
        let current = app.store.current_rv()?;
        if current >= want {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ApiError::resource_version_too_large(want, current));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

fn dispatch(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    if r.rt.create_only {
        return match (&req.method, r.name.as_deref()) {
            (&Method::POST, None) => review(app, req, r),
            _ => Err(ApiError::method_not_allowed(&req.path)),
        };
    }
    let sub = r.sub.as_deref().unwrap_or("");
    match (&req.method, r.name.as_deref(), sub) {
        (&Method::GET, None, _) => read::list(app, req, r),
        (&Method::POST, None, _) => write::create(app, req, r),
        (&Method::DELETE, None, _) => write::delete_collection(app, req, r),
        (_, Some(name), "scale") => scale::handle(app, req, r, name),
        (&Method::POST, Some(name), "token") => {
            let body = write::decode_body(req)?;
            Ok(json_resp(
                201,
                &tokens::token_request(app, &r.ns, name, &body)?,
            ))
        }
        (_, Some(_), "token") => Err(ApiError::method_not_allowed(&req.path)),
        (&Method::GET, Some(name), _) => read::get(app, req, r, name),
        (&Method::PUT, Some(name), _) => write::update(app, req, r, name),
        (&Method::PATCH, Some(name), _) => write::patch(app, req, r, name),
        (&Method::DELETE, Some(name), "") => write::delete(app, req, r, name),
        _ => Err(ApiError::method_not_allowed(&req.path)),
    }
}

/// Answers an access or identity review for the request's user.
fn review(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    let mut body = write::decode_body(req)?;
    let status = reviews::answer(app, &req.user, &r.rt.kind, &r.ns, &body)?;
    body["apiVersion"] = json!(r.rt.api_version());
    body["kind"] = json!(r.rt.kind);
    body["status"] = status;
    if body.get("metadata").is_none() {
        body["metadata"] = json!({});
    }
    Ok(json_resp(201, &body))
}
