//! Starting and stopping a simulator: PKI, store, the HTTPS listener on 127.0.0.1, the kubeconfig,
//! and the public handle tests use ([`RunningSim`]).

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http::Request;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;
use tower::{Service, ServiceExt};

use crate::apiserver::app::App;
use crate::apiserver::head_errors::StatusOnHeadErrors;
use crate::apiserver::http::Resp;
use crate::apiserver::{kubeconfig, tls};
use crate::error::SimError;
use piceli_net::conn_timeouts::{Answering, IDLE_TIMEOUT, Limits, Phases, Watched};

/// How to start a simulator.
#[derive(Debug, Clone, Default)]
pub struct SimConfig {
    /// Cluster directory (state database, CA, token, kubeconfig); `None` keeps everything in memory.
    pub dir: Option<PathBuf>,
    /// Port on 127.0.0.1; `None` picks a free one.
    pub port: Option<u16>,
    /// The simulated controllers (Deployments, ReplicaSets, Pods) and their timing.
    pub controllers: crate::controllers::ControllerConfig,
    /// How long a connection may take for its TLS handshake and for each request's headers, counted
    /// from the request's first byte, before it is closed (slowloris connections); `None`: 10 s.
    pub header_timeout: Option<Duration>,
    /// How long a keep-alive connection may stay idle between requests before it is closed;
    /// `None`: 90 s, as kube-apiserver.
    pub idle_timeout: Option<Duration>,
    /// Serve every authenticated request without RBAC checks (`--no-rbac`).
    pub no_rbac: bool,
    /// How many change events watches can resume from (`--watch-history`); `None`: 20,000.
    pub watch_history: Option<u64>,
    /// Compact the watch history every interval, as kube-apiserver compacts etcd
    /// (`--etcd-compaction-interval`): each tick drops the events up to the resourceVersion of the
    /// previous tick, so a watch resumed from an older version gets 410 Gone
    /// (`--compaction-interval`); `None`: by count only.
    pub compaction_interval: Option<Duration>,
    /// Run the built-in cert-manager (`--cert-manager`): the cert-manager.io/v1 CRDs, selfSigned and
    /// CA issuers writing Certificates' Secrets, renewal, and CA injection into webhook
    /// configurations annotated `cert-manager.io/inject-ca-from`.
    pub cert_manager: bool,
    /// How often a watch that asked for bookmarks (`allowWatchBookmarks`) gets one
    /// (`--bookmark-interval-ms`); `None`: every minute, as kube-apiserver's watch cache.
    pub bookmark_interval: Option<Duration>,
}

/// Entry point: `Sim::start(SimConfig::default())`.
pub struct Sim;

/// A running simulator. Dropping it shuts the server down.
pub struct RunningSim {
    addr: SocketAddr,
    kubeconfig_yaml: String,
    kubeconfig_path: PathBuf,
    _tmp: Option<crate::apiserver::scratch_dir::ScratchDir>,
    app: Arc<App>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sim {
    /// Starts a simulator on its own threads and returns once it accepts connections.
    pub fn start(config: SimConfig) -> Result<RunningSim, SimError> {
        piceli_net::tls::install_default();
        let (dir, tmp) = match &config.dir {
            Some(d) => {
                std::fs::create_dir_all(d).map_err(|e| SimError::io(d, e))?;
                check_writable(d)?;
                (d.clone(), None)
            }
            None => {
                let t = crate::apiserver::scratch_dir::ScratchDir::create()
                    .map_err(|e| SimError::io(&std::env::temp_dir(), e))?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        let creds = tls::load_or_create(config.dir.as_deref())?;
        let server_config = tls::server_config(&creds)?;
        let listener = bind(config.port, config.dir.as_deref())?;
        listener
            .set_nonblocking(true)
            .map_err(|e| SimError::Runtime(e.to_string()))?;
        let addr = listener
            .local_addr()
            .map_err(|e| SimError::Runtime(e.to_string()))?;
        let url = format!("https://{addr}");
        let kubeconfig_yaml = kubeconfig::render(&url, &creds.ca_cert_pem, &creds.token);
        let kubeconfig_path = dir.join("kubeconfig");
        tls::write_private(&kubeconfig_path, &kubeconfig_yaml)?;
        let mut app = App::new(
            config.dir.as_deref(),
            creds.token.clone(),
            creds.ca_cert_pem.clone(),
            addr.to_string(),
        )?;
        app.rbac = !config.no_rbac;
        app.bookmark_interval = crate::apiserver::handlers::bookmark_interval(&config);
        if let Some(events) = config.watch_history {
            app.backend.store.set_history(events);
        }
        if config.cert_manager {
            app.cert_manager = true;
            crate::certmanager::install(&app.backend).map_err(|e| SimError::Runtime(e.message))?;
        }
        let app = Arc::new(app);

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(8)
            .thread_name("piceli-sim")
            .enable_all()
            .build()
            .map_err(|e| SimError::Runtime(e.to_string()))?;
        let (stop_tx, stop_rx) = oneshot::channel();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let served = app.clone();
        let controllers = config.controllers.clone();
        let timing = Timing {
            connections: Limits {
                header: config.header_timeout.unwrap_or(Duration::from_secs(10)),
                idle: config.idle_timeout.unwrap_or(IDLE_TIMEOUT),
            },
            compaction: config.compaction_interval,
        };
        let thread = std::thread::Builder::new()
            .name("piceli-sim-server".into())
            .spawn(move || {
                runtime.block_on(serve(
                    listener,
                    server_config,
                    served,
                    controllers,
                    stop_rx,
                    ready_tx,
                    timing,
                ));
                runtime.shutdown_timeout(Duration::from_secs(1));
            })
            .map_err(|e| SimError::Runtime(e.to_string()))?;
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(SimError::Runtime(
                    "server thread exited during start-up".into(),
                ));
            }
        }
        Ok(RunningSim {
            addr,
            kubeconfig_yaml,
            kubeconfig_path,
            _tmp: tmp,
            app,
            shutdown: Some(stop_tx),
            thread: Some(thread),
        })
    }
}

/// Binds 127.0.0.1: the requested port; else the port the directory's kubeconfig names (so running
/// clients keep their address across restarts), when it is free; else a free one.
fn bind(port: Option<u16>, dir: Option<&Path>) -> Result<TcpListener, SimError> {
    if let Some(port) = port {
        return TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .map_err(|source| SimError::Bind { port, source });
    }
    let previous = dir
        .and_then(|d| std::fs::read_to_string(d.join("kubeconfig")).ok())
        .and_then(|k| kubeconfig::port_of(&k));
    if let Some(p) = previous
        && let Ok(l) = TcpListener::bind((Ipv4Addr::LOCALHOST, p))
    {
        return Ok(l);
    }
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|source| SimError::Bind { port: 0, source })
}

/// The server's time limits: a connection's handshake, header and idle timeouts, watch-history
/// compaction interval.
struct Timing {
    connections: Limits,
    compaction: Option<Duration>,
}

/// Compacts the watch history every `every`, up to the resourceVersion seen one tick earlier.
async fn compact_every(app: Arc<App>, every: Duration) {
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
    tick.tick().await;
    let mut previous = app.backend.store.current_rv().ok();
    loop {
        tick.tick().await;
        let a = app.clone();
        if let Some(upto) = previous {
            let _ =
                tokio::task::spawn_blocking(move || a.backend.store.compact_to(Some(upto))).await;
        }
        previous = app.backend.store.current_rv().ok();
    }
}

fn check_writable(dir: &Path) -> Result<(), SimError> {
    let probe = dir.join(".piceli-sim-write-test");
    std::fs::write(&probe, b"ok").map_err(|e| SimError::io(dir, e))?;
    std::fs::remove_file(&probe).map_err(|e| SimError::io(dir, e))
}

async fn serve(
    listener: TcpListener,
    tls_config: Arc<rustls::ServerConfig>,
    app: Arc<App>,
    controllers: crate::controllers::ControllerConfig,
    mut stop: oneshot::Receiver<()>,
    ready: std::sync::mpsc::Sender<Result<(), SimError>>,
    timing: Timing,
) {
    let Timing {
        connections,
        compaction,
    } = timing;
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            let _ = ready.send(Err(SimError::Runtime(e.to_string())));
            return;
        }
    };
    app.start_background();
    if let Some(every) = compaction {
        tokio::spawn(compact_every(app.clone(), every));
    }
    let controllers = crate::controllers::Controllers::start(app.clone(), controllers);
    let _ = ready.send(Ok(()));
    let acceptor = tokio_rustls::TlsAcceptor::from(tls_config);
    let chain = crate::apiserver::filters::handler_chain(app);
    let mut accepting = crate::apiserver::accept::Acceptor::new(listener);
    loop {
        tokio::select! {
            _ = &mut stop => {
                controllers.release();
                break;
            }
            stream = accepting.next() => {
                let _ = stream.set_nodelay(true);
                let acceptor = acceptor.clone();
                tokio::spawn(serve_connection(stream, acceptor, chain.clone(), connections));
            }
        }
    }
}

/// One connection: its TLS handshake, then HTTP/1.1 requests until the client closes it or it passes
/// one of its limits (`conn_timeouts`: idle between requests, or a request head too slow). Each
/// request goes through a clone of the handler chain (`filters::handler_chain`).
async fn serve_connection<C>(
    stream: tokio::net::TcpStream,
    acceptor: tokio_rustls::TlsAcceptor,
    chain: C,
    limits: Limits,
) where
    C: Service<Request<Incoming>, Response = Resp, Error = Infallible> + Clone + Send + 'static,
    C::Future: Send + 'static,
{
    // A client that does not finish its TLS handshake in time is dropped.
    let Ok(Ok(tls)) = tokio::time::timeout(limits.header, acceptor.accept(stream)).await else {
        return;
    };
    let phases = Phases::new();
    let requests = phases.clone();
    let service = service_fn(move |req| {
        let answering = requests.request();
        let answer = chain.clone().oneshot(req);
        async move {
            let mut resp = answer.await?;
            if resp.status() == http::StatusCode::PAYLOAD_TOO_LARGE {
                // The body was refused unread: close the connection after the answer, as Go's
                // net/http does when more than 256 KiB of a body are left unread, rather than keep an
                // idle connection holding the buffers its reads grew to.
                resp.headers_mut().insert(
                    http::header::CONNECTION,
                    http::HeaderValue::from_static("close"),
                );
            }
            Ok::<_, Infallible>(resp.map(|body| Answering::new(body, answering)))
        }
    });
    // Heads up to twice kube-apiserver's 1 MiB reach the chain, whose request-info filter answers
    // oversized ones with a Status; hyper's own answers to heads it refuses (longer ones, URIs over
    // 64 KiB, malformed heads) get theirs from `StatusOnHeadErrors`. hyper's header timeout is off: it
    // runs from the end of the previous response, so it would close idle keep-alive connections;
    // `phases` times heads instead.
    let connection = hyper::server::conn::http1::Builder::new()
        .max_buf_size(2 * crate::apiserver::handlers::MAX_HEAD)
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(None)
        .serve_connection(
            TokioIo::new(StatusOnHeadErrors::new(
                Watched::new(tls, phases.clone()),
                phases.clone(),
            )),
            service,
        )
        .with_upgrades();
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        () = phases.expired(limits) => {}
    }
    // Past a limit: an idle connection is closed at once (with TLS close_notify), one in the middle of
    // a head after at most a second.
    connection.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(Duration::from_secs(1), connection).await;
}

impl RunningSim {
    /// `https://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("https://{}", self.addr)
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where the kubeconfig was written (`DIR/kubeconfig`, or a temporary directory in memory mode).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// The kubeconfig's contents.
    pub fn kubeconfig_yaml(&self) -> &str {
        &self.kubeconfig_yaml
    }

    /// A `kube::Client` built from this simulator's kubeconfig (never from the environment).
    /// Must be called inside a Tokio runtime.
    pub fn client(&self) -> Result<kube::Client, SimError> {
        let kc = kube::config::Kubeconfig::from_yaml(&self.kubeconfig_yaml)
            .map_err(|e| SimError::Kubeconfig(e.to_string()))?;
        let opts = kube::config::KubeConfigOptions {
            context: Some(kubeconfig::CONTEXT.to_string()),
            ..Default::default()
        };
        let config = futures_lite_block(kube::Config::from_custom_kubeconfig(kc, &opts))
            .map_err(|e| SimError::Kubeconfig(e.to_string()))?;
        kube::Client::try_from(config).map_err(|e| SimError::Kubeconfig(e.to_string()))
    }

    /// A `kubectl` command aimed at this cluster only: `--kubeconfig` set to this simulator's file,
    /// `KUBECONFIG` removed from its environment and `KUBECACHEDIR` pointing at a cache directory of
    /// this simulator (next to its kubeconfig), so discovery caches never mix clusters.
    pub fn kubectl(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new("kubectl");
        cmd.arg("--kubeconfig").arg(&self.kubeconfig_path);
        cmd.env_remove("KUBECONFIG");
        let cache = self
            .kubeconfig_path
            .parent()
            .map(|d| d.join("kube-cache"))
            .unwrap_or_else(|| PathBuf::from("kube-cache"));
        cmd.env("KUBECACHEDIR", cache);
        cmd
    }

    /// Drops the whole watch history, as an etcd compaction would: watches that resume from an
    /// older resourceVersion get a 410 Expired ERROR event and must re-list.
    pub fn compact(&self) -> Result<u64, SimError> {
        self.app.backend.store.compact_now().map_err(SimError::from)
    }

    /// Registers an admission plugin: it may mutate (after defaulting) or reject (after validation)
    /// every create and update, from now on.
    pub fn add_admission(&self, plugin: Arc<dyn crate::admission::Admission>) {
        if let Ok(mut list) = self.app.backend.admission.write() {
            list.push(plugin);
        }
    }

    /// Maps `port` of the pods in `namespace` whose labels match `selector` (e.g.
    /// `app.kubernetes.io/name=web`) to a real local address: port-forwards to those pods reach it, and
    /// their http readiness probes on that port are really sent to it.
    pub fn map_port(
        &self,
        namespace: &str,
        selector: &str,
        port: u16,
        to: SocketAddr,
    ) -> Result<(), SimError> {
        self.app
            .hooks
            .map_port(namespace, selector, port, to)
            .map_err(|e| SimError::Runtime(e.message))
    }

    /// Routes `namespace/service:port` to a process on this machine, as `piceli sim route` does:
    /// webhooks whose `clientConfig.service` names that Service port call `to` (TLS verified for
    /// `SERVICE.NAMESPACE.svc`), whether or not pods back the Service.
    pub fn route(
        &self,
        namespace: &str,
        service: &str,
        port: u16,
        to: SocketAddr,
    ) -> Result<(), SimError> {
        crate::routes::set(&self.app.cluster(), namespace, service, port, Some(to))
            .map_err(|e| SimError::Runtime(e.message))
    }

    /// Removes the route of `namespace/service:port`.
    pub fn unroute(&self, namespace: &str, service: &str, port: u16) -> Result<(), SimError> {
        crate::routes::set(&self.app.cluster(), namespace, service, port, None)
            .map_err(|e| SimError::Runtime(e.message))
    }

    /// Removes every mapping of `port` in `namespace`.
    pub fn unmap_port(&self, namespace: &str, port: u16) {
        self.app.hooks.unmap_port(namespace, port);
    }

    /// Registers what every command run (`kubectl exec`, kube's `exec`) in the containers of the
    /// pods in `namespace` (every namespace when empty) whose labels match `selector` (empty: every
    /// pod) does. The most recent matching registration wins; without one, a few built-ins
    /// (`echo`, `cat`, `env`, `sh -c "exit N"`, ...) behave as in a real container.
    pub fn on_exec<F>(&self, namespace: &str, selector: &str, handler: F) -> Result<(), SimError>
    where
        F: Fn(&crate::hooks::ExecRequest) -> crate::hooks::ExecOutput + Send + Sync + 'static,
    {
        self.on_exec_command(namespace, selector, &[], handler)
    }

    /// Like [`RunningSim::on_exec`], for the commands whose first words are `prefix` only (e.g.
    /// `&["migrate"]` claims `migrate up` and leaves `echo` to the built-ins).
    pub fn on_exec_command<F>(
        &self,
        namespace: &str,
        selector: &str,
        prefix: &[&str],
        handler: F,
    ) -> Result<(), SimError>
    where
        F: Fn(&crate::hooks::ExecRequest) -> crate::hooks::ExecOutput + Send + Sync + 'static,
    {
        self.app
            .hooks
            .on_exec(namespace, selector, prefix, Arc::new(handler))
            .map_err(|e| SimError::Runtime(e.message))
    }

    /// Adds `line` (several when it contains newlines) to the log of `container` in the pod
    /// `namespace/pod` (its current instance): `kubectl logs` and kube's `logs` show it, followers
    /// get it at once. Fails when the pod or the container does not exist.
    pub fn append_log(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        line: &str,
    ) -> Result<(), SimError> {
        let runtime = |e: crate::status::ApiError| SimError::Runtime(e.message);
        let obj = self
            .app
            .backend
            .store
            .get("/pods", namespace, pod)
            .map_err(SimError::from)?
            .ok_or_else(|| runtime(crate::status::ApiError::not_found("", "pods", pod)))?;
        let container = crate::apiserver::stream::exec::pick_container(&obj, pod, container)
            .map_err(runtime)?;
        let instance = crate::apiserver::stream::log_lines::container_status(&obj, &container)
            .and_then(|s| s.get("restartCount"))
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        let uid = obj
            .pointer("/metadata/uid")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        self.app.hooks.logs.append(uid, &container, instance, line);
        Ok(())
    }

    /// Starts recording which RBAC binding allows each request from now on (and forgets what was
    /// recorded before); [`RunningSim::rbac_uses`] reads the record.
    pub fn record_rbac(&self) {
        self.app.rbac_usage.start();
    }

    /// The requests RBAC allowed since [`RunningSim::record_rbac`], one entry per distinct user, binding,
    /// verb, resource and namespace (the admin's requests skip RBAC and are not recorded).
    pub fn rbac_uses(&self) -> Vec<crate::apiserver::RbacUse> {
        self.app.rbac_usage.uses()
    }

    /// The controllers' turn and list-read counters so far (turns skipped while nothing changed).
    pub fn controller_stats(&self) -> crate::controllers::ControllerStats {
        self.app.controller_stats()
    }

    /// How many turns each controller ran, by name (`deployment`, `replicaset`, `kubelet`,
    /// `garbage-collector`, …): a controller runs when a kind it watches changed or a timer it set
    /// is due.
    pub fn controller_runs(&self) -> std::collections::BTreeMap<&'static str, u64> {
        self.app.controller_runs()
    }

    /// How many change events the server holds because a receiver has not read them yet (a watch,
    /// the controllers' loop, their informer cache): each is an object and its previous state.
    pub fn held_events(&self) -> usize {
        self.app.backend.store.hub().held()
    }

    /// The newest resourceVersion in the store.
    pub fn resource_version(&self) -> Result<u64, SimError> {
        self.app.backend.store.current_rv().map_err(SimError::from)
    }

    /// Stops the server and waits for its threads.
    pub fn stop(mut self) {
        self.shutdown_now();
    }

    fn shutdown_now(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunningSim {
    fn drop(&mut self) {
        self.shutdown_now();
    }
}

/// Drives a future that never waits on I/O (kubeconfig loading without exec plugins) to completion.
fn futures_lite_block<F: std::future::Future>(f: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}
