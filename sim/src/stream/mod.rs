//! Streaming pod subresources — `portforward`, `exec`/`attach` and `log` — which take the raw
//! request (so they can upgrade the connection to SPDY or WebSocket) instead of a collected body.

pub mod exec;
pub mod exec_builtin;
pub mod exec_session;
pub mod log;
pub mod log_buffer;
pub mod log_lines;
pub mod portforward;

use std::sync::Arc;

use http::Request;

use crate::app::App;
use crate::http::{Resp, error};
use crate::router::Target;
use crate::status::ApiError;

/// Whether a routed request addresses a streaming pod subresource.
pub fn is_stream(t: &Target) -> bool {
    t.group.is_empty()
        && t.resource == "pods"
        && t.namespace.is_some()
        && t.name.is_some()
        && matches!(
            t.subresource.as_deref(),
            Some("portforward" | "exec" | "attach" | "log")
        )
}

/// Handles a streaming pod subresource request (already authenticated).
pub async fn handle(app: Arc<App>, req: Request<hyper::body::Incoming>, t: Target) -> Resp {
    let (Some(ns), Some(pod)) = (t.namespace.clone(), t.name.clone()) else {
        return error(&ApiError::no_route());
    };
    match t.subresource.as_deref() {
        Some("portforward") => portforward::handle(app, req, &ns, &pod).await,
        Some("exec" | "attach") => exec::handle(app, req, &ns, &pod).await,
        Some("log") => log::handle(app, req, &ns, &pod).await,
        _ => error(&ApiError::no_route()),
    }
}
