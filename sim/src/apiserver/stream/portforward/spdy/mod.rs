//! Port-forward over SPDY/3.1, kubectl's protocol: over a plain HTTP/1.1 upgrade, or tunnelled in
//! the binary messages of a WebSocket (`SPDY/3.1+portforward.k8s.io`). The client opens, per
//! forwarded connection, an error stream and a data stream (headers `streamtype`, `port`,
//! `requestid`); [`session`] pairs them and pumps the data stream to and from the target.

pub mod frame;
pub mod headers;
pub mod session;

use std::future::Future;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use crate::apiserver::app::App;

/// A failed SPDY session.
#[derive(Debug, thiserror::Error)]
pub enum SpdyError {
    /// The peer broke the SPDY protocol (the message says how).
    #[error("SPDY protocol error: {0}")]
    Protocol(String),
    /// A header block could not be compressed or decompressed.
    #[error("SPDY header compression error: {0}")]
    Compression(String),
}

/// Where a session's bytes come from: appends what arrives to `buf`; false at the end.
pub trait Source: Send {
    /// Appends the bytes that arrive to `buf`; false at the end of the stream.
    fn fill(&mut self, buf: &mut BytesMut) -> impl Future<Output = bool> + Send;
}

impl<S: AsyncRead + Send> Source for ReadHalf<S> {
    async fn fill(&mut self, buf: &mut BytesMut) -> bool {
        if buf.capacity() - buf.len() < 16 * 1024 {
            buf.reserve(64 * 1024);
        }
        matches!(self.read_buf(buf).await, Ok(n) if n > 0)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Source for SplitStream<WebSocketStream<S>> {
    async fn fill(&mut self, buf: &mut BytesMut) -> bool {
        loop {
            match self.next().await {
                Some(Ok(Message::Binary(b))) => {
                    buf.extend_from_slice(&b);
                    return true;
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return false,
                Some(Ok(_)) => {}
            }
        }
    }
}

/// Serves SPDY/3.1 on a connection upgraded with `Upgrade: SPDY/3.1`.
pub async fn serve_plain<S>(app: Arc<App>, pod: Value, io: S)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (rd, wr) = tokio::io::split(io);
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let writer = tokio::spawn(write_plain(wr, rx));
    session::run(app, pod, rd, tx).await;
    let _ = writer.await;
}

async fn write_plain<S: AsyncWrite>(mut wr: WriteHalf<S>, mut rx: mpsc::Receiver<Bytes>) {
    while let Some(b) = rx.recv().await {
        if wr.write_all(&b).await.is_err() {
            return;
        }
        // Coalesce what is already queued before flushing.
        while let Ok(more) = rx.try_recv() {
            if wr.write_all(&more).await.is_err() {
                return;
            }
        }
        if wr.flush().await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}

/// Serves SPDY/3.1 tunnelled in WebSocket binary messages.
pub async fn serve_websocket<S>(app: Arc<App>, pod: Value, io: S)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
    let (sink, stream) = ws.split();
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    let writer = tokio::spawn(write_websocket(sink, rx));
    session::run(app, pod, stream, tx).await;
    let _ = writer.await;
}

async fn write_websocket<S: AsyncRead + AsyncWrite + Unpin>(
    mut sink: SplitSink<WebSocketStream<S>, Message>,
    mut rx: mpsc::Receiver<Bytes>,
) {
    while let Some(b) = rx.recv().await {
        if sink.feed(Message::Binary(b)).await.is_err() {
            return;
        }
        while let Ok(more) = rx.try_recv() {
            if sink.feed(Message::Binary(more)).await.is_err() {
                return;
            }
        }
        if sink.flush().await.is_err() {
            return;
        }
    }
    let _ = sink.close().await;
}
