//! Request size limits as kube-apiserver applies them: bodies over 3 MiB (`MaxRequestBodyBytes`) are
//! 413 RequestEntityTooLarge, a request line and headers over 1 MiB (Go's `MaxHeaderBytes`) are 431 —
//! both answered with a `Status` body so clients print a reason.

use bytes::{Bytes, BytesMut};
use http::Request;
use http_body_util::BodyExt;

use crate::status::ApiError;

/// kube-apiserver's default `MaxRequestBodyBytes`.
pub const MAX_BODY: usize = 3 * 1024 * 1024;

/// kube-apiserver's `MaxHeaderBytes` (request line plus headers).
pub const MAX_HEAD: usize = 1024 * 1024;

/// How much of an oversized body is still read (and dropped) so the client, which is still sending,
/// receives the 413 instead of a reset connection; beyond this the connection is simply closed.
const DRAIN_LIMIT: usize = 256 * 1024 * 1024;

/// 431 for a request line and headers larger than [`MAX_HEAD`].
pub fn check_head<B>(req: &Request<B>) -> Result<(), ApiError> {
    let line = req.method().as_str().len()
        + req.uri().path_and_query().map_or(0, |p| p.as_str().len())
        + 12;
    let headers: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    if line + headers > MAX_HEAD {
        return Err(ApiError::header_too_large(MAX_HEAD));
    }
    Ok(())
}

/// Reads a whole body of at most [`MAX_BODY`] bytes. A body whose `Content-Length` is over the limit
/// is drained without being kept, and one under it is read into a buffer of exactly its size: a burst
/// of large requests then never holds (nor leaves in the allocator) more than the bodies it keeps.
pub async fn read_body(mut body: hyper::body::Incoming) -> Result<Bytes, ApiError> {
    let declared = http_body::Body::size_hint(&body).exact();
    let keep = declared.is_none_or(|len| len <= MAX_BODY as u64);
    let mut buf = match declared {
        Some(len) if keep => BytesMut::with_capacity(len as usize),
        _ => BytesMut::new(),
    };
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame =
            frame.map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen += data.len();
        if seen > DRAIN_LIMIT {
            break;
        }
        if keep && seen <= MAX_BODY {
            buf.extend_from_slice(&data);
        }
    }
    if seen > MAX_BODY {
        return Err(ApiError::too_large(MAX_BODY));
    }
    Ok(buf.freeze())
}
