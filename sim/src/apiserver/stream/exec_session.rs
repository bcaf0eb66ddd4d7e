//! One exec/attach session on an upgraded connection, in the Kubernetes channel protocols
//! (`v4.channel.k8s.io`, `v5.channel.k8s.io`): every binary message starts with a channel byte —
//! 0 stdin, 1 stdout, 2 stderr, 3 error (a `metav1.Status` JSON once the command ended), 4 terminal
//! resize — and v5 adds 255, "close channel N" (the client's end of stdin).
//!
//! Exec reads stdin to its end (when asked for), runs the command once, sends its output and its
//! Status, and closes the WebSocket normally. Attach sends the container's output (its log) as it
//! comes, discards stdin, and ends when the container stops, the pod goes or the client leaves.
//!
//! A session owns the server state (`Arc<App>`, see [`crate::apiserver::stream`]) because it runs in
//! its own task and spawns the log follower of an attach; both read through the narrow handle
//! ([`crate::cluster::Cluster`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};

use crate::apiserver::app::App;
use crate::hooks::{ExecOutput, ExecRequest};

/// The negotiated sub-protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `v4.channel.k8s.io` (no close signal: stdin ends with the connection).
    V4,
    /// `v5.channel.k8s.io` (the client can close stdin with a CLOSE message).
    V5,
}

/// A validated exec or attach request.
#[derive(Debug, Clone)]
pub struct Session {
    /// The pod the session runs in, as stored.
    pub pod: Value,
    /// The container's name (defaulted when the pod has one).
    pub container: String,
    /// The command and its arguments (the `command` query parameters; required for exec).
    pub command: Vec<String>,
    /// Whether this is an attach (`pods/attach`) rather than an exec.
    pub attach: bool,
    /// Whether stdin is streamed (`stdin=true`).
    pub stdin: bool,
    /// Whether stdout is streamed (`stdout=true`).
    pub stdout: bool,
    /// Whether stderr is streamed (`stderr=true`).
    pub stderr: bool,
    /// Whether a TTY was asked for (`tty=true`).
    pub tty: bool,
}

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const CLOSE: u8 = 255;

/// Most stdin an exec takes (more is dropped).
const MAX_STDIN: usize = 64 * 1024 * 1024;
/// Largest data frame sent.
const FRAME: usize = 32 * 1024;

type Ws = WebSocketStream<TokioIo<Upgraded>>;

/// Runs the session to its end.
pub async fn run(app: Arc<App>, upgraded: Upgraded, protocol: Protocol, s: Session) {
    let mut ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
    if s.attach {
        attach(app, &mut ws, &s).await;
        return;
    }
    let stdin = if s.stdin {
        match read_stdin(&mut ws, protocol).await {
            Some(bytes) => bytes,
            None => return,
        }
    } else {
        Vec::new()
    };
    let req = ExecRequest {
        pod: str_at(&s.pod, "/metadata/name").to_string(),
        namespace: str_at(&s.pod, "/metadata/namespace").to_string(),
        container: s.container.clone(),
        command: s.command.clone(),
        stdin,
    };
    let out = match app.cluster().hooks().resolve_exec(&s.pod, &s.command) {
        Some(handler) => tokio::task::spawn_blocking(move || handler(&req))
            .await
            .unwrap_or_else(|_| ExecOutput::fail(126, "piceli-sim: the exec handler panicked\n")),
        None => super::exec_builtin::run(&s.pod, &req),
    };
    let mut stdout = out.stdout;
    if s.tty {
        // A terminal merges stderr into stdout.
        stdout.extend_from_slice(&out.stderr);
    }
    if s.stdout && send_data(&mut ws, STDOUT, &stdout).await.is_err() {
        return;
    }
    if s.stderr && send_data(&mut ws, STDERR, &out.stderr).await.is_err() {
        return;
    }
    let status = status_for(out.exit_code, &s.command);
    let _ = send_frame(&mut ws, ERROR, status.to_string().as_bytes()).await;
    finish(&mut ws).await;
}

/// The Status a kubelet reports on the error channel for an exit code.
pub fn status_for(code: i32, command: &[String]) -> Value {
    if code == 0 {
        return json!({"metadata": {}, "status": "Success"});
    }
    json!({
        "metadata": {},
        "status": "Failure",
        "message": format!(
            "command terminated with non-zero exit code: error executing command [{}], exit code {code}",
            command.join(" ")
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
    })
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// Reads stdin until the client closes it (v5 close signal, or the WebSocket's end on v4).
/// `None` when the client went away without a v5 close signal on a v5 session.
async fn read_stdin(ws: &mut Ws, protocol: Protocol) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    while let Some(msg) = ws.next().await {
        match msg {
            Ok(Message::Binary(b)) => match b.first() {
                Some(&STDIN) => {
                    let room = MAX_STDIN.saturating_sub(buf.len());
                    buf.extend_from_slice(&b[1..][..room.min(b.len() - 1)]);
                }
                Some(&CLOSE) if b.get(1) == Some(&STDIN) => return Some(buf),
                _ => {}
            },
            Ok(Message::Close(_)) => break,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    // The connection ended: a v4 client has no other way to end stdin; a v5 one left.
    (protocol == Protocol::V4).then_some(buf)
}

async fn send_frame(ws: &mut Ws, channel: u8, data: &[u8]) -> Result<(), ()> {
    let mut frame = Vec::with_capacity(data.len() + 1);
    frame.push(channel);
    frame.extend_from_slice(data);
    ws.send(Message::Binary(Bytes::from(frame)))
        .await
        .map_err(|_| ())
}

async fn send_data(ws: &mut Ws, channel: u8, data: &[u8]) -> Result<(), ()> {
    for chunk in data.chunks(FRAME) {
        send_frame(ws, channel, chunk).await?;
    }
    Ok(())
}

/// Closes the WebSocket normally and waits (briefly) for the client's close reply.
async fn finish(ws: &mut Ws) {
    let frame = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    let _ = ws.send(Message::Close(Some(frame))).await;
    let _ = tokio::time::timeout(Duration::from_secs(2), async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
}

/// Attach: the container's output as it comes; stdin is read and discarded.
async fn attach(app: Arc<App>, ws: &mut Ws, s: &Session) {
    let (tx, mut rx) = mpsc::channel::<Bytes>(64);
    let ns = str_at(&s.pod, "/metadata/namespace").to_string();
    let name = str_at(&s.pod, "/metadata/name").to_string();
    let params = super::log::LogParams {
        container: s.container.clone(),
        follow: true,
        ..Default::default()
    };
    let follower =
        tokio::spawn(
            async move { super::log::stream_into(app.cluster(), ns, name, params, tx).await },
        );
    loop {
        tokio::select! {
            chunk = rx.recv() => match chunk {
                Some(data) => {
                    if s.stdout && send_data(ws, STDOUT, &data).await.is_err() {
                        follower.abort();
                        return;
                    }
                }
                None => break,
            },
            msg = ws.next() => match msg {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => {
                    follower.abort();
                    return;
                }
                Some(Ok(_)) => {}
            },
        }
    }
    let status = status_for(0, &[]);
    let _ = send_frame(ws, ERROR, status.to_string().as_bytes()).await;
    finish(ws).await;
}
