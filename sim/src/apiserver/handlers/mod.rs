//! The handler at the end of the chain (`filters`): the streaming and proxy hand-offs, body reading,
//! and dispatch to the discovery, OpenAPI and resource handlers of a request the filters let through.

mod delete_options;
pub(crate) mod limits;
pub use limits::MAX_HEAD;
mod pod_subresources;
pub(crate) mod read;
mod scale;
mod watch;
pub(crate) use watch::{DEFAULT_BOOKMARK_INTERVAL, bookmark_interval};
mod write;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, header};
use serde_json::json;

use crate::apiserver::app::App;
use crate::apiserver::filters::authorization::AuthorizedBy;
use crate::apiserver::filters::request_info::RequestInfo;
use crate::apiserver::http::{Req, Resp, error, json as json_resp, raw};
use crate::apiserver::router::{Route, Target};
use crate::apiserver::{UserInfo, reviews, tokens};
use crate::apiserver::{discovery, openapi};
use crate::registry::ResourceType;
use crate::status::ApiError;

/// The innermost service of the handler chain (a `tower::service_fn`).
pub(crate) async fn serve(
    app: Arc<App>,
    req: Request<hyper::body::Incoming>,
) -> Result<Resp, Infallible> {
    Ok(handle(app, req).await)
}

/// Handles one request the filters authenticated and authorized, reading what they put into its
/// extensions: the user, the request's info and the policy that authorized it.
async fn handle(app: Arc<App>, mut req: Request<hyper::body::Incoming>) -> Resp {
    let extensions = req.extensions_mut();
    let (Some(user), Some(info)) = (
        extensions.remove::<UserInfo>(),
        extensions.remove::<RequestInfo>(),
    ) else {
        return error(&ApiError::internal("the request was not authenticated"));
    };
    let policy = extensions.remove::<AuthorizedBy>().map(|p| p.0);
    let RequestInfo {
        query,
        route: target,
    } = info;
    // A stream's or proxy's object is read before anything else but a log's options: a name that
    // cannot be a path segment is the store's 400 first.
    if let Route::Resource(t) = &target
        && (crate::apiserver::stream::is_stream(t) || crate::apiserver::proxy::is_proxy(t))
        && t.subresource.as_deref() != Some("log")
        && let Some(name) = t.name.as_deref()
        && let Err(e) = check_path_name(name)
    {
        return error(&e);
    }
    if let Route::Resource(t) = &target
        && crate::apiserver::stream::is_stream(t)
    {
        let t = t.clone();
        return crate::apiserver::stream::handle(app, req, t).await;
    }
    if let Route::Resource(t) = &target
        && crate::apiserver::proxy::is_proxy(t)
    {
        let t = t.clone();
        return crate::apiserver::proxy::handle(app, req, t).await;
    }
    let (parts, body) = req.into_parts();
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
        // kube-openapi's handler answers every method.
        Route::OpenApiV2 => crate::apiserver::openapi_v2::respond(app, &req).await,
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

fn non_resource(app: &App, req: &Req, r: Route) -> Result<Resp, ApiError> {
    let types = app.backend.registry.all();
    let accept = req.header(header::ACCEPT);
    Ok(match r {
        Route::Version => json_resp(
            200,
            // kube-apiserver 1.33's version.Info (with the emulation and compatibility versions);
            // the sim's own name is semver build metadata, as distributions add theirs (`+k3s1`),
            // so version checks read it as the release it follows.
            &json!({
                "major": "1", "minor": "33", "emulationMajor": "1", "emulationMinor": "33",
                "minCompatibilityMajor": "1", "minCompatibilityMinor": "32",
                "gitVersion": "v1.33.13+piceli-sim", "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean", "buildDate": "2025-04-23T00:00:00Z", "goVersion": "go1.24.2", "compiler": "gc",
                "platform": "linux/amd64",
            }),
        ),
        Route::Health => raw(200, "text/plain; charset=utf-8", Bytes::from_static(b"ok")),
        Route::OpenApiIndex => json_resp(200, &openapi::index(&types)),
        Route::OpenApiDoc { path } => match openapi::document_text(&types, &path) {
            Some(text) => raw(200, "application/json", text),
            None => return Err(ApiError::no_route()),
        },
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
            None => return Err(ApiError::page_not_found()),
        },
        Route::ApiResources { group, version } => {
            match discovery::api_resource_list(&types, &group, &version) {
                Some(doc) => json_resp(200, &doc),
                None if !group.is_empty() && !types.iter().any(|t| t.group == group) => {
                    return Err(ApiError::page_not_found());
                }
                None => return Err(ApiError::no_route()),
            }
        }
        Route::NotFound => return Err(ApiError::page_not_found()),
        // `/openapi/v2` and resources are answered by `handle`.
        Route::Resource(_) | Route::OpenApiV2 => return Err(ApiError::no_route()),
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
    let registry = &app.backend.registry;
    let rt = registry
        .lookup(&t.group, &t.version, &t.resource)
        .ok_or_else(|| {
            // A group no API serves, or a custom resource's group-version (the CRD handler hands
            // unknown resources to the mux): Go's plain 404; else the API's NotFound Status.
            let served = registry.all();
            let crd_group = served.iter().any(|r| r.crd && r.group == t.group);
            let known = served.iter().any(|r| r.group == t.group);
            if !t.group.is_empty() && (!known || crd_group) {
                ApiError::page_not_found()
            } else {
                ApiError::no_route()
            }
        })?;
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
        Some("binding" | "eviction" | "ephemeralcontainers" | "resize")
            if rt.kind == "Pod" && rt.group.is_empty() => {}
        Some("approval") if rt.kind == "CertificateSigningRequest" => {}
        Some("proxy") if rt.kind == "Node" && rt.group.is_empty() => {}
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
    // kube-apiserver 1.33 marks core/v1 Endpoints deprecated: every request about them is warned.
    if r.rt.group.is_empty() && r.rt.plural == "endpoints" {
        let resp = resource_resolved(app, req, r).await;
        return crate::apiserver::http::with_warnings(
            resp,
            &[
                "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
                    .into(),
            ],
        );
    }
    resource_resolved(app, req, r).await
}

/// Whether an `Accept` header names nothing kube-apiserver can answer in (JSON, YAML, protobuf, a
/// wildcard), which is a 406.
fn accepts_nothing_served(accept: &str) -> bool {
    let accept = accept.trim();
    !accept.is_empty()
        && !accept.split(',').any(|part| {
            let media = part.split(';').next().unwrap_or("").trim();
            matches!(
                media,
                "application/json"
                    | "application/yaml"
                    | "application/vnd.kubernetes.protobuf"
                    | "application/*"
                    | "*/*"
                    | ""
            )
        })
}

async fn resource_resolved(app: Arc<App>, req: Req, r: Resolved) -> Resp {
    // A list's or watch's options are decoded and validated before anything else (400, 422).
    if req.method == Method::GET
        && r.name.is_none()
        && let Err(e) = crate::apiserver::list_options::check(&req.query)
    {
        return error(&e);
    }
    if accepts_nothing_served(req.header(header::ACCEPT)) {
        return error(&ApiError::not_acceptable());
    }
    let watching = req.query.flag("watch");
    if req.method == Method::GET
        && r.name.is_none()
        && let Err(e) = wait_for_resource_version(&app, &req).await
    {
        return error(&e);
    }
    if req.method == Method::GET && r.name.is_none() && watching {
        return watch::watch(app, req, r).await;
    }
    let yaml = crate::apiserver::yaml_body::wanted(req.header(header::ACCEPT));
    let app2 = app.clone();
    let result = tokio::task::spawn_blocking(move || dispatch(&app2, &req, &r)).await;
    let resp = match result {
        Ok(Ok(resp)) => resp,
        Ok(Err(e)) => error(&e),
        Err(e) => error(&ApiError::internal(e)),
    };
    if yaml {
        crate::apiserver::yaml_body::respond_in_yaml(resp)
    } else {
        resp
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
        let current = app.backend.store.current_rv()?;
        if current >= want {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ApiError::resource_version_too_large(want, current));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The store's check of an object's name (`NamespaceKeyFunc`), made before the object is read: a
/// name that cannot be one path segment is a 400.
pub(crate) fn check_path_name(name: &str) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::bad_request("Name parameter required."));
    }
    let problems: Vec<String> = if name == "." || name == ".." {
        vec![format!("may not be '{name}'")]
    } else {
        ["/", "%"]
            .iter()
            .filter(|c| name.contains(**c))
            .map(|c| format!("may not contain '{c}'"))
            .collect()
    };
    if problems.is_empty() {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "Name parameter invalid: {}: {}",
        crate::go_text::quote(name),
        problems.join(";")
    )))
}

fn dispatch(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    if req.method == Method::GET
        && let Some(name) = r.name.as_deref()
        && r.sub.as_deref() != Some("proxy")
    {
        check_path_name(name)?;
    }
    if r.rt.create_only {
        return match (&req.method, r.name.as_deref()) {
            (&Method::POST, None) => review(app, req, r),
            _ => Err(ApiError::method_not_allowed(&req.path)),
        };
    }
    let sub = r.sub.as_deref().unwrap_or("");
    if r.rt.group.is_empty() && r.rt.plural == "bindings" {
        return match (&req.method, r.name.as_deref()) {
            (&Method::POST, None) => pod_subresources::bind_collection(app, req, r),
            _ => Err(ApiError::method_not_allowed(&req.path)),
        };
    }
    match (&req.method, r.name.as_deref(), sub) {
        (&Method::POST, Some(name), "binding") => pod_subresources::bind(app, req, r, name),
        (&Method::POST, Some(name), "eviction") => pod_subresources::evict(app, req, r, name),
        (_, Some(_), "binding" | "eviction") => Err(ApiError::method_not_allowed(&req.path)),
        // The sim runs no kubelet server a node proxy could reach: as a node whose kubelet is down
        // (a node that does not exist is a 404 first, as kube-apiserver looks the node up).
        (_, Some(name), "proxy") if r.rt.kind == "Node" => {
            check_path_name(name)?;
            if app
                .backend
                .store
                .get(&r.rt.store_key(), "", name)?
                .is_none()
            {
                return Err(ApiError::not_found(&r.rt.group, &r.rt.plural, name));
            }
            Err(ApiError::service_unavailable(format!(
                "no kubelet answers for node {name:?}: the sim simulates nodes without kubelet servers"
            )))
        }
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
    // The review comes back with its ObjectMeta as Go serialises it: a SelfSubjectReview is stamped
    // with the time it was made, the others carry a null creationTimestamp.
    if let Some(meta) = body["metadata"].as_object_mut() {
        let stamp = if r.rt.kind == "SelfSubjectReview" {
            json!(crate::time::now_rfc3339())
        } else {
            serde_json::Value::Null
        };
        meta.entry("creationTimestamp").or_insert(stamp);
    }
    // The create handler's field manager runs for reviews too: the fields the request set are its
    // manager's.
    let manager = match req.query.get("fieldManager") {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => req.user_agent_manager(),
    };
    let now = crate::time::now_rfc3339();
    let api_version = r.rt.api_version();
    let request = crate::registry::fields::managed::ApplyRequest {
        manager: &manager,
        api_version: &api_version,
        subresource: "",
        status_separate: true,
        force: true,
        now: &now,
    };
    let mut sent = body.clone();
    if let Some(m) = sent.as_object_mut() {
        m.remove("status");
    }
    crate::registry::fields::managed::update(
        None,
        &mut sent,
        crate::registry::schema::Node::root(&r.rt),
        &request,
    );
    if let Some(fields) = sent.pointer("/metadata/managedFields").cloned() {
        body["metadata"]["managedFields"] = fields;
    }
    Ok(json_resp(201, &body))
}
