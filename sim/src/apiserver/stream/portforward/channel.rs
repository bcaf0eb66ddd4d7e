//! Port-forward over WebSocket with channel framing (`v4.channel.k8s.io`, `portforward.k8s.io`,
//! `v5.channel.k8s.io`), as kube's `Portforwarder` speaks it.
//!
//! Every binary message starts with a channel byte: port index `i` has data channel `2i` and error
//! channel `2i+1`. The server first sends each channel the port number (2 bytes, little endian);
//! then data flows on the data channels, and a failure to reach a port is sent as text on its
//! error channel. v4 cannot half-close: the server closes the WebSocket once every port's target
//! has ended; v5 also signals each ended data channel with `[255, channel]`.

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, WriteHalf};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::ChannelProto;
use super::target::{self, Conn};
use crate::cluster::Cluster;

/// The v5 close-signal channel.
const CLOSE_CHANNEL: u8 = 255;
/// How much is read from a target per message.
const READ_CHUNK: usize = 64 * 1024;

fn framed(ch: u8, data: &[u8]) -> Message {
    let mut b = BytesMut::with_capacity(data.len() + 1);
    b.put_u8(ch);
    b.put_slice(data);
    Message::Binary(b.freeze())
}

/// Serves one upgraded connection.
pub async fn serve<S>(cluster: Cluster<'_>, pod: Value, ports: Vec<u16>, proto: ChannelProto, io: S)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // At most 127 ports fit the channel byte (and 255 is the v5 close signal).
    let ports: Vec<u16> = ports.into_iter().take(127).collect();
    let ws = WebSocketStream::from_raw_socket(io, Role::Server, None).await;
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = mpsc::channel::<Message>(64);
    let writer = tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            let close = matches!(m, Message::Close(_));
            if sink.send(m).await.is_err() || close {
                break;
            }
        }
        let _ = sink.close().await;
    });
    for (i, port) in ports.iter().enumerate() {
        let le = port.to_le_bytes();
        let _ = tx.send(framed(2 * i as u8, &le)).await;
        let _ = tx.send(framed(2 * i as u8 + 1, &le)).await;
    }
    let (done_tx, mut done_rx) = mpsc::channel::<usize>(ports.len().max(1));
    let mut writers: Vec<Option<WriteHalf<Box<dyn Conn>>>> = Vec::with_capacity(ports.len());
    let mut readers = Vec::with_capacity(ports.len());
    for (i, port) in ports.iter().enumerate() {
        match target::open(&cluster, &pod, *port).await {
            Ok(conn) => {
                let (mut rd, wr) = tokio::io::split(conn);
                writers.push(Some(wr));
                let (tx, done_tx) = (tx.clone(), done_tx.clone());
                readers.push(tokio::spawn(async move {
                    let ch = 2 * i as u8;
                    let mut buf = vec![0u8; READ_CHUNK];
                    loop {
                        match rd.read(&mut buf[..]).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                if tx.send(framed(ch, &buf[..n])).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    if proto == ChannelProto::V5 {
                        let _ = tx.send(framed(CLOSE_CHANNEL, &[ch])).await;
                    }
                    let _ = done_tx.send(i).await;
                }));
            }
            Err(msg) => {
                writers.push(None);
                let _ = tx.send(framed(2 * i as u8 + 1, msg.as_bytes())).await;
                let _ = done_tx.send(i).await;
            }
        }
    }
    drop(done_tx);
    let mut ended = 0;
    loop {
        tokio::select! {
            msg = stream.next() => match msg {
                Some(Ok(Message::Binary(b))) => to_target(&mut writers, proto, b).await,
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            Some(_) = done_rx.recv() => {
                ended += 1;
                if ended == ports.len() {
                    let _ = tx.send(Message::Close(None)).await;
                    break;
                }
            }
        }
    }
    for w in writers.iter_mut().flatten() {
        let _ = w.shutdown().await;
    }
    for r in readers {
        r.abort();
    }
    drop(tx);
    let _ = writer.await;
}

/// Writes one client message to its port's target.
async fn to_target(
    writers: &mut [Option<WriteHalf<Box<dyn Conn>>>],
    proto: ChannelProto,
    b: Bytes,
) {
    let Some((&ch, data)) = b.split_first() else {
        return;
    };
    if ch == CLOSE_CHANNEL && proto == ChannelProto::V5 {
        // The client closed its side of a data channel: half-close the target.
        if let Some(&closed) = data.first()
            && closed % 2 == 0
            && let Some(slot) = writers.get_mut(closed as usize / 2)
            && let Some(mut w) = slot.take()
        {
            let _ = w.shutdown().await;
        }
        return;
    }
    if ch % 2 != 0 || data.is_empty() {
        return;
    }
    if let Some(slot) = writers.get_mut(ch as usize / 2)
        && let Some(w) = slot
        && w.write_all(data).await.is_err()
    {
        *slot = None;
    }
}
