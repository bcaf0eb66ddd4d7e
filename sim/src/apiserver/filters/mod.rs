//! The handler chain: the request pipeline as a stack of tower layers, as kube-apiserver's
//! `DefaultBuildHandlerChain` wraps its API handler in filters. Each filter answers the errors it
//! finds itself and hands what it learnt to the next through the request's extensions.

pub(crate) mod authentication;
pub(crate) mod authorization;
pub(crate) mod request_info;
pub(crate) mod request_log;

use std::convert::Infallible;
use std::future::Ready;
use std::sync::Arc;

use futures_util::future::Either;
use http::Request;
use hyper::body::Incoming;
use tower::{Service, ServiceBuilder};

use crate::apiserver::app::App;
use crate::apiserver::handlers;
use crate::apiserver::http::{Resp, error};
use crate::status::ApiError;

/// What a filter's call returns: its own answer at once (the error it found), or the future of the
/// layers inside it.
pub(crate) type Answer<F> = Either<Ready<Result<Resp, Infallible>>, F>;

/// A filter's answer to a request it stops: the error as a `Status`.
pub(crate) fn refuse<F>(e: &ApiError) -> Answer<F> {
    Either::Left(std::future::ready(Ok(error(e))))
}

/// The request pipeline, outermost first: the request log (kube-apiserver's `WithHTTPLogging`),
/// authentication (`WithAuthentication`), the request's info (`WithRequestInfo`: head size, query,
/// route), impersonation and RBAC (`WithImpersonation`, `WithAuthorization`), then the handler
/// (stream and proxy hand-offs, body, dispatch). kube-apiserver's `DefaultBuildHandlerChain` puts
/// `WithRequestInfo` outermost, where it never refuses a request; here that filter also answers the
/// 431 of an oversized head, which comes after the 401 of a bad token as it always has, so it sits
/// inside authentication. The log is outermost so that every answer is logged.
pub(crate) fn handler_chain(
    app: Arc<App>,
) -> impl Service<Request<Incoming>, Response = Resp, Error = Infallible, Future: Send + 'static>
+ Clone
+ Send
+ 'static {
    let handler = app.clone();
    ServiceBuilder::new()
        .layer(request_log::RequestLogLayer)
        .layer(authentication::AuthenticationLayer::new(app.clone()))
        .layer(request_info::RequestInfoLayer)
        .layer(authorization::AuthorizationLayer::new(app))
        // The handler's future (some 3 KB) boxed once, so each layer's future that wraps it, and
        // hyper's slot for the request in flight, move a pointer rather than copy it.
        .service_fn(move |req| Box::pin(handlers::serve(handler.clone(), req)))
}
