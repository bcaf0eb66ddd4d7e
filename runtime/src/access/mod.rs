//! `access`: serve the app's declared port forwards on 127.0.0.1 (never another interface). Every local
//! port is bound before anything is served (a taken port refuses the whole command); each accepted
//! connection is piped through its own forward to a ready pod; each forward with a `health` path is
//! probed every few seconds. Everything runs in this process (no child processes): when it ends — a
//! shutdown signal, or a kill — the listeners go with it.

pub mod error;
pub mod event;
pub mod pipe;
pub mod probe;
pub mod spec;

pub use error::AccessError;
pub use event::Event;
pub use spec::{Spec, forwards};

use crate::forward;
use piceli_core::model::App;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// Where events go (printed by the CLI).
pub type Emit = Arc<dyn Fn(Event) + Send + Sync>;

/// What every connection needs: the cluster, the app and the namespace.
#[derive(Clone)]
pub struct Context {
    /// The cluster.
    pub client: kube::Client,
    /// The app.
    pub app: Arc<App>,
    /// The namespace of its pods.
    pub namespace: String,
}

/// Bind every forward's local port on 127.0.0.1, all or none.
pub async fn bind(specs: &[Spec]) -> Result<Vec<(Spec, TcpListener)>, AccessError> {
    let mut out = Vec::new();
    for s in specs {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, s.local_port));
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| AccessError::PortInUse {
                name: s.name.clone(),
                port: s.local_port,
                reason: e.to_string(),
            })?;
        out.push((s.clone(), listener));
    }
    Ok(out)
}

async fn accept_loop(cx: Context, spec: Arc<Spec>, listener: TcpListener, emit: Emit) {
    let last_pod = Arc::new(Mutex::new(None));
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((tcp, _)) = accepted {
                    let _ = tcp.set_nodelay(true);
                    connections.spawn(pipe::pipe(cx.clone(), spec.clone(), tcp, last_pod.clone(), emit.clone()));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Serve the bound forwards until `shutdown` completes, then close every listener and connection.
pub async fn serve(
    cx: Context,
    bound: Vec<(Spec, TcpListener)>,
    emit: Emit,
    shutdown: impl Future<Output = ()>,
) {
    let mut tasks = JoinSet::new();
    for (mut spec, listener) in bound {
        if let Ok(addr) = listener.local_addr() {
            spec.local_port = addr.port();
        }
        let pod = match forward::port_target(&cx.app, &spec.name, spec.port.as_ref()) {
            Ok(t) => forward::ready_pod(&cx.client, &cx.app, &cx.namespace, &t)
                .await
                .ok()
                .map(|e| (e.pod, e.port)),
            Err(_) => None,
        };
        emit(Event::Ready {
            name: spec.name.clone(),
            local_port: spec.local_port,
            service_port: spec.service_port,
            pod,
        });
        if let Some(path) = spec.health.clone() {
            tasks.spawn(probe::run(cx.clone(), spec.clone(), path, emit.clone()));
        }
        tasks.spawn(accept_loop(
            cx.clone(),
            Arc::new(spec),
            listener,
            emit.clone(),
        ));
    }
    shutdown.await;
    tasks.shutdown().await;
    emit(Event::Stopped);
}
