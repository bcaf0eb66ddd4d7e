//! Serving `/openapi/v2` as kube-openapi's handler does: the media type picked from `Accept` as
//! goautoneg orders its clauses (JSON for `*/*` or no header, gnostic's protobuf for
//! `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, 406 otherwise); one ETag for both
//! (the SHA-512 of the JSON, upper-case hex) and the build time as `Last-Modified`, answered by
//! `http.ServeContent`'s conditional requests (`If-None-Match`, `If-Modified-Since` → 304); gzip
//! when the client accepts it. The document is built once per change of the served types.

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};

use crate::apiserver::app::App;
use crate::apiserver::http::{Req, Resp, SimBody, raw};
use crate::registry::Registry;

const JSON: &str = "application/json";
const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The `(type, subtype)`s served, in kube-openapi's order, and the content type each answers with.
const OFFERED: &[(&str, &str, &str)] = &[
    ("application", "json", JSON),
    (
        "application",
        "com.github.proto-openapi.spec.v2@v1.0+protobuf",
        PROTOBUF,
    ),
    (
        "application",
        "com.github.proto-openapi.spec.v2.v1.0+protobuf",
        PROTOBUF,
    ),
];

/// The document in both encodings, for one generation of the served types.
struct Built {
    generation: u64,
    json: Bytes,
    proto: Bytes,
    /// `"HEX"`, quoted as sent.
    etag: String,
    /// Unix seconds of the build.
    modified: i64,
    json_gz: OnceLock<Bytes>,
    proto_gz: OnceLock<Bytes>,
}

impl Built {
    fn new(generation: u64, registry: &Registry) -> Built {
        let started = std::time::Instant::now();
        let (doc, json) = super::document(&registry.all());
        let proto = super::encode::encode(&doc);
        let digest = ring::digest::digest(&ring::digest::SHA512, &json);
        let hex: String = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        tracing::debug!(
            generation,
            json_bytes = json.len(),
            proto_bytes = proto.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "built the OpenAPI v2 document"
        );
        Built {
            generation,
            json,
            proto: Bytes::from(proto),
            etag: format!("\"{hex}\""),
            modified: crate::time::now_secs(),
            json_gz: OnceLock::new(),
            proto_gz: OnceLock::new(),
        }
    }

    fn body(&self, proto: bool, gzip: bool) -> Bytes {
        let (raw, cell) = if proto {
            (&self.proto, &self.proto_gz)
        } else {
            (&self.json, &self.json_gz)
        };
        if gzip {
            cell.get_or_init(|| gzip_bytes(raw)).clone()
        } else {
            raw.clone()
        }
    }
}

fn gzip_bytes(data: &[u8]) -> Bytes {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    match enc.write_all(data).and_then(|_| enc.finish()) {
        Ok(v) => Bytes::from(v),
        Err(e) => {
            tracing::warn!(error = %e, "could not gzip the OpenAPI v2 document");
            Bytes::new()
        }
    }
}

/// The last document built, rebuilt when the served types change.
#[derive(Default)]
pub(crate) struct V2Cache {
    built: Mutex<Option<Arc<Built>>>,
}

impl V2Cache {
    fn get(&self, registry: &Registry) -> Arc<Built> {
        // The generation is read before the types, so a change in between only costs a rebuild.
        let generation = registry.generation();
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = built.as_ref()
            && b.generation == generation
        {
            return b.clone();
        }
        let b = Arc::new(Built::new(generation, registry));
        *built = Some(b.clone());
        b
    }
}

/// One clause of an `Accept` header as goautoneg parses it.
struct Clause<'a> {
    kind: &'a str,
    sub: &'a str,
    q: f64,
}

/// The clauses of `Accept`, sorted as goautoneg sorts them (its insertion sort, for the short
/// headers clients send, with its comparison: higher q first, then specific before `*`).
fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause<'_>> = Vec::new();
    for part in accept.split(',') {
        let part = part.trim_matches(' ');
        let mut params = part.split(';');
        let media = params.next().unwrap_or("");
        let mut pieces = media.split('/');
        let kind = pieces.next().unwrap_or("").trim_matches(' ');
        let sub = match (pieces.next(), pieces.next()) {
            (None, _) if kind == "*" => "*",
            (Some(sub), None) => sub.trim_matches(' '),
            _ => continue,
        };
        let mut q = 1.0;
        for p in params {
            let mut kv = p.split('=');
            if let (Some(k), Some(v), None) = (kv.next(), kv.next(), kv.next())
                && k.trim_matches(' ') == "q"
            {
                q = v.parse::<f32>().map(f64::from).unwrap_or(0.0);
            }
        }
        out.push(Clause { kind, sub, q });
    }
    let less = |a: &Clause<'_>, b: &Clause<'_>| {
        a.q > b.q || (a.kind != "*" && b.kind == "*") || (a.sub != "*" && b.sub == "*")
    };
    for i in 1..out.len() {
        let mut j = i;
        while j > 0 && less(&out[j], &out[j - 1]) {
            out.swap(j, j - 1);
            j -= 1;
        }
    }
    out
}

/// The content type to answer with, or `None` (406).
fn negotiate(accept: &str) -> Option<&'static str> {
    let accept = if accept.is_empty() { "*/*" } else { accept };
    clauses(accept).iter().find_map(|c| {
        OFFERED
            .iter()
            .find(|(kind, sub, _)| {
                (c.kind == *kind || c.kind == "*") && (c.sub == *sub || c.sub == "*")
            })
            .map(|(_, _, ct)| *ct)
    })
}

/// Whether `If-None-Match` names the current ETag (weakly) or is `*`.
fn none_match(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// `If-Modified-Since` in HTTP's date format, as Unix seconds.
fn parse_http_date(s: &str) -> Option<i64> {
    let dt = jiff::civil::DateTime::strptime("%a, %d %b %Y %H:%M:%S GMT", s.trim()).ok()?;
    jiff::tz::Offset::UTC
        .to_timestamp(dt)
        .ok()
        .map(|t| t.as_second())
}

fn http_date(secs: i64) -> String {
    let ts = jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    ts.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Whether the client accepts gzip (an `Accept-Encoding` entry `gzip` with q above 0).
fn accepts_gzip(req: &Req) -> bool {
    req.headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|enc| {
            let mut parts = enc.split(';');
            let name = parts.next().unwrap_or("").trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f64>().ok())
                .unwrap_or(1.0);
            name.eq_ignore_ascii_case("gzip") && q > 0.0
        })
}

fn empty(status: StatusCode) -> Resp {
    let mut r = Response::new(SimBody::Full(None));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    h.append(header::VARY, HeaderValue::from_static("Accept"));
    r
}

fn set(r: &mut Resp, name: header::HeaderName, value: &str) {
    if let Ok(v) = HeaderValue::from_str(value) {
        r.headers_mut().insert(name, v);
    }
}

/// Answers a request for `/openapi/v2` (any method, as kube-openapi's handler).
pub(crate) async fn respond(app: Arc<App>, req: &Req) -> Resp {
    if req.path != "/openapi/v2" {
        // `/openapi/v2/` misses kube-apiserver's exact-path handler: Go's mux answers.
        let mut r = raw(
            404,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"404 page not found\n"),
        );
        set(&mut r, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
        return r;
    }
    let accept = req
        .headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some(content_type) = negotiate(accept) else {
        return empty(StatusCode::NOT_ACCEPTABLE);
    };
    let proto = content_type == PROTOBUF;
    let head = req.method == Method::HEAD;
    let gzip = !head && accepts_gzip(req);
    // Building the document and compressing it take a while: off the runtime's worker threads.
    let work = move || {
        let built = app.openapi_v2.get(&app.backend.registry);
        let body = built.body(proto, gzip);
        (built, body)
    };
    let (built, body) = match tokio::task::spawn_blocking(work).await {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "building the OpenAPI v2 document failed");
            return empty(StatusCode::SERVICE_UNAVAILABLE);
        }
    };
    let get_or_head = req.method == Method::GET || req.method == Method::HEAD;
    let if_none_match = req.header(header::IF_NONE_MATCH);
    let not_modified = if !if_none_match.is_empty() {
        none_match(if_none_match, &built.etag)
    } else {
        get_or_head
            && parse_http_date(req.header(header::IF_MODIFIED_SINCE))
                .is_some_and(|since| built.modified <= since)
    };
    if not_modified {
        let status = if get_or_head {
            StatusCode::NOT_MODIFIED
        } else {
            StatusCode::PRECONDITION_FAILED
        };
        let mut r = empty(status);
        set(&mut r, header::ETAG, &built.etag);
        return r;
    }
    let length = if proto {
        built.proto.len()
    } else {
        built.json.len()
    };
    let mut r = empty(StatusCode::OK);
    *r.body_mut() = SimBody::Full(if head { None } else { Some(body) });
    set(&mut r, header::CONTENT_TYPE, content_type);
    set(&mut r, header::ETAG, &built.etag);
    set(&mut r, header::LAST_MODIFIED, &http_date(built.modified));
    if gzip {
        set(&mut r, header::CONTENT_ENCODING, "gzip");
    } else {
        set(&mut r, header::CONTENT_LENGTH, &length.to_string());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiates_as_kube_openapi() {
        assert_eq!(negotiate(""), Some(JSON));
        assert_eq!(negotiate("*/*"), Some(JSON));
        assert_eq!(negotiate("application/*"), Some(JSON));
        assert_eq!(
            negotiate("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
            Some(PROTOBUF)
        );
        assert_eq!(
            negotiate(
                "application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
            ),
            Some(PROTOBUF)
        );
        assert_eq!(
            negotiate(
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.1, application/json;q=0.9"
            ),
            Some(JSON)
        );
        assert_eq!(negotiate("text/html"), None);
        assert_eq!(negotiate("application/yaml"), None);
    }

    #[test]
    fn conditions_and_dates() {
        let etag = "\"ABC\"";
        assert!(none_match("\"ABC\"", etag));
        assert!(none_match("W/\"ABC\"", etag));
        assert!(none_match("\"x\", \"ABC\"", etag));
        assert!(none_match("*", etag));
        assert!(!none_match("\"x\"", etag));
        let secs = 1_796_528_178;
        assert_eq!(http_date(secs), "Sun, 06 Dec 2026 03:36:18 GMT");
        assert_eq!(parse_http_date(&http_date(secs)), Some(secs));
        assert_eq!(parse_http_date("yesterday"), None);
    }
}
