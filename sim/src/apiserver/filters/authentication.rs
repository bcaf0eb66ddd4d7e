//! Authentication (kube-apiserver's `WithAuthentication`): 401 for a bad token, else the request's
//! [`UserInfo`] put into its extensions for the filters after it.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::Either;
use http::Request;
use hyper::body::Incoming;
use tower::{Layer, Service};

use super::{Answer, refuse};
use crate::apiserver::app::App;
use crate::apiserver::http::Resp;
use crate::apiserver::{UserInfo, identity};

/// Wraps a service in [`Authentication`].
#[derive(Clone)]
pub(crate) struct AuthenticationLayer {
    app: Arc<App>,
}

impl AuthenticationLayer {
    pub(crate) fn new(app: Arc<App>) -> Self {
        Self { app }
    }
}

impl<S> Layer<S> for AuthenticationLayer {
    type Service = Authentication<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authentication {
            inner,
            app: self.app.clone(),
        }
    }
}

/// Authenticates each request by its bearer token ([`identity::authenticate`]).
#[derive(Clone)]
pub(crate) struct Authentication<S> {
    inner: S,
    app: Arc<App>,
}

impl<S> Service<Request<Incoming>> for Authentication<S>
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
        let user: UserInfo = match identity::authenticate(&self.app, req.headers()) {
            Ok(u) => u,
            Err(e) => return refuse(&e),
        };
        req.extensions_mut().insert(user);
        Either::Right(self.inner.call(req))
    }
}
