//! Port-forward acceptance tests with the real kubectl 1.33 (WebSocket-tunnelled SPDY, plain SPDY,
//! `deploy/` and `svc/` targets) and kube 5's `Portforwarder`: 1 MiB echoed exactly through a real
//! TCP echo server mapped with `RunningSim::map_port`, the built-in responder behind unmapped
//! ports, errors for missing pods, and http readiness probes against a mapped server.

use crate::common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::Kubectl;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::api::{Api, ListParams, PostParams};
use piceli_sim::RunningSim;
use ring::rand::{SecureRandom, SystemRandom};
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MIB: usize = 1024 * 1024;
const ECHO_PORT: u16 = 7000;

/// A TCP echo server on 127.0.0.1 (each connection echoes until the client half-closes).
async fn echo_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind echo");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (mut rd, mut wr) = conn.into_split();
                let _ = tokio::io::copy(&mut rd, &mut wr).await;
                let _ = wr.shutdown().await;
            });
        }
    });
    addr
}

/// Creates a one-replica Deployment (and a Service in front of it) and waits for its Running pod.
async fn deploy(
    client: &kube::Client,
    name: &str,
    port: u16,
    probe: Option<serde_json::Value>,
) -> String {
    let mut container = json!({"name": "main", "image": "example/echo:1",
        "ports": [{"containerPort": port, "name": "http"}]});
    if let Some(p) = probe {
        container["readinessProbe"] = p;
    }
    let d: Deployment = serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}
    }))
    .expect("deployment");
    Api::<Deployment>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &d)
        .await
        .expect("create deployment");
    let svc: Service = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": port}]}
    }))
    .expect("service");
    Api::<Service>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &svc)
        .await
        .expect("create service");
    running_pod(client, name).await
}

async fn running_pod(client: &kube::Client, app: &str) -> String {
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let list = pods
            .list(&ListParams::default().labels(&format!("app={app}")))
            .await
            .expect("list pods");
        if let Some(p) = list
            .items
            .iter()
            .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        {
            return p.metadata.name.clone().expect("pod name");
        }
        assert!(Instant::now() < deadline, "no running pod for {app}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn payload(len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    SystemRandom::new().fill(&mut v).expect("random payload");
    v
}

/// Writes `data` and reads back as many bytes concurrently; both within 30 s.
async fn echo_through<S: AsyncRead + AsyncWrite + Send + 'static>(
    stream: S,
    data: Vec<u8>,
) -> Vec<u8> {
    let (mut rd, mut wr) = tokio::io::split(stream);
    let len = data.len();
    let writer = tokio::spawn(async move {
        wr.write_all(&data).await.expect("write payload");
        wr.flush().await.expect("flush");
        wr
    });
    let mut back = vec![0u8; len];
    tokio::time::timeout(Duration::from_secs(30), rd.read_exact(&mut back))
        .await
        .expect("echo within 30 s")
        .expect("read echo");
    let _wr = writer.await.expect("writer");
    back
}

/// A running `kubectl port-forward`, killed on drop.
struct PortForward {
    child: Child,
    local: u16,
}

impl PortForward {
    fn start(k: &Kubectl, target: &str, remote: u16, env: &[(&str, &str)]) -> PortForward {
        Self::start_to(k, target, remote, remote, env)
    }

    /// `to` is the pod port kubectl reports (a Service port resolves to its target port).
    fn start_to(
        k: &Kubectl,
        target: &str,
        remote: u16,
        to: u16,
        env: &[(&str, &str)],
    ) -> PortForward {
        let spec = format!(":{remote}");
        let mut child = k.spawn_env(&["port-forward", target, &spec], env);
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut guard = PortForward { child, local: 0 };
        let deadline = Instant::now() + Duration::from_secs(20);
        while guard.local == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match rx.recv_timeout(left) {
                Ok(l) => l,
                Err(_) => {
                    let _ = guard.child.kill();
                    let mut err = String::new();
                    if let Some(mut e) = guard.child.stderr.take() {
                        let _ = std::io::Read::read_to_string(&mut e, &mut err);
                    }
                    panic!("kubectl port-forward {target} never printed its port: {err}");
                }
            };
            // "Forwarding from 127.0.0.1:PORT -> REMOTE"
            if let Some(rest) = line.strip_prefix("Forwarding from 127.0.0.1:")
                && let Some((port, pod_port)) = rest.split_once(" -> ")
            {
                assert_eq!(pod_port.trim(), to.to_string());
                guard.local = port.parse().expect("local port");
            }
        }
        guard
    }

    async fn connect(&self) -> TcpStream {
        TcpStream::connect(("127.0.0.1", self.local))
            .await
            .expect("connect to kubectl's local port")
    }
}

impl Drop for PortForward {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn setup(name: &str) -> (RunningSim, kube::Client, String) {
    let sim = common::live_sim();
    let client = sim.client().expect("client");
    let echo = echo_server().await;
    sim.map_port("default", &format!("app={name}"), ECHO_PORT, echo)
        .expect("map port");
    let pod = deploy(&client, name, ECHO_PORT, None).await;
    (sim, client, pod)
}

async fn kubectl_echo(env: &[(&str, &str)]) {
    let (sim, _client, pod) = setup("echo").await;
    let k = Kubectl::new(&sim);
    let pf = PortForward::start(&k, &format!("pod/{pod}"), ECHO_PORT, env);
    let data = payload(MIB);
    let back = echo_through(pf.connect().await, data.clone()).await;
    assert!(back == data, "the 1 MiB echo came back different");
    // A second connection through the same kubectl.
    let again = echo_through(pf.connect().await, b"second".to_vec()).await;
    assert_eq!(again, b"second");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_websocket_echoes_1_mib() {
    kubectl_echo(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_plain_spdy_echoes_1_mib() {
    kubectl_echo(&[("KUBECTL_PORT_FORWARD_WEBSOCKETS", "false")]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_portforwarder_echoes_1_mib() {
    let (_sim, client, pod) = setup("echo").await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let mut pf = pods
        .portforward(&pod, &[ECHO_PORT])
        .await
        .expect("portforward");
    let stream = pf.take_stream(ECHO_PORT).expect("stream");
    let data = payload(MIB);
    let back = echo_through(stream, data.clone()).await;
    assert!(back == data, "the 1 MiB echo came back different");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_port_forward_deployment_and_service() {
    let (sim, _client, _pod) = setup("echo").await;
    let k = Kubectl::new(&sim);
    for (target, remote) in [("deploy/echo", ECHO_PORT), ("svc/echo", 80)] {
        let pf = PortForward::start_to(&k, target, remote, ECHO_PORT, &[]);
        let data = payload(64 * 1024);
        let back = echo_through(pf.connect().await, data.clone()).await;
        assert!(back == data, "echo through {target} differs");
    }
}

const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n";

async fn http_exchange<S: AsyncRead + AsyncWrite + Unpin>(mut s: S) -> String {
    s.write_all(REQUEST).await.expect("send request");
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut out))
        .await
        .expect("response within 20 s")
        .expect("read response");
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unmapped_ports_reach_the_built_in_responder() {
    let (sim, client, pod) = setup("plain").await;
    let expected_tail = format!("\r\n\r\n{pod}\n");
    // kube, on a port the pod does not even declare.
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let mut pf = pods.portforward(&pod, &[8080]).await.expect("portforward");
    let answer = http_exchange(pf.take_stream(8080).expect("stream")).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("Content-Type: text/plain"), "{answer}");
    assert!(answer.ends_with(&expected_tail), "{answer}");
    // kubectl, both protocols.
    let k = Kubectl::new(&sim);
    for env in [vec![], vec![("KUBECTL_PORT_FORWARD_WEBSOCKETS", "false")]] {
        let pf = PortForward::start(&k, &format!("pod/{pod}"), 8080, &env);
        let answer = http_exchange(pf.connect().await).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(answer.ends_with(&expected_tail), "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_pods_and_refused_ports_are_errors() {
    let (sim, client, pod) = setup("echo").await;
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let err = pods
        .portforward("no-such-pod", &[80])
        .await
        .err()
        .expect("a missing pod fails");
    assert!(err.to_string().contains("404"), "{err}");
    // A mapping to a closed port: the error channel says why.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    sim.map_port("default", "app=echo", 7001, closed)
        .expect("map");
    let mut pf = pods.portforward(&pod, &[7001]).await.expect("portforward");
    let err = tokio::time::timeout(Duration::from_secs(10), pf.take_error(7001).expect("error"))
        .await
        .expect("error within 10 s");
    assert!(
        err.is_some_and(|e| e.contains("7001")),
        "expected a connect error"
    );
}

/// An HTTP server answering every request with the status in `status`, counting requests.
async fn status_server(status: Arc<AtomicU16>, hits: Arc<AtomicUsize>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let (status, hits) = (status.clone(), hits.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut have = Vec::new();
                while !have.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => have.extend_from_slice(&buf[..n]),
                    }
                }
                if have.starts_with(b"GET /healthz HTTP/1.1\r\n") {
                    hits.fetch_add(1, Ordering::SeqCst);
                }
                let code = status.load(Ordering::SeqCst);
                let resp =
                    format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                let _ = conn.write_all(resp.as_bytes()).await;
                let _ = conn.shutdown().await;
            });
        }
    });
    addr
}

async fn ready(pods: &Api<Pod>, name: &str) -> bool {
    let p = pods.get(name).await.expect("get pod");
    p.status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_readiness_probes_reach_the_mapped_server() {
    let sim = common::live_sim();
    let client = sim.client().expect("client");
    let status = Arc::new(AtomicU16::new(500));
    let hits = Arc::new(AtomicUsize::new(0));
    let addr = status_server(status.clone(), hits.clone()).await;
    sim.map_port("default", "app=probed", 7100, addr)
        .expect("map");
    let probe = json!({"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10});
    let pod = deploy(&client, "probed", 7100, Some(probe)).await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    // Answering 500: Running, probed, but not Ready.
    let deadline = Instant::now() + Duration::from_secs(10);
    while hits.load(Ordering::SeqCst) < 3 {
        assert!(
            Instant::now() < deadline,
            "the probe never reached the server"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !ready(&pods, &pod).await,
        "a pod whose probe gets 500 is not Ready"
    );
    // Answering 200: Ready soon after.
    status.store(200, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready(&pods, &pod).await {
        assert!(Instant::now() < deadline, "the pod never became Ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And back.
    status.store(503, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while ready(&pods, &pod).await {
        assert!(
            Instant::now() < deadline,
            "the pod never became unready again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
