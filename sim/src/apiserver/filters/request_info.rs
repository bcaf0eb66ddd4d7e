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
pub(crate) fn request_info(raw_path: &str, raw_query: &str) -> RequestInfo {
    let mut query = Query::parse(raw_query);
    // As Go's `URL.Path`, which kube-apiserver splits: percent-escapes decoded (`%2F` too).
    let decoded = percent_decode(raw_path);
    let path = decoded.as_str();
    match legacy_watch(path) {
        Some((collection, name)) => {
            query.force_watch();
            if let Some(name) = name {
                let by_name = format!(
                    "metadata.name={}",
                    crate::registry::selectors::escape_value(&name)
                );
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

/// A path with its `%XX` escapes decoded (an escape that is not one stays as it is; bytes that are not
/// UTF-8 become U+FFFD).
fn percent_decode(path: &str) -> String {
    if !path.contains('%') {
        return path.to_string();
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod path_tests {
    use super::*;
    use crate::apiserver::router::Route;

    #[test]
    fn names_in_paths_are_percent_decoded() {
        let info = request_info("/apis/apps/v1/namespaces/d/deployments/p%25x%C3%A9", "");
        let Route::Resource(t) = info.route else {
            panic!("a resource route");
        };
        assert_eq!(t.name.as_deref(), Some("p%xé"));
        assert_eq!(percent_decode("/a%2Fb%zz%4"), "/a/b%zz%4");
    }
}
