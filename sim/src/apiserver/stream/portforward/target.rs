//! Where one forwarded connection goes: a real TCP connection to the address the pod's port is
//! mapped to (`RunningSim::map_port`), or else the built-in responder over an in-memory pipe.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::cluster::Cluster;

/// A byte stream to the forwarded port.
pub trait Conn: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Conn for T {}

/// How long opening a mapped address may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The in-memory pipe's buffer towards the built-in responder.
const PIPE_BUFFER: usize = 64 * 1024;

/// Opens a connection to `port` of `pod`; the error is the text the error stream carries.
pub async fn open(cluster: &Cluster<'_>, pod: &Value, port: u16) -> Result<Box<dyn Conn>, String> {
    let name = pod
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(addr) = cluster.hooks().resolve_port(pod, port) else {
        let (ours, theirs) = tokio::io::duplex(PIPE_BUFFER);
        tokio::spawn(super::responder::serve(theirs, name));
        return Ok(Box::new(ours));
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Ok(Box::new(s))
        }
        Ok(Err(e)) => Err(format!(
            "failed to connect to port {port} of pod {name} (mapped to {addr}): {e}"
        )),
        Err(_) => Err(format!(
            "failed to connect to port {port} of pod {name} (mapped to {addr}): timed out"
        )),
    }
}
