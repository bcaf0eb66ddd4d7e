//! The request's info (kube-apiserver's `WithRequestInfo`): 431 for a head over the size limit, else
//! the parsed query and route put into the request's extensions as a [`RequestInfo`].

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::Either;
use http::Request;
use hyper::body::Incoming;
use tower::{Layer, Service};

use super::{Answer, refuse};
use crate::apiserver::handlers::limits;
use crate::apiserver::http::{Query, Resp};
use crate::apiserver::router::{Route, legacy_watch, route};

/// What the request addresses, parsed once for the filters after it and the handler.
#[derive(Debug, Clone)]
pub(crate) struct RequestInfo {
    /// The parsed query string.
    pub(crate) query: Query,
    /// The route of the URL path.
    pub(crate) route: Route,
}

/// Wraps a service in [`RequestInfoFilter`].
#[derive(Clone, Copy)]
pub(crate) struct RequestInfoLayer;

impl<S> Layer<S> for RequestInfoLayer {
    type Service = RequestInfoFilter<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestInfoFilter { inner }
    }
}

/// Checks the head's size and parses the query and route of each request.
#[derive(Clone)]
pub(crate) struct RequestInfoFilter<S> {
    inner: S,
}

impl<S> Service<Request<Incoming>> for RequestInfoFilter<S>
where
    S: Service<Request<Incoming>, Response = Resp, Error = Infallible>,
{
    type Response = Resp;
    type Error = Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<Incoming>) -> Self::Future {
        if let Err(e) = limits::check_head(&req) {
            return refuse(&e);
        }
        let info = request_info(req.uri().path(), req.uri().query().unwrap_or(""));
        req.extensions_mut().insert(info);
        Either::Right(self.inner.call(req))
    }
}

/// The query and route of a request for `path` with the raw query string `raw_query`: a deprecated watch
/// path is the watch of its collection (of one object by name).
pub(crate) fn request_info(path: &str, raw_query: &str) -> RequestInfo {
    let mut query = Query::parse(raw_query);
    match legacy_watch(path) {
        Some((collection, name)) => {
            query.set("watch", "true");
            if let Some(name) = name {
                let by_name = format!("metadata.name={name}");
                let selector = match query.get("fieldSelector").filter(|s| !s.is_empty()) {
                    Some(other) => format!("{other},{by_name}"),
                    None => by_name,
                };
                query.set("fieldSelector", &selector);
            }
            RequestInfo {
                query,
                route: route(&collection),
            }
        }
        None => RequestInfo {
            query,
            route: route(path),
        },
    }
}
