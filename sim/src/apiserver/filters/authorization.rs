//! Impersonation and RBAC authorization (kube-apiserver's `WithImpersonation` and
//! `WithAuthorization`): 403 for a request its user may not make, else the final (possibly
//! impersonated) user in place of the authenticated one and the policy that authorized it
//! ([`AuthorizedBy`]) in the request's extensions.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::{BoxFuture, Either};
use http::{HeaderMap, Request};
use hyper::body::Incoming;
use tower::{Layer, Service};

use super::request_info::RequestInfo;
use super::{Answer, refuse};
use crate::apiserver::app::App;
use crate::apiserver::attributes::Attributes;
use crate::apiserver::http::{Resp, error};
use crate::apiserver::{UserInfo, identity, rbac};
use crate::status::ApiError;

/// The RBAC policy that authorized a request; absent when RBAC did not apply (turned off, or the
/// user is in `system:masters`, without impersonation).
#[derive(Clone)]
pub(crate) struct AuthorizedBy(pub(crate) Arc<rbac::Policy>);

/// Wraps a service in [`Authorization`].
#[derive(Clone)]
pub(crate) struct AuthorizationLayer {
    app: Arc<App>,
}

impl AuthorizationLayer {
    pub(crate) fn new(app: Arc<App>) -> Self {
        Self { app }
    }
}

impl<S> Layer<S> for AuthorizationLayer {
    type Service = Authorization<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authorization {
            inner,
            app: self.app.clone(),
        }
    }
}

/// Applies impersonation and authorizes each request by RBAC: in place when the cached policy is
/// current, off the async threads when it must be read from the store first.
#[derive(Clone)]
pub(crate) struct Authorization<S> {
    inner: S,
    app: Arc<App>,
}

/// The inner service's future, or the authorization that must read the policy first (boxed: rare).
type Authorizing<F> = Either<F, BoxFuture<'static, Result<Resp, Infallible>>>;

impl<S> Service<Request<Incoming>> for Authorization<S>
where
    S: Service<Request<Incoming>, Response = Resp, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Resp;
    type Error = Infallible;
    type Future = Answer<Authorizing<S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<Incoming>) -> Self::Future {
        let app = &self.app;
        let impersonating = req.headers().contains_key("impersonate-user")
            || req.headers().contains_key("impersonate-group");
        let (Some(user), Some(info)) = (
            req.extensions().get::<UserInfo>(),
            req.extensions().get::<RequestInfo>(),
        ) else {
            return refuse(&ApiError::internal("the request was not authenticated"));
        };
        if !impersonating && (!app.rbac || user.is_master()) {
            return Either::Right(Either::Left(self.inner.call(req)));
        }
        let mut attrs =
            Attributes::of_request(req.method(), &info.route, req.uri().path(), &info.query);
        // Taken out (leaving an empty user) and written back once final: no new extension.
        let user = req
            .extensions_mut()
            .get_mut::<UserInfo>()
            .map(std::mem::take)
            .unwrap_or_default();
        let check = move |app: &App, policy: Arc<rbac::Policy>, headers: &HeaderMap| {
            attrs.user = identity::impersonate(app, user, headers)?;
            rbac::authorize_by(app, &policy, &attrs)?;
            Ok::<_, ApiError>((attrs.user, policy))
        };
        if let Some(policy) = app.rbac_policy.current(app) {
            return match check(app, policy, req.headers()) {
                Ok(authorized) => {
                    authorize(&mut req, authorized);
                    Either::Right(Either::Left(self.inner.call(req)))
                }
                Err(e) => refuse(&e),
            };
        }
        let (app, headers) = (app.clone(), req.headers().clone());
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        Either::Right(Either::Right(Box::pin(async move {
            let checked = tokio::task::spawn_blocking(move || {
                check(&app, app.rbac_policy.get(&app)?, &headers)
            })
            .await
            .map_err(ApiError::internal);
            match checked {
                Ok(Ok(authorized)) => {
                    authorize(&mut req, authorized);
                    inner.call(req).await
                }
                Ok(Err(e)) | Err(e) => Ok(error(&e)),
            }
        })))
    }
}

/// Puts the final user in place of the authenticated one, and the policy that authorized the request.
fn authorize(req: &mut Request<Incoming>, (user, policy): (UserInfo, Arc<rbac::Policy>)) {
    let extensions = req.extensions_mut();
    extensions.insert(user);
    extensions.insert(AuthorizedBy(policy));
}
