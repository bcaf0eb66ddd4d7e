//! The `pods/log` subresource (not served yet).

use std::sync::Arc;

use http::Request;

use crate::app::App;
use crate::http::{Resp, error};
use crate::status::ApiError;

/// Answers `pods/log` requests.
pub async fn handle(
    _app: Arc<App>,
    _req: Request<hyper::body::Incoming>,
    _ns: &str,
    _pod: &str,
) -> Resp {
    error(&ApiError::no_route())
}
