//! get and list: selectors, `limit`/`continue` paging, list resourceVersion, and Table output.

use base64::Engine;
use serde_json::{Value, json};

use super::Resolved;
use crate::apiserver::app::App;
use crate::apiserver::http::{Req, Resp, json as json_resp};
use crate::registry::ResourceType;
use crate::registry::selectors::{FieldSelector, LabelSelector};
use crate::registry::table;
use crate::status::ApiError;

/// Serves an object at the requested version (CRD objects are stored once for all versions).
pub fn at_version(rt: &ResourceType, obj: Value) -> Value {
    let mut obj = crate::registry::convert::from_storage(rt, obj);
    if rt.crd {
        obj["apiVersion"] = json!(rt.api_version());
    }
    obj
}

/// The `PartialObjectMetadata` form of an object.
pub fn partial(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata").cloned().unwrap_or(json!({}))})
}

/// GET one object.
pub fn get(app: &App, req: &Req, r: &Resolved, name: &str) -> Result<Resp, ApiError> {
    let ns = if r.rt.namespaced { r.ns.as_str() } else { "" };
    let obj = app
        .backend
        .store
        .get(&r.rt.store_key(), ns, name)?
        .ok_or_else(|| ApiError::not_found(&r.rt.group, &r.rt.plural, name))?;
    let obj = at_version(&r.rt, obj);
    if req.wants_metadata() {
        return Ok(json_resp(200, &partial(&obj)));
    }
    if req.wants_table() {
        let include = req.query.get("includeObject").unwrap_or("Metadata");
        let rv = crate::registry::object::rv_of(&obj).to_string();
        return Ok(json_resp(
            200,
            &table::table(
                &r.rt,
                &[&obj],
                include,
                json!({"resourceVersion": rv}),
                true,
            ),
        ));
    }
    Ok(json_resp(200, &obj))
}

/// The selectors of a list or watch request.
pub struct Filter {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Filter {
    /// From `labelSelector` and `fieldSelector` (whose fields must be ones the kind supports).
    pub fn from_query(req: &Req, rt: &ResourceType) -> Result<Filter, ApiError> {
        let mut fields = FieldSelector::parse(req.query.get("fieldSelector").unwrap_or(""))?;
        crate::registry::field_labels::check(rt, &mut fields)?;
        Ok(Filter {
            labels: LabelSelector::parse(req.query.get("labelSelector").unwrap_or(""))?,
            fields,
        })
    }

    /// Whether an object passes both selectors.
    pub fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }
}

pub(crate) fn decode_continue(token: &str) -> Result<String, ApiError> {
    let bad = || ApiError::bad_request("continue key is not valid: illegal base64 data");
    // Go's RawURLEncoding, which ignores the unused bits of the last symbol.
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_encode_padding(false)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let bytes = lenient.decode(token).map_err(|_| bad())?;
    if let Some(go) = crate::apiserver::go_json::syntax_error(&bytes) {
        return Err(ApiError::bad_request(format!(
            "invalid continue token: continue key is not valid: {go}"
        )));
    }
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    v.get("start")
        .and_then(Value::as_str)
        .map(String::from)
        .ok_or_else(bad)
}

fn encode_continue(rv: u64, start: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(json!({"v": "meta.k8s.io/v1", "rv": rv, "start": start}).to_string())
}

/// The storage's check of a list's `resourceVersion` (`storage.ValidateListOptions`): none with a
/// `continue` token, else a number (`ParseResourceVersion`), each refused with a 400.
fn check_resource_version(rv: &str, continued: bool) -> Result<(), ApiError> {
    if continued {
        if !rv.is_empty() && rv != "0" {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        return Ok(());
    }
    if rv.is_empty() || rv.parse::<u64>().is_ok() && !rv.starts_with('+') {
        return Ok(());
    }
    let why = if !rv.is_empty() && rv.bytes().all(|b| b.is_ascii_digit()) {
        "value out of range"
    } else {
        "invalid syntax"
    };
    let quoted = crate::go_text::quote(rv);
    Err(ApiError::bad_request(format!(
        "invalid resource version: resourceVersion: Invalid value: {quoted}: strconv.ParseUint: parsing {quoted}: {why}"
    )))
}

/// Where a list page starts and how long it is: the namespace (none for all), the key after the
/// `continue` token, and `limit`.
struct Paging<'a> {
    ns: Option<&'a str>,
    after: Option<String>,
    limit: Option<usize>,
}

impl<'a> Paging<'a> {
    fn of(req: &Req, r: &'a Resolved) -> Result<Paging<'a>, ApiError> {
        let ns = (r.rt.namespaced && !r.ns.is_empty()).then_some(r.ns.as_str());
        // A kind whose storage is no store (ComponentStatus) never decodes the paging options.
        if !r.rt.strategy().lists_from_store() {
            return Ok(Paging {
                ns,
                after: None,
                limit: None,
            });
        }
        let after = req
            .query
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(decode_continue)
            .transpose()?;
        check_resource_version(
            req.query.get("resourceVersion").unwrap_or(""),
            after.is_some(),
        )?;
        // As etcd3's store: a limit of zero or below means no paging.
        let limit = req
            .query
            .int64("limit")?
            .filter(|l| *l > 0)
            .map(|l| usize::try_from(l).unwrap_or(usize::MAX));
        Ok(Paging { ns, after, limit })
    }
}

/// The matching objects of a list request and the list metadata (resourceVersion, continue).
pub fn list_objects(app: &App, req: &Req, r: &Resolved) -> Result<(Vec<Value>, Value), ApiError> {
    let filter = Filter::from_query(req, &r.rt)?;
    let Paging { ns, after, limit } = Paging::of(req, r)?;
    let page =
        app.backend
            .store
            .list_page(&r.rt.store_key(), ns, after.as_deref(), limit, |o| {
                filter.matches(o)
            })?;
    let mut meta = json!({"resourceVersion": page.rv.to_string()});
    if r.rt.crd {
        // Unstructured lists (custom resources) always carry `continue`, empty on the last page.
        meta["continue"] = json!("");
    }
    if page.more
        && let Some(last) = page.items.last()
    {
        meta["continue"] = json!(encode_continue(
            page.rv,
            &format!("{}/{}", last.ns, last.name)
        ));
    }
    let items: Vec<Value> = page
        .items
        .into_iter()
        .map(|s| at_version(&r.rt, s.object))
        .collect();
    Ok((items, meta))
}

/// An object's labels and nothing else, read from its stored JSON.
#[derive(serde::Deserialize)]
struct LabelsOnly {
    #[serde(default)]
    metadata: MetadataLabels,
}

#[derive(serde::Deserialize, Default)]
struct MetadataLabels {
    #[serde(default)]
    labels: Option<serde_json::Map<String, Value>>,
}

/// GET a collection without a Table: the stored JSON of each object is passed through unparsed
/// unless a selector needs to look inside it.
fn list_passthrough(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    let filter = Filter::from_query(req, &r.rt)?;
    let selective = !filter.labels.is_empty() || !filter.fields.is_empty();
    let Paging { ns, after, limit } = Paging::of(req, r)?;
    let page =
        app.backend
            .store
            .list_raw(&r.rt.store_key(), ns, after.as_deref(), limit, |data| {
                if !filter.fields.is_empty() {
                    let v: Value = serde_json::from_str(data).map_err(ApiError::internal)?;
                    if !filter.matches(&v) {
                        return Ok(None);
                    }
                } else if selective {
                    // Only the labels are looked at: the rest of the object is skipped, not built.
                    let head: LabelsOnly =
                        serde_json::from_str(data).map_err(ApiError::internal)?;
                    if !filter.labels.matches_labels(head.metadata.labels.as_ref()) {
                        return Ok(None);
                    }
                }
                Ok(Some(data.to_string()))
            })?;
    let mut meta = json!({"resourceVersion": page.rv.to_string()});
    if page.more
        && let Some((ns, name, _)) = page.items.last()
    {
        meta["continue"] = json!(encode_continue(page.rv, &format!("{ns}/{name}")));
    }
    let head = json!({"kind": format!("{}List", r.rt.kind), "apiVersion": r.rt.api_version(), "metadata": meta}).to_string();
    let total: usize = page.items.iter().map(|(_, _, d)| d.len() + 1).sum();
    let mut body = String::with_capacity(head.len() + total + 16);
    body.push_str(&head[..head.len() - 1]);
    body.push_str(",\"items\":[");
    for (i, (_, _, data)) in page.items.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        // As kube-apiserver's typed lists: the items of a built-in kind carry no apiVersion or kind.
        body.push_str(&without_type_meta(data));
    }
    body.push_str("]}");
    Ok(crate::apiserver::http::raw(
        200,
        "application/json",
        bytes::Bytes::from(body),
    ))
}

/// An object's JSON without its top-level `apiVersion` and `kind` members (string-valued), found by a
/// scan that tracks strings and nesting, so the rest of the text is passed through as it was stored.
pub fn without_type_meta(data: &str) -> std::borrow::Cow<'_, str> {
    let bytes = data.as_bytes();
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    // The end of the string starting at `at` (its opening quote), past its closing quote.
    let string_end = |at: usize| {
        let mut j = at + 1;
        while j < bytes.len() {
            match bytes[j] {
                b'\\' => j += 2,
                b'"' => return j + 1,
                _ => j += 1,
            }
        }
        bytes.len()
    };
    let mut member_start = None;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    member_start = Some(i + 1);
                }
                i += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b',' if depth == 1 => {
                member_start = Some(i + 1);
                i += 1;
            }
            b'"' => {
                let end = string_end(i);
                if depth == 1 && member_start.is_some() {
                    let key = &data[i + 1..end.saturating_sub(1)];
                    let start = member_start.take().unwrap_or(i);
                    if key == "apiVersion" || key == "kind" {
                        // `"key":"value"` with no whitespace, as the store writes it.
                        if bytes.get(end) == Some(&b':') && bytes.get(end + 1) == Some(&b'"') {
                            let value_end = string_end(end + 1);
                            cuts.push((start, value_end));
                            i = value_end;
                            continue;
                        }
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    if cuts.is_empty() {
        return std::borrow::Cow::Borrowed(data);
    }
    let mut out = String::with_capacity(data.len());
    let mut at = 0;
    for (start, end) in cuts {
        out.push_str(&data[at..start]);
        at = end;
        // The member's separating comma goes with it.
        if data.as_bytes().get(at) == Some(&b',') {
            at += 1;
        }
    }
    out.push_str(&data[at..]);
    // A removed last member leaves a trailing comma before the closing brace.
    if let Some(pos) = out.rfind(",}")
        && pos + 2 == out.len()
    {
        out.replace_range(pos..pos + 1, "");
    }
    std::borrow::Cow::Owned(out)
}

/// GET a collection.
pub fn list(app: &App, req: &Req, r: &Resolved) -> Result<Resp, ApiError> {
    // `resourceVersionMatch=Exact` at a version the history no longer reaches is the store's 410.
    // (Within the history the list is still of the newest state: snapshots are not kept.)
    if req.query.get("resourceVersionMatch") == Some("Exact")
        && let Some(rv) = req
            .query
            .get("resourceVersion")
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|v| *v > 0)
        && app.backend.store.events_after(rv).is_err()
    {
        return Err(ApiError::gone_list());
    }
    if !req.wants_table()
        && !req.wants_metadata()
        && !r.rt.crd
        && !crate::registry::convert::needed(&r.rt)
    {
        return list_passthrough(app, req, r);
    }
    let (items, meta) = list_objects(app, req, r)?;
    if req.wants_metadata() {
        let items: Vec<Value> = items.iter().map(partial).collect();
        return Ok(json_resp(
            200,
            &json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "items": items}),
        ));
    }
    if req.wants_table() {
        let include = req.query.get("includeObject").unwrap_or("Metadata");
        let refs: Vec<&Value> = items.iter().collect();
        return Ok(json_resp(
            200,
            &table::table(&r.rt, &refs, include, meta, true),
        ));
    }
    Ok(json_resp(
        200,
        &json!({
            "kind": format!("{}List", r.rt.kind),
            "apiVersion": r.rt.api_version(),
            "metadata": meta,
            "items": items,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_lose_type_meta_only_at_the_top() {
        let data = r#"{"apiVersion":"v1","data":{"kind":"x","a":"b\\\"kind"},"kind":"ConfigMap","metadata":{"name":"a"}}"#;
        assert_eq!(
            without_type_meta(data),
            r#"{"data":{"kind":"x","a":"b\\\"kind"},"metadata":{"name":"a"}}"#
        );
        let last = r#"{"apiVersion":"v1","metadata":{},"kind":"Pod"}"#;
        assert_eq!(without_type_meta(last), r#"{"metadata":{}}"#);
        let v: Value = serde_json::from_str(&without_type_meta(last)).expect("still JSON");
        assert!(v.get("kind").is_none());
        assert_eq!(without_type_meta(r#"{"a":1}"#), r#"{"a":1}"#);
    }

    #[test]
    fn list_resource_versions_are_checked_as_the_storage_does() {
        assert!(check_resource_version("", false).is_ok());
        assert!(check_resource_version("42", false).is_ok());
        assert!(check_resource_version("0", true).is_ok());
        let e = check_resource_version("+1", false).expect_err("a sign");
        assert_eq!(
            e.message,
            "invalid resource version: resourceVersion: Invalid value: \"+1\": strconv.ParseUint: parsing \"+1\": invalid syntax"
        );
        assert!(
            check_resource_version("99999999999999999999", false)
                .expect_err("too big")
                .message
                .ends_with("value out of range")
        );
        assert_eq!(
            check_resource_version("5", true)
                .expect_err("with continue")
                .message,
            "specifying resource version is not allowed when using continue"
        );
    }

    #[test]
    fn continue_tokens_round_trip() {
        let t = encode_continue(42, "default/b");
        assert_eq!(decode_continue(&t).expect("decode"), "default/b");
        assert!(decode_continue("!!!").is_err());
    }
}
