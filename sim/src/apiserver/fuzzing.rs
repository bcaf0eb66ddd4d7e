//! For fuzz targets (`fuzz/fuzz_targets/sim_selectors.rs`): what the server reads from a request's head
//! before it touches the store — the route and query ([`request_info`](super::filters::request_info)),
//! the authorization attributes, and for a list or watch the selectors, `limit`, `timeoutSeconds`,
//! `dryRun` and the `continue` token — reachable without a running server. Not a stable API.

use std::sync::OnceLock;

use http::Method;

pub use super::query::Query;
pub use super::router::{Route, Target, legacy_watch, route};
pub use crate::registry::selectors::{FieldSelector, LabelSelector};
pub use crate::status::ApiError;

/// Go's `json.Unmarshal` syntax error for `data` (`None`: valid JSON syntax), as the server words it.
pub fn go_json_syntax_error(data: &[u8]) -> Option<String> {
    super::go_json::syntax_error(data)
}

/// Reads the head of a request (`method`, `path`, the raw `query` string) as the filters and the read
/// handlers do: routes it, parses the query, names its authorization verb, and for a resource the
/// server serves, checks the field selector against the kind, parses the label selector, `limit`,
/// `timeoutSeconds`, `dryRun` and the `continue` token. The route, or the server's 4xx.
pub fn read_head(method: &str, path: &str, query: &str) -> Result<Route, ApiError> {
    static REGISTRY: OnceLock<crate::registry::Registry> = OnceLock::new();
    let info = super::filters::request_info::request_info(path, query);
    let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
    let attributes =
        super::attributes::Attributes::of_request(&method, &info.route, path, &info.query);
    let _ = attributes.full_resource();
    let Route::Resource(target) = &info.route else {
        return Ok(info.route);
    };
    let registry = REGISTRY.get_or_init(crate::registry::Registry::default);
    let Some(rt) = registry.lookup(&target.group, &target.version, &target.resource) else {
        return Err(ApiError::not_found(&target.group, &target.resource, ""));
    };
    let q = &info.query;
    let mut fields = FieldSelector::parse(q.get("fieldSelector").unwrap_or(""))?;
    crate::registry::field_labels::check(&rt, &mut fields)?;
    let labels = LabelSelector::parse(q.get("labelSelector").unwrap_or(""))?;
    let _ = (labels.is_empty(), fields.is_empty());
    if let Some(token) = q.get("continue").filter(|c| !c.is_empty()) {
        super::handlers::read::decode_continue(token)?;
    }
    q.int64("limit")?;
    q.int64("timeoutSeconds")?;
    q.dry_run("CreateOptions")?;
    let _ = (
        q.flag("watch"),
        q.flag("allowWatchBookmarks"),
        q.flag("sendInitialEvents"),
    );
    Ok(info.route)
}
