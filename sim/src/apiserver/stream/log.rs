//! The `pods/log` subresource: a container's log (`log_lines`) as `text/plain`, with the real
//! server's parameters — `container`, `previous`, `timestamps`, `tailLines`, `sinceSeconds`,
//! `sinceTime`, `limitBytes` and `follow` (new lines are streamed until the container stops, the pod
//! goes or the client disconnects) — and its errors (pod not found, container not valid or to be
//! named, waiting to start, no previous instance).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, header};
use serde_json::Value;
use tokio::sync::mpsc;

use super::log_lines::{self, Line, format_nanos};
use crate::apiserver::app::App;
use crate::apiserver::http::{Query, Resp, SimBody, error, raw};
use crate::cluster::Cluster;
use crate::status::{ApiError, Cause};

/// The log request's parameters.
#[derive(Debug, Clone, Default)]
pub struct LogParams {
    /// The container's name (defaulted when the pod has one).
    pub container: String,
    /// `follow`: keep streaming new lines.
    pub follow: bool,
    /// `previous`: the logs of the container's previous instance.
    pub previous: bool,
    /// `timestamps`: prefix each line with its RFC 3339 time.
    pub timestamps: bool,
    /// `tailLines`: only the last lines.
    pub tail_lines: Option<i64>,
    /// Lines at or after this time (nanoseconds since the epoch).
    pub since: Option<i128>,
    /// `limitBytes`: stop after this many bytes.
    pub limit_bytes: Option<i64>,
}

fn int(q: &Query, key: &str) -> Result<Option<i64>, ApiError> {
    q.get(key)
        .map(|v| {
            v.parse::<i64>()
                .map_err(|_| ApiError::bad_request(format!("invalid value {v:?} for {key}")))
        })
        .transpose()
}

/// `PodLogOptions` decoded from the query (a number that does not parse is a 400) and validated as
/// `ValidatePodLogOptions` does (a 422 on the pod's `PodLogOptions` naming every field at fault; the
/// `stream` parameter is refused, as kube-apiserver 1.33 without PodLogsQuerySplitStreams).
fn parse(q: &Query, pod: &str) -> Result<LogParams, ApiError> {
    let since_seconds = int(q, "sinceSeconds")?;
    let since_time = q.get("sinceTime");
    let tail_lines = int(q, "tailLines")?;
    let limit_bytes = int(q, "limitBytes")?;
    let invalid = |field: &str, value: i64, why: &str| Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value}: {why}"),
        field: field.into(),
    };
    let mut causes = Vec::new();
    if let Some(t) = tail_lines.filter(|t| *t < 0) {
        causes.push(invalid(
            "tailLines",
            t,
            "must be greater than or equal to 0",
        ));
    }
    if let Some(l) = limit_bytes.filter(|l| *l < 1) {
        causes.push(invalid("limitBytes", l, "must be greater than 0"));
    }
    match (since_seconds, since_time) {
        (Some(_), Some(_)) => causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
                .into(),
            field: String::new(),
        }),
        (Some(s), None) if s < 1 => {
            causes.push(invalid("sinceSeconds", s, "must be greater than 0"))
        }
        _ => {}
    }
    if q.get("stream").is_some() {
        causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: may not be specified".into(),
            field: "stream".into(),
        });
    }
    if !causes.is_empty() {
        return Err(ApiError::invalid("", "PodLogOptions", pod, causes));
    }
    let now = crate::hooks::log_buffer::now_nanos();
    let since = match (since_seconds, since_time) {
        (Some(s), _) => Some(now - s as i128 * 1_000_000_000),
        (None, Some(t)) => {
            // Fractions are accepted and ignored (whole seconds are compared).
            let whole = match t.split_once('.') {
                Some((head, _)) => format!("{head}Z"),
                None => t.to_string(),
            };
            let secs = crate::time::parse_rfc3339(&whole)
                .ok_or_else(|| ApiError::bad_request(format!("invalid sinceTime {t:?}")))?;
            Some(secs as i128 * 1_000_000_000)
        }
        (None, None) => None,
    };
    Ok(LogParams {
        container: q.get("container").unwrap_or("").to_string(),
        follow: q.flag("follow"),
        previous: q.flag("previous"),
        timestamps: q.flag("timestamps"),
        tail_lines,
        since,
        limit_bytes,
    })
}

/// Answers `pods/log` requests.
pub async fn handle(
    app: Arc<App>,
    req: Request<hyper::body::Incoming>,
    ns: &str,
    pod: &str,
) -> Resp {
    if req.method() != http::Method::GET {
        return error(&ApiError::method_not_allowed(req.uri().path()));
    }
    let query = Query::parse(req.uri().query().unwrap_or(""));
    let mut params = match parse(&query, pod) {
        Ok(p) => p,
        Err(e) => return error(&e),
    };
    let current = match check(&app.cluster(), ns, pod, &mut params) {
        Ok(c) => c,
        Err(e) => return error(&e),
    };
    if !params.follow {
        let mut out = Vec::new();
        for l in select(&current.lines, &params) {
            out.extend_from_slice(&render(&l, params.timestamps));
        }
        if let Some(limit) = params.limit_bytes {
            out.truncate(limit as usize);
        }
        return raw(200, "text/plain", Bytes::from(out));
    }
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let (ns, pod) = (ns.to_string(), pod.to_string());
    tokio::spawn(async move { stream_into(app.cluster(), ns, pod, params, tx).await });
    let mut resp = http::Response::new(SimBody::Stream(rx));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    resp
}

/// Validates the request against the pod (defaulting the container); the lines so far.
fn check(
    cluster: &Cluster,
    ns: &str,
    name: &str,
    params: &mut LogParams,
) -> Result<log_lines::Lines, ApiError> {
    let pod = cluster
        .get(&cluster.rt("", "v1", "pods")?, ns, name)?
        .ok_or_else(|| ApiError::not_found("", "pods", name))?;
    params.container = super::exec::pick_container(&pod, name, &params.container)?;
    log_lines::lines(cluster.hooks(), &pod, &params.container, params.previous)
}

/// The lines the first read shows: since the given time, the last `tailLines` of them.
fn select(lines: &[Line], p: &LogParams) -> Vec<Line> {
    let mut v: Vec<Line> = lines
        .iter()
        .filter(|l| p.since.is_none_or(|s| l.at >= s))
        .cloned()
        .collect();
    if let Some(t) = p.tail_lines {
        let keep = (t as usize).min(v.len());
        v.drain(..v.len() - keep);
    }
    v
}

fn render(l: &Line, timestamps: bool) -> Vec<u8> {
    let text = if timestamps {
        format!("{} {}\n", format_nanos(l.at), l.text)
    } else {
        format!("{}\n", l.text)
    };
    text.into_bytes()
}

/// Sends a container's lines to `tx`; with `follow`, keeps sending new ones until the container
/// instance ends, the pod goes (or is replaced) or the receiver is dropped.
pub async fn stream_into(
    cluster: Cluster<'_>,
    ns: String,
    name: String,
    params: LogParams,
    tx: mpsc::Sender<Bytes>,
) {
    let Ok(pods) = cluster.rt("", "v1", "pods") else {
        return;
    };
    let mut hub = cluster.subscribe();
    let mut added = cluster.hooks().logs.subscribe();
    let mut sent: HashSet<String> = HashSet::new();
    let mut budget = params.limit_bytes.map(|l| l as usize);
    let mut uid: Option<String> = None;
    let mut first = true;
    loop {
        let Ok(Some(pod)) = cluster.get(&pods, &ns, &name) else {
            return;
        };
        let pod_uid = pod
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if uid.get_or_insert_with(|| pod_uid.clone()) != &pod_uid {
            return;
        }
        let Ok(now) = log_lines::lines(cluster.hooks(), &pod, &params.container, params.previous)
        else {
            return;
        };
        let fresh: Vec<Line> = if first {
            select(&now.lines, &params)
        } else {
            now.lines
                .iter()
                .filter(|l| !sent.contains(&l.id))
                .cloned()
                .collect()
        };
        if first {
            sent.extend(now.lines.iter().map(|l| l.id.clone()));
        }
        first = false;
        for l in fresh {
            sent.insert(l.id.clone());
            let mut bytes = render(&l, params.timestamps);
            if let Some(b) = budget.as_mut() {
                bytes.truncate(*b);
                *b -= bytes.len();
            }
            if !bytes.is_empty() && tx.send(Bytes::from(bytes)).await.is_err() {
                return;
            }
            if budget == Some(0) {
                return;
            }
        }
        if now.ended || !params.follow || params.previous {
            return;
        }
        tokio::select! {
            got = hub.recv() => {
                if let Err(tokio::sync::broadcast::error::RecvError::Closed) = got {
                    return;
                }
            }
            changed = added.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = tx.closed() => return,
        }
    }
}
