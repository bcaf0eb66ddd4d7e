//! Watch: a chunked stream of JSON lines. Initial ADDED events for an unset/"0" resourceVersion (or
//! with `sendInitialEvents`, ended by the `k8s.io/initial-events-end` bookmark), changes after a
//! given version, bookmarks, selectors, `timeoutSeconds`, and an expired version reported as an
//! ERROR event (code 410) inside a 200 stream.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::Resolved;
use super::read::{Filter, at_version};
use crate::apiserver::app::App;
use crate::apiserver::http::{Req, Resp, SimBody, error};
use crate::registry::table;
use crate::status::ApiError;

/// How often a watch that asked for bookmarks gets one unless the sim is configured otherwise
/// (`SimConfig::bookmark_interval`): kube-apiserver's watch cache sends one every minute.
pub(crate) const DEFAULT_BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// The bookmark interval of a configuration: its own, else [`DEFAULT_BOOKMARK_INTERVAL`].
pub(crate) fn bookmark_interval(config: &crate::SimConfig) -> Duration {
    config
        .bookmark_interval
        .unwrap_or(DEFAULT_BOOKMARK_INTERVAL)
}

/// How long before a watch's timeout its last bookmark is sent (as the watch cache does, so a
/// client resumes from a fresh version when the server ends the watch).
const BOOKMARK_BEFORE_TIMEOUT: Duration = Duration::from_secs(2);

/// When the next bookmark is due, as kube-apiserver's `cacheWatcher.nextBookmarkTime`: an interval
/// (a minute) from now, or two seconds before the deadline when that is sooner; `None` once that has
/// passed.
fn next_bookmark(
    now: tokio::time::Instant,
    deadline: tokio::time::Instant,
    every: Duration,
) -> Option<tokio::time::Instant> {
    let heartbeat = now + every;
    let at = match deadline.checked_sub(BOOKMARK_BEFORE_TIMEOUT) {
        Some(pre) if pre < heartbeat => pre,
        Some(_) => heartbeat,
        None => return None,
    };
    (at >= now).then_some(at)
}

struct Stream {
    tx: mpsc::Sender<Bytes>,
    r: Resolved,
    table: Option<String>,
    metadata_only: bool,
    columns_sent: bool,
}

impl Stream {
    async fn send(&mut self, kind: &str, object: Value) -> bool {
        let object = match (&self.table, kind) {
            (Some(include), "ADDED" | "MODIFIED" | "DELETED") => {
                let t = table::table(
                    &self.r.rt,
                    &[&object],
                    include,
                    json!({"resourceVersion": crate::registry::object::rv_of(&object)}),
                    !self.columns_sent,
                );
                self.columns_sent = true;
                t
            }
            (None, "ADDED" | "MODIFIED" | "DELETED") if self.metadata_only => {
                super::read::partial(&object)
            }
            _ => object,
        };
        let mut line =
            serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap_or_default();
        line.push(b'\n');
        self.tx.send(Bytes::from(line)).await.is_ok()
    }

    async fn bookmark(&mut self, rv: u64, initial_end: bool) -> bool {
        let mut meta = json!({"resourceVersion": rv.to_string()});
        if initial_end {
            meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let obj = json!({"kind": self.r.rt.kind, "apiVersion": self.r.rt.api_version(), "metadata": meta});
        self.send("BOOKMARK", obj).await
    }

    async fn expired(&mut self, e: &ApiError) {
        let _ = self.send("ERROR", e.to_status()).await;
    }
}

/// GET a collection with `watch=true`.
pub async fn watch(app: Arc<App>, req: Req, r: Resolved) -> Resp {
    let filter = match Filter::from_query(&req, &r.rt) {
        Ok(f) => f,
        Err(e) => return error(&e),
    };
    let rv_param = req.query.get("resourceVersion").unwrap_or("").to_string();
    let send_initial = req.query.flag("sendInitialEvents");
    let bookmarks = req.query.flag("allowWatchBookmarks");
    let timeout = match req.query.int64("timeoutSeconds") {
        Ok(t) => t
            .and_then(|t| u64::try_from(t).ok())
            .filter(|t| *t > 0)
            .unwrap_or(1800),
        Err(e) => return error(&e),
    };
    let table = req.wants_table().then(|| {
        req.query
            .get("includeObject")
            .unwrap_or("Metadata")
            .to_string()
    });
    let since: Option<u64> = match rv_param.as_str() {
        "" | "0" => None,
        v => match v.parse() {
            Ok(n) => Some(n),
            Err(_) => {
                // The watch cache's answer: a 500 with no reason.
                return error(&ApiError::unknown(
                    500,
                    format!(
                        "resourceVersion: Invalid value: {v:?}: strconv.ParseUint: parsing {v:?}: invalid syntax"
                    ),
                ));
            }
        },
    };
    let rx = app.backend.store.hub().subscribe();
    let (tx, body_rx) = mpsc::channel::<Bytes>(256);
    let metadata_only = req.wants_metadata();
    let stream = Stream {
        tx,
        r,
        table,
        metadata_only,
        columns_sent: false,
    };
    tokio::spawn(run(
        app,
        stream,
        rx,
        filter,
        since,
        send_initial,
        bookmarks,
        Duration::from_secs(timeout),
    ));
    let mut resp = http::Response::new(SimBody::Stream(body_rx));
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

#[allow(clippy::too_many_arguments)]
async fn run(
    app: Arc<App>,
    mut s: Stream,
    mut rx: broadcast::Receiver<Arc<crate::storage::Event>>,
    filter: Filter,
    since: Option<u64>,
    send_initial: bool,
    bookmarks: bool,
    timeout: Duration,
) {
    let rk = s.r.rt.store_key();
    let ns = if s.r.rt.namespaced && !s.r.ns.is_empty() {
        Some(s.r.ns.clone())
    } else {
        None
    };
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last;
    if since.is_none() || send_initial {
        let (a, rk2, ns2) = (app.clone(), rk.clone(), ns.clone());
        let listed =
            tokio::task::spawn_blocking(move || a.backend.store.list(&rk2, ns2.as_deref(), None))
                .await;
        let (items, rv) = match listed {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => return s.expired(&e).await,
            Err(e) => return s.expired(&ApiError::internal(e)).await,
        };
        for item in items {
            if filter.matches(&item.object)
                && !s.send("ADDED", at_version(&s.r.rt, item.object)).await
            {
                return;
            }
        }
        last = rv;
        if send_initial && !s.bookmark(rv, true).await {
            return;
        }
    } else {
        let from = since.unwrap_or(0);
        let a = app.clone();
        // With selectors, each change comes with the object's state before it: a change that moved
        // an object out of the selection is DELETED to this watch.
        let selects = !filter.labels.is_empty() || !filter.fields.is_empty();
        let history = tokio::task::spawn_blocking(move || {
            if selects {
                a.backend.store.events_after_with_prev(from)
            } else {
                a.backend.store.events_after(from)
            }
        })
        .await;
        let events = match history {
            Ok(Ok(ev)) => ev,
            Ok(Err(e)) => return s.expired(&e.into()).await,
            Err(e) => return s.expired(&ApiError::internal(e)).await,
        };
        last = from;
        for e in events {
            last = e.rv;
            let Some(kind) = relevant(&e, &rk, ns.as_deref(), &filter, true) else {
                continue;
            };
            if !s.send(kind, at_version(&s.r.rt, (*e.object).clone())).await {
                return;
            }
        }
    }
    let every = app.bookmark_interval;
    let mut bookmark_at =
        next_bookmark(tokio::time::Instant::now(), deadline, every).filter(|_| bookmarks);
    loop {
        let wake = bookmark_at.map_or(deadline, |b| b.min(deadline));
        let next = tokio::select! {
            r = rx.recv() => Some(r),
            _ = tokio::time::sleep_until(wake) => None,
            // The client went away: stop at once rather than at the next event.
            _ = s.tx.closed() => return,
        };
        match next {
            None if tokio::time::Instant::now() >= deadline => return,
            None => {
                if bookmarks && !s.bookmark(last, false).await {
                    return;
                }
                // One bookmark per due time: the next is an interval on, unless only the
                // pre-timeout one was left.
                let now = tokio::time::Instant::now();
                bookmark_at = next_bookmark(now, deadline, every)
                    .filter(|b| *b > now + Duration::from_millis(10));
            }
            Some(Ok(e)) => {
                if e.rv <= last {
                    continue;
                }
                last = e.rv;
                if let Some(kind) = relevant(&e, &rk, ns.as_deref(), &filter, false)
                    && !s.send(kind, at_version(&s.r.rt, (*e.object).clone())).await
                {
                    return;
                }
            }
            Some(Err(broadcast::error::RecvError::Lagged(_))) => {
                return s
                    .expired(&ApiError::expired(
                        "the watch fell too far behind; please re-list",
                    ))
                    .await;
            }
            Some(Err(broadcast::error::RecvError::Closed)) => return,
        }
    }
}

/// The event type a watch sends for a change, if any: with selectors, an object that stops matching
/// is DELETED and one that starts matching is ADDED. `unknown_prev_matched`: how to take a MODIFIED
/// change without its previous state — in a resumed history that is only where the history was
/// compacted, and the watcher may hold the object, so one that does not match now is DELETED.
fn relevant(
    e: &crate::storage::Event,
    rk: &str,
    ns: Option<&str>,
    filter: &Filter,
    unknown_prev_matched: bool,
) -> Option<&'static str> {
    if e.rk != rk || ns.is_some_and(|n| n != e.ns) {
        return None;
    }
    let now = filter.matches(&e.object);
    let before = match &e.prev {
        Some(p) => Some(filter.matches(p)),
        None => unknown_prev_matched.then_some(true),
    };
    match (e.kind, before) {
        (crate::storage::EventType::Modified, Some(before)) => match (before, now) {
            (true, true) => Some("MODIFIED"),
            (false, true) => Some("ADDED"),
            (true, false) => Some("DELETED"),
            (false, false) => None,
        },
        (kind, _) => now.then_some(kind.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookmarks_come_every_minute_unless_configured() {
        assert_eq!(
            bookmark_interval(&crate::SimConfig::default()),
            Duration::from_secs(60)
        );
        let fast = crate::SimConfig {
            bookmark_interval: Some(Duration::from_millis(250)),
            ..Default::default()
        };
        assert_eq!(bookmark_interval(&fast), Duration::from_millis(250));
    }

    #[test]
    fn the_next_bookmark_is_an_interval_on_or_just_before_the_timeout() {
        let now = tokio::time::Instant::now();
        let minute = DEFAULT_BOOKMARK_INTERVAL;
        let long = now + Duration::from_secs(1800);
        assert_eq!(next_bookmark(now, long, minute), Some(now + minute));
        // A watch ending in 30 s gets its bookmark 2 s before that.
        let short = now + Duration::from_secs(30);
        assert_eq!(
            next_bookmark(now, short, minute),
            Some(now + Duration::from_secs(28))
        );
        // Once that time has passed, none.
        assert_eq!(
            next_bookmark(now, now + Duration::from_secs(1), minute),
            None
        );
        assert_eq!(
            next_bookmark(now, long, Duration::from_secs(1)),
            Some(now + Duration::from_secs(1))
        );
    }
}
