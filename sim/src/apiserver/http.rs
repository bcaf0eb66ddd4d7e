//! HTTP plumbing: the response body type (whole or streamed), request parsing helpers and JSON
//! responses.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, header};
use http_body::Frame;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::status::ApiError;

pub use crate::apiserver::query::Query;

/// A response body: either complete, or a stream of chunks (watches).
pub enum SimBody {
    /// A complete body (`None` once it was sent, or for an empty body).
    Full(Option<Bytes>),
    /// Chunks sent as they arrive; the body ends when the sender is dropped.
    Stream(mpsc::Receiver<Bytes>),
}

impl http_body::Body for SimBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            SimBody::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            SimBody::Stream(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, SimBody::Full(None))
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match self {
            SimBody::Full(Some(b)) => http_body::SizeHint::with_exact(b.len() as u64),
            SimBody::Full(None) => http_body::SizeHint::with_exact(0),
            SimBody::Stream(_) => http_body::SizeHint::default(),
        }
    }
}

/// The response type every handler returns.
pub type Resp = Response<SimBody>;

/// A parsed request with its whole body.
pub struct Req {
    /// The HTTP method.
    pub method: Method,
    /// The URL path, without the query.
    pub path: String,
    /// The parsed query string.
    pub query: Query,
    /// The request headers.
    pub headers: HeaderMap,
    /// The whole request body.
    pub body: Bytes,
    /// The authenticated (and possibly impersonated) user.
    pub user: crate::apiserver::UserInfo,
    /// The RBAC policy that authorized the request (`None` when RBAC did not apply: turned off, or
    /// the user is in `system:masters`); a server-side apply that creates checks `create` by it.
    pub policy: Option<std::sync::Arc<crate::apiserver::rbac::Policy>>,
}

impl Req {
    /// A header as a string (empty when absent or not text).
    pub fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// Whether the client asked for a Table (`as=Table;g=meta.k8s.io`).
    pub fn wants_table(&self) -> bool {
        let accept = self.header(header::ACCEPT);
        accept
            .split(',')
            .next()
            .is_some_and(|first| first.contains("as=Table"))
    }

    /// Whether the client asked for metadata only (`as=PartialObjectMetadata;g=meta.k8s.io`).
    pub fn wants_metadata(&self) -> bool {
        let accept = self.header(header::ACCEPT);
        accept
            .split(',')
            .next()
            .is_some_and(|first| first.contains("as=PartialObjectMetadata"))
    }

    /// The content type without parameters.
    pub fn content_type(&self) -> &str {
        self.header(header::CONTENT_TYPE)
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
    }

    /// The manager name derived from the User-Agent (`kubectl/v1.33.0 (...)` → `kubectl`).
    pub fn user_agent_manager(&self) -> String {
        let ua = self.header(header::USER_AGENT);
        let name = ua.split('/').next().unwrap_or("").trim();
        if name.is_empty() {
            "unknown".to_string()
        } else {
            name.chars().take(128).collect()
        }
    }
}

/// A JSON response.
pub fn json(status: u16, body: &Value) -> Resp {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    raw(status, "application/json", Bytes::from(bytes))
}

/// A response with an explicit content type.
pub fn raw(status: u16, content_type: &str, body: Bytes) -> Resp {
    let mut r = Response::new(SimBody::Full(Some(body)));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

/// The Status response of an API error.
pub fn error(e: &ApiError) -> Resp {
    if e.details.page_not_found {
        return raw(
            404,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"404 page not found\n"),
        );
    }
    json(e.code, &e.to_status())
}

/// Adds `Warning: 299 - "..."` headers.
pub fn with_warnings(mut r: Resp, warnings: &[String]) -> Resp {
    for w in warnings {
        let text = format!("299 - {:?}", w);
        if let Ok(v) = HeaderValue::from_str(&text) {
            r.headers_mut().append(header::WARNING, v);
        }
    }
    r
}
