//! One SPDY/3.1 port-forward session, server side.
//!
//! Every client SYN_STREAM gets a SYN_REPLY at once. Streams are paired by their `requestid`
//! header: once a request has its error stream and its data stream, a task opens the target
//! ([`crate::apiserver::stream::portforward::target`]) and pumps bytes both ways: data frames from the client
//! go to the target (a FIN half-closes it), bytes from the target go back as data frames and the
//! target's end sends FIN on the data stream and then on the error stream. If the target cannot
//! be reached, the reason is written on the error stream.
//!
//! Flow control (SPDY/3.1): the server sends WINDOW_UPDATE frames (per stream and for the
//! session) for the data it has taken, every 32 KiB, so a client that honours windows never
//! stalls. Like the Go `spdystream` peers kubectl and the kubelet use, the server does not limit
//! what it sends by the client's windows. PINGs are echoed; GOAWAY or the end of the connection
//! ends the session and every forward.
//!
//! The session and each forward's task own the server state (`Arc<App>`, see
//! [`crate::apiserver::stream`]) only to outlive the request; a forward opens its target through the
//! narrow handle ([`crate::cluster::Cluster`]).

use std::collections::HashMap;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::frame::{self, Frame};
use super::headers::{Decoder, Encoder};
use super::{Source, SpdyError};
use crate::apiserver::app::App;
use crate::apiserver::stream::portforward::target;

/// Unacknowledged bytes after which a WINDOW_UPDATE goes out.
const WINDOW_STEP: u32 = 32 * 1024;
/// Queued client chunks per data stream before the session waits for the target.
const STREAM_QUEUE: usize = 32;
/// How much is read from a target per data frame.
const READ_CHUNK: usize = 32 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Data,
    Error,
}

struct StreamEntry {
    kind: Kind,
    request: String,
    /// The data stream's way to its target (dropped on FIN or reset).
    to_target: Option<mpsc::Sender<Bytes>>,
    unacked: u32,
}

#[derive(Default)]
struct Pending {
    error: Option<u32>,
    data: Option<u32>,
    port: Option<Result<u16, String>>,
    rx: Option<mpsc::Receiver<Bytes>>,
}

struct Session {
    app: Arc<App>,
    pod: Value,
    out: mpsc::Sender<Bytes>,
    decoder: Decoder,
    encoder: Encoder,
    streams: HashMap<u32, StreamEntry>,
    requests: HashMap<String, Pending>,
    /// The forwards started (aborted when the session ends).
    tasks: Vec<JoinHandle<()>>,
    session_unacked: u32,
    last_stream: u32,
}

/// Runs a session until the client goes away; frames to send go to `out`.
pub async fn run<S: Source>(app: Arc<App>, pod: Value, mut input: S, out: mpsc::Sender<Bytes>) {
    let encoder = match Encoder::new() {
        Ok(e) => e,
        Err(_) => return,
    };
    let mut s = Session {
        app,
        pod,
        out,
        decoder: Decoder::default(),
        encoder,
        streams: HashMap::new(),
        requests: HashMap::new(),
        tasks: Vec::new(),
        session_unacked: 0,
        last_stream: 0,
    };
    let mut buf = BytesMut::with_capacity(64 * 1024);
    'read: loop {
        loop {
            match frame::take(&mut buf) {
                Ok(Some(f)) => match s.on_frame(f).await {
                    Ok(true) => {}
                    Ok(false) => break 'read,
                    Err(_) => {
                        let _ = s
                            .out
                            .send(frame::goaway(s.last_stream, frame::PROTOCOL_ERROR))
                            .await;
                        break 'read;
                    }
                },
                Ok(None) => break,
                Err(_) => {
                    let _ = s
                        .out
                        .send(frame::goaway(s.last_stream, frame::PROTOCOL_ERROR))
                        .await;
                    break 'read;
                }
            }
        }
        if !input.fill(&mut buf).await {
            break;
        }
    }
    for t in s.tasks {
        t.abort();
    }
}

impl Session {
    async fn send(&self, b: Bytes) {
        let _ = self.out.send(b).await;
    }

    /// Handles one frame; false ends the session.
    async fn on_frame(&mut self, f: Frame) -> Result<bool, SpdyError> {
        match f {
            Frame::Data {
                stream,
                flags,
                data,
            } => {
                self.on_data(stream, flags & frame::FLAG_FIN != 0, data)
                    .await
            }
            Frame::Control { version, .. } if version != frame::VERSION => {
                return Err(SpdyError::Protocol(format!(
                    "unsupported version {version}"
                )));
            }
            Frame::Control { kind, payload, .. } => match kind {
                frame::SYN_STREAM => self.on_syn_stream(&payload).await?,
                frame::RST_STREAM => {
                    if let Some(id) = frame::stream_of(&payload) {
                        self.reset(id);
                    }
                }
                frame::PING if payload.len() == 4 => {
                    self.send(frame::control(frame::PING, 0, &payload)).await;
                }
                frame::GOAWAY => return Ok(false),
                // Decoded only to keep the compression context in step.
                frame::HEADERS if payload.len() >= 4 => {
                    self.decoder.decode(&payload[4..])?;
                }
                // SETTINGS and WINDOW_UPDATE need no answer (see the module doc); SYN_REPLY
                // cannot come (the server opens no streams); unknown types are ignored.
                _ => {}
            },
        }
        Ok(true)
    }

    async fn on_syn_stream(&mut self, payload: &Bytes) -> Result<(), SpdyError> {
        let (id, block) = frame::syn_stream_parts(payload)?;
        let headers = self.decoder.decode(&block)?;
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.split('\0').next().unwrap_or("").to_string())
        };
        let kind = match get("streamtype").as_deref() {
            Some("data") => Kind::Data,
            Some("error") => Kind::Error,
            _ => {
                self.send(frame::rst_stream(id, frame::PROTOCOL_ERROR))
                    .await;
                return Ok(());
            }
        };
        if id == 0 || id % 2 == 0 || self.streams.contains_key(&id) {
            self.send(frame::rst_stream(id, frame::PROTOCOL_ERROR))
                .await;
            return Ok(());
        }
        self.last_stream = self.last_stream.max(id);
        let port = match get("port") {
            None => Err("\"port\" header is required".to_string()),
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(format!("invalid port {p:?}")),
            },
        };
        let request = get("requestid").unwrap_or_default();
        let reply = self.encoder.encode(&[])?;
        self.send(frame::syn_reply(id, &reply)).await;
        let pending = self.requests.entry(request.clone()).or_default();
        let mut to_target = None;
        match kind {
            Kind::Error => pending.error = Some(id),
            Kind::Data => {
                let (tx, rx) = mpsc::channel(STREAM_QUEUE);
                to_target = Some(tx);
                pending.data = Some(id);
                pending.rx = Some(rx);
                pending.port = Some(port);
            }
        }
        self.streams.insert(
            id,
            StreamEntry {
                kind,
                request: request.clone(),
                to_target,
                unacked: 0,
            },
        );
        self.maybe_start(&request);
        Ok(())
    }

    /// Starts the forward of a request once both of its streams are open.
    fn maybe_start(&mut self, request: &str) {
        let Some(p) = self.requests.get_mut(request) else {
            return;
        };
        let (Some(error), Some(data), Some(port), Some(rx)) =
            (p.error, p.data, p.port.take(), p.rx.take())
        else {
            return;
        };
        self.tasks.retain(|t| !t.is_finished());
        self.tasks.push(tokio::spawn(forward(
            self.app.clone(),
            self.pod.clone(),
            port,
            data,
            error,
            rx,
            self.out.clone(),
        )));
    }

    async fn on_data(&mut self, id: u32, fin: bool, data: Bytes) {
        let len = data.len() as u32;
        let Some(entry) = self.streams.get_mut(&id) else {
            // Data for a stream that is gone: still counts against the session window.
            self.session_unacked += len;
            return self.ack_session().await;
        };
        if !data.is_empty()
            && let Some(tx) = &entry.to_target
            && tx.send(data).await.is_err()
        {
            entry.to_target = None;
        }
        entry.unacked += len;
        if fin {
            // The client is done with this stream: drop it (a data stream's target is half-closed
            // as its sender goes); the request itself is done once its data stream is.
            if let Some(e) = self.streams.remove(&id)
                && e.kind == Kind::Data
            {
                self.requests.remove(&e.request);
            }
        } else if entry.unacked >= WINDOW_STEP {
            let delta = std::mem::take(&mut entry.unacked);
            self.send(frame::window_update(id, delta)).await;
        }
        self.session_unacked += len;
        self.ack_session().await;
    }

    async fn ack_session(&mut self) {
        if self.session_unacked >= WINDOW_STEP {
            let delta = std::mem::take(&mut self.session_unacked);
            self.send(frame::window_update(0, delta)).await;
        }
    }

    /// The client reset a stream: a reset data stream no longer feeds its target (whose
    /// shutdown then ends the forward).
    fn reset(&mut self, id: u32) {
        let Some(entry) = self.streams.remove(&id) else {
            return;
        };
        if entry.kind == Kind::Data
            && let Some(p) = self.requests.remove(&entry.request)
            && let Some(e) = p.error
        {
            self.streams.remove(&e);
        }
    }
}

/// Pumps one forwarded connection between the data stream and the target.
async fn forward(
    app: Arc<App>,
    pod: Value,
    port: Result<u16, String>,
    data: u32,
    error: u32,
    mut rx: mpsc::Receiver<Bytes>,
    out: mpsc::Sender<Bytes>,
) {
    let conn = match port {
        Ok(p) => target::open(&app.cluster(), &pod, p).await,
        Err(e) => Err(e),
    };
    let conn = match conn {
        Ok(c) => c,
        Err(msg) => {
            let _ = out.send(frame::data(error, true, msg.as_bytes())).await;
            let _ = out.send(frame::data(data, true, &[])).await;
            return;
        }
    };
    let (mut rd, mut wr) = tokio::io::split(conn);
    let upstream = tokio::spawn(async move {
        while let Some(b) = rx.recv().await {
            if wr.write_all(&b).await.is_err() {
                // Drain so the session never blocks on a dead target.
                while rx.recv().await.is_some() {}
                return;
            }
        }
        let _ = wr.shutdown().await;
    });
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match rd.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.send(frame::data(data, false, &buf[..n])).await.is_err() {
                    upstream.abort();
                    return;
                }
            }
        }
    }
    let _ = out.send(frame::data(data, true, &[])).await;
    let _ = out.send(frame::data(error, true, &[])).await;
    let _ = upstream.await;
}
