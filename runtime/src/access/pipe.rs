//! One accepted connection: opened through a fresh forward to a ready pod (chosen anew for every
//! connection, so when a pod goes away the next connection reaches another), retried with backoff when
//! the forward cannot be opened, then piped both ways until either side closes.

use super::Context;
use super::event::Event;
use super::spec::Spec;
use crate::forward;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;

/// How many times a connection tries to open its forward.
pub const ATTEMPTS: u32 = 4;
/// The first wait between attempts (doubled each time).
const BACKOFF: Duration = Duration::from_millis(150);

/// Serve one connection. `last_pod` remembers the pod the previous connection reached.
pub async fn pipe(
    cx: Context,
    spec: Arc<Spec>,
    mut tcp: TcpStream,
    last_pod: Arc<Mutex<Option<String>>>,
    emit: super::Emit,
) {
    let mut delay = BACKOFF;
    let mut attempt = 1;
    let mut fwd = loop {
        match forward::connect(
            &cx.client,
            &cx.app,
            &cx.namespace,
            &spec.name,
            spec.port.as_ref(),
        )
        .await
        {
            Ok(f) => break f,
            Err(e) if attempt >= ATTEMPTS => {
                emit(Event::ConnectFailed {
                    name: spec.name.clone(),
                    message: format!("{e} (after {ATTEMPTS} attempts)"),
                });
                return;
            }
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay *= 2;
                attempt += 1;
            }
        }
    };
    let changed = {
        let mut last = last_pod.lock().unwrap_or_else(|p| p.into_inner());
        let changed = last.as_deref().is_some_and(|p| p != fwd.endpoint.pod);
        *last = Some(fwd.endpoint.pod.clone());
        changed
    };
    if changed {
        emit(Event::Pod {
            name: spec.name.clone(),
            pod: fwd.endpoint.pod.clone(),
            port: fwd.endpoint.port,
        });
    }
    let _ = tokio::io::copy_bidirectional(&mut tcp, &mut fwd.stream).await;
    drop(fwd.stream);
    fwd.forwarder.abort();
}
