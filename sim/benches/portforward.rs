//! Port-forward throughput through kube 5's `Portforwarder` (WebSocket, `v4.channel.k8s.io`) to a
//! real TCP server mapped with `RunningSim::map_port`: 256 MiB uploaded to a sink, and 256 MiB
//! echoed (sent and received at the same time). The simulator runs in-process on its own runtime
//! and threads; client, simulator and target share the machine.
//!
//! Run: `cargo bench -p piceli-sim --bench portforward` (optional argument: MiB per run).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use piceli_sim::{Sim, SimConfig};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

const CHUNK: usize = 64 * 1024;

/// An echo server (`echo`) or a sink that reports when `total` bytes arrived.
async fn server(echo: bool, total: usize) -> (SocketAddr, oneshot::Receiver<Instant>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let Ok((conn, _)) = listener.accept().await else {
            return;
        };
        let _ = conn.set_nodelay(true);
        let (mut rd, mut wr) = conn.into_split();
        if echo {
            let _ = tokio::io::copy(&mut rd, &mut wr).await;
            return;
        }
        let mut buf = vec![0u8; CHUNK];
        let mut got = 0;
        while got < total {
            match rd.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        let _ = tx.send(Instant::now());
        let _ = wr.shutdown().await;
    });
    (addr, rx)
}

async fn forwarder(
    sim: &piceli_sim::RunningSim,
    pods: &Api<Pod>,
    addr: SocketAddr,
) -> kube::api::Portforwarder {
    sim.map_port("default", "app=bench", 7000, addr)
        .expect("map port");
    pods.portforward("bench", &[7000])
        .await
        .expect("portforward")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mib: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(256);
    let total = mib * 1024 * 1024;
    let sim = Sim::start(SimConfig::default()).expect("simulator");
    let client = sim.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "bench", "labels": {"app": "bench"}},
        "spec": {"containers": [{"name": "c", "image": "sink:1", "ports": [{"containerPort": 7000}]}]}
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod)
        .await
        .expect("create pod");
    let deadline = Instant::now() + Duration::from_secs(20);
    while pods
        .get("bench")
        .await
        .ok()
        .and_then(|p| p.status?.phase)
        .as_deref()
        != Some("Running")
    {
        assert!(Instant::now() < deadline, "pod never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let data = vec![0x5au8; CHUNK];

    // Upload to a sink.
    for run in 0..3 {
        let (addr, done) = server(false, total).await;
        let mut pf = forwarder(&sim, &pods, addr).await;
        let mut s = pf.take_stream(7000).expect("stream");
        let start = Instant::now();
        let mut sent = 0;
        while sent < total {
            s.write_all(&data).await.expect("write");
            sent += CHUNK;
        }
        let end = done.await.expect("sink done");
        let secs = end.duration_since(start).as_secs_f64();
        println!(
            "upload {mib} MiB (run {run}): {secs:.2} s, {:.0} MiB/s",
            mib as f64 / secs
        );
        pf.abort();
    }

    // Echo: send and receive at once.
    for run in 0..3 {
        let (addr, _) = server(true, total).await;
        let mut pf = forwarder(&sim, &pods, addr).await;
        let s = pf.take_stream(7000).expect("stream");
        let (mut rd, mut wr) = tokio::io::split(s);
        let start = Instant::now();
        let chunk = data.clone();
        let writer = tokio::spawn(async move {
            let mut sent = 0;
            while sent < total {
                wr.write_all(&chunk).await.expect("write");
                sent += CHUNK;
            }
            wr
        });
        let mut buf = vec![0u8; CHUNK];
        let mut got = 0;
        while got < total {
            let n = rd.read(&mut buf).await.expect("read");
            assert!(n > 0, "echo ended early at {got} bytes");
            got += n;
        }
        let secs = start.elapsed().as_secs_f64();
        let _ = writer.await;
        println!(
            "echo {mib} MiB each way (run {run}): {secs:.2} s, {:.0} MiB/s each way",
            mib as f64 / secs
        );
        pf.abort();
    }
}
