//! Shared by the controller tests: the real kubectl against the test's cluster (local or real), a controller set run on its
//! own tokio runtime (dropping it kills every task, as a kill would), and waiting for a condition.

#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use piceli_runtime::controller::{Controllers, Metrics, RunOptions};

/// The real kubectl against the cluster (see `piceli_test_support::kubectl`).
pub fn kubectl(kubeconfig: &Path, args: &[&str]) -> (i32, String, String) {
    kubectl_stdin(kubeconfig, args, None)
}

/// [`kubectl`] with `stdin` piped in (for `apply -f -`).
pub fn kubectl_stdin(
    kubeconfig: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> (i32, String, String) {
    piceli_test_support::kubectl::run(kubeconfig, None, args, stdin).parts()
}

pub use piceli_test_support::kubectl::ok;

pub use piceli_test_support::process::wait_until as wait_for;

/// A log handlers write to and the test reads.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    pub fn push(&self, line: impl Into<String>) {
        self.0.lock().expect("log").push(line.into());
    }
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().expect("log").clone()
    }
    pub fn has(&self, line: &str) -> bool {
        self.lines().iter().any(|l| l == line)
    }
    pub fn count(&self, prefix: &str) -> usize {
        self.lines()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .count()
    }
}

/// A controller set running on a runtime of its own.
pub struct Operator {
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: Option<tokio::task::JoinHandle<()>>,
    pub metrics: Arc<Metrics>,
}

impl Operator {
    pub fn start(
        controllers: Controllers,
        client_of: impl FnOnce() -> kube::Client,
        options: RunOptions,
    ) -> Operator {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let metrics = controllers.metrics();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let client = runtime.block_on(async { client_of() });
        let done = runtime.spawn(async move {
            let shutdown = async move {
                let _ = rx.await;
            };
            controllers
                .run(client, options, shutdown)
                .await
                .expect("controllers run");
        });
        Operator {
            runtime: Some(runtime),
            stop: Some(tx),
            done: Some(done),
            metrics,
        }
    }

    /// A graceful stop (SIGTERM): in-flight handlers finish, the Lease is released.
    pub fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let (Some(rt), Some(done)) = (self.runtime.as_ref(), self.done.take()) {
            rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(10), done)
                    .await
                    .expect("graceful stop within 10 s")
                    .expect("controllers task");
            });
        }
    }

    /// Every task dropped at once, nothing released: what `kill -9` leaves behind.
    pub fn kill(mut self) {
        self.stop.take();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A plain HTTP/1.1 GET on loopback: (status, body).
pub fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The health server of `metrics` on a runtime of its own (stops when dropped).
pub fn health_server(metrics: Arc<Metrics>) -> (std::net::SocketAddr, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let server = runtime
        .block_on(piceli_runtime::controller::HealthServer::bind(
            "127.0.0.1:0".parse().expect("addr"),
            metrics,
        ))
        .expect("bind");
    let addr = server.local_addr().expect("addr");
    runtime.spawn(server.run(std::future::pending()));
    (addr, runtime)
}

/// A client for the test's cluster from its kubeconfig file (its current context: `piceli-sim` on the
/// local cluster, the real one's own), as an operator process started by a test builds it — never from
/// `~/.kube/config` or `KUBECONFIG`.
pub async fn cluster_client(kubeconfig: &str) -> kube::Client {
    piceli_net::tls::install_default();
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let options = kube::config::KubeConfigOptions::default();
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

/// What [`logging_reconciler`] returns for each object.
pub type Reconciled = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<piceli_runtime::controller::Action, std::io::Error>>
            + Send,
    >,
>;

/// A reconciler of ConfigMaps that appends `WHO NAME` to `log` for every object it reconciles (the
/// process tests read the file to see which process reconciled what).
pub fn logging_reconciler(
    who: String,
    log: std::path::PathBuf,
) -> impl Fn(
    Arc<k8s_openapi::api::core::v1::ConfigMap>,
    piceli_runtime::controller::Context,
) -> Reconciled
+ Send
+ Sync
+ 'static {
    move |cm, _cx| {
        let line = format!("{who} {}\n", kube::ResourceExt::name_any(cm.as_ref()));
        let log = log.clone();
        Box::pin(async move {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log)?;
            file.write_all(line.as_bytes())?;
            Ok(piceli_runtime::controller::Action::await_change())
        })
    }
}

/// Who holds the Lease `name` in the default namespace (read with the real kubectl), if anyone.
pub fn lease_holder(kubeconfig: &Path, name: &str) -> Option<String> {
    let (code, out, _) = kubectl(kubeconfig, &["get", "lease", name, "-o", "json"]);
    if code != 0 {
        return None;
    }
    let lease: serde_json::Value = serde_json::from_str(&out).expect("lease JSON");
    lease["spec"]["holderIdentity"].as_str().map(str::to_string)
}

/// Whether the file `log` has the line `line`.
pub fn logged(log: &Path, line: &str) -> bool {
    std::fs::read_to_string(log).is_ok_and(|text| text.lines().any(|l| l == line))
}
