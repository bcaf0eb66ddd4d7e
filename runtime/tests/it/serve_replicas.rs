//! Two replicas of an operator with both webhooks and controllers, as `serve` runs them: only the Lease
//! holder reconciles, but both replicas answer admission reviews over HTTPS the whole time — before the
//! hand-over, while the leader is dead and its Lease not yet expired, and after the standby took over.
//! Each replica is this test binary run again with the ignored fixture `serve_replica`, so a `kill -9`
//! ends a real process.

use crate::controller_support;
use crate::webhook_support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use controller_support::{logged, ok, wait_for};
use k8s_openapi::api::apps::v1::Deployment;
use piceli_runtime::controller::{ControllerOptions, Controllers};
use piceli_runtime::serve::{self, ServeConfig};
use piceli_runtime::webhook::{Request, Verdict, Webhooks};
use piceli_test_support::Cluster;
use webhook_support::{Certs, Http1, deployment_review};

const APP: &str = "replicas";
const LEASE: &str = "replicas-controllers";
const PATH: &str = "/validate/no-latest-tag";

async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
    let spec = req.object().spec.as_ref();
    let pod = spec.and_then(|s| s.template.spec.as_ref());
    for c in pod.map(|p| p.containers.as_slice()).unwrap_or_default() {
        if c.image.as_deref().unwrap_or_default().ends_with(":latest") {
            return Verdict::deny("image uses :latest");
        }
    }
    Verdict::allow()
}

fn env(name: &str) -> String {
    std::env::var(name)
        .unwrap_or_else(|_| panic!("{name}: run by the replicas test, which sets it"))
}

#[test]
#[ignore = "fixture: the replica process `both_replicas_serve_webhooks_and_only_the_leader_reconciles` starts"]
fn serve_replica() {
    let kubeconfig = env("PICELI_TEST_REPLICA_KUBECONFIG");
    let identity = env("PICELI_TEST_REPLICA_IDENTITY");
    let log = PathBuf::from(env("PICELI_TEST_REPLICA_LOG"));
    let listen: SocketAddr = env("PICELI_TEST_REPLICA_LISTEN").parse().expect("address");
    let health: SocketAddr = env("PICELI_TEST_REPLICA_HEALTH").parse().expect("address");
    let tls = (
        PathBuf::from(env("PICELI_TEST_REPLICA_CERT")),
        PathBuf::from(env("PICELI_TEST_REPLICA_KEY")),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let result = runtime.block_on(async move {
        let client = controller_support::cluster_client(&kubeconfig).await;
        let controllers = Controllers::new(APP).reconcile(
            "settings",
            ControllerOptions::default(),
            controller_support::logging_reconciler(identity.clone(), log),
        );
        let config = ServeConfig {
            listen: Some(listen),
            health_listen: health,
            tls_files: Some(tls),
            self_managed: None,
            tls_secret: None,
            client: Some(client),
            namespace: "default".into(),
            identity,
        };
        let app = piceli_core::model::App::new(APP);
        let webhooks = Webhooks::new().validate("no-latest-tag", no_latest_tag);
        serve::run(&app, webhooks, Some(controllers), config).await
    });
    if let Err(e) = result {
        panic!("serve failed: {e}");
    }
}

struct Replica {
    child: Child,
    webhooks: SocketAddr,
    health: SocketAddr,
}

use piceli_test_support::process::free_port;

fn spawn(sim: &Cluster, certs: &Certs, identity: &str, log: &Path) -> Replica {
    let (webhooks, health) = (free_port(), free_port());
    let child = Command::new(std::env::current_exe().expect("this test binary"))
        .args([
            "serve_replicas::serve_replica",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PICELI_TEST_REPLICA_KUBECONFIG", sim.kubeconfig_path())
        .env("PICELI_TEST_REPLICA_IDENTITY", identity)
        .env("PICELI_TEST_REPLICA_LOG", log)
        .env("PICELI_TEST_REPLICA_LISTEN", webhooks.to_string())
        .env("PICELI_TEST_REPLICA_HEALTH", health.to_string())
        .env("PICELI_TEST_REPLICA_CERT", certs.cert())
        .env("PICELI_TEST_REPLICA_KEY", certs.key())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the replica process starts");
    Replica {
        child,
        webhooks,
        health,
    }
}

fn holder(sim: &Cluster) -> Option<String> {
    controller_support::lease_holder(sim.kubeconfig_path(), LEASE)
}

/// Whether `addr` accepts TCP connections yet.
fn listening(addr: SocketAddr) -> bool {
    std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok()
}

/// A review sent to `replica`'s webhook over a new HTTPS connection: `(allowed, message)`, or `None`
/// when it does not answer within 5 s.
fn review(
    rt: &tokio::runtime::Runtime,
    certs: &Certs,
    replica: &Replica,
    uid: &str,
    image: &str,
) -> Option<(bool, String)> {
    rt.block_on(async {
        let mut client = tokio::time::timeout(
            Duration::from_secs(5),
            Http1::connect(replica.webhooks, certs),
        )
        .await
        .ok()?;
        let reply = tokio::time::timeout(
            Duration::from_secs(5),
            client.post(PATH, deployment_review(uid, &[image], false)),
        )
        .await
        .ok()?;
        let body = reply.json();
        assert_eq!(body["response"]["uid"], uid, "the review's UID is echoed");
        Some((
            body["response"]["allowed"].as_bool().expect("allowed"),
            body["response"]["status"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        ))
    })
}

/// `replica`'s `piceli_controller_leader` gauge, read from its health port (-1 when it does not answer).
fn leads(rt: &tokio::runtime::Runtime, replica: &Replica) -> f64 {
    let addr = replica.health;
    rt.block_on(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let Ok(Ok(mut s)) =
            tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr))
                .await
        else {
            return -1.0;
        };
        let request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        if s.write_all(request).await.is_err() {
            return -1.0;
        }
        let mut text = String::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut text)).await;
        text.lines()
            .find_map(|l| {
                l.strip_prefix("piceli_controller_leader ")?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or(-1.0)
    })
}

/// Both replicas answer a review that passes and one that is denied.
fn both_answer(rt: &tokio::runtime::Runtime, certs: &Certs, replicas: &[&Replica], round: &str) {
    for (i, replica) in replicas.iter().enumerate() {
        let uid = format!("{round}-{i}");
        assert_eq!(
            review(rt, certs, replica, &uid, "nginx:1.27").map(|(allowed, _)| allowed),
            Some(true),
            "{round}: replica {i} answers"
        );
        let denied = review(rt, certs, replica, &format!("{uid}-latest"), "nginx:latest");
        assert_eq!(
            denied,
            Some((false, "image uses :latest".to_string())),
            "{round}: replica {i} denies"
        );
    }
}

#[test]
fn both_replicas_serve_webhooks_and_only_the_leader_reconciles() {
    let sim = Cluster::start();
    let kc = sim.kubeconfig_path().to_path_buf();
    let certs = Certs::new();
    let work = tempfile::tempdir().expect("work dir");
    let log = work.path().join("reconciles.log");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    piceli_net::tls::install_default();

    let mut a = spawn(&sim, &certs, "a", &log);
    wait_for("a to hold the Lease", Duration::from_secs(30), || {
        holder(&sim).as_deref() == Some("a")
    });
    let b = spawn(&sim, &certs, "b", &log);
    wait_for(
        "b's webhooks and health to listen",
        Duration::from_secs(30),
        || listening(b.webhooks) && leads(&rt, &b) == 0.0,
    );
    both_answer(&rt, &certs, &[&a, &b], "a leads");
    assert_eq!(leads(&rt, &a), 1.0, "a leads");
    assert_eq!(leads(&rt, &b), 0.0, "b stands by");
    ok(&kc, &["create", "configmap", "one"]);
    wait_for("the leader to reconcile", Duration::from_secs(10), || {
        logged(&log, "a one")
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(!logged(&log, "b one"), "the standby does not reconcile");

    // The leader dies; its Lease runs for up to 15 s more. The standby's webhooks answer meanwhile.
    a.child.kill().expect("kill -9 the leader");
    let _ = a.child.wait();
    assert_eq!(
        holder(&sim).as_deref(),
        Some("a"),
        "the Lease has not expired yet"
    );
    both_answer(&rt, &certs, &[&b], "the leader is dead");
    wait_for("b to take the Lease", Duration::from_secs(60), || {
        holder(&sim).as_deref() == Some("b")
    });
    ok(&kc, &["create", "configmap", "two"]);
    wait_for(
        "the new leader to reconcile",
        Duration::from_secs(10),
        || logged(&log, "b two"),
    );
    both_answer(&rt, &certs, &[&b], "b leads");
    assert_eq!(leads(&rt, &b), 1.0, "b leads");

    let mut b = b;
    let term = Command::new("kill")
        .args(["-TERM", &b.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = b.child.try_wait().expect("wait") {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "SIGTERM stops serve");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "a graceful stop: {status}");
    assert_eq!(holder(&sim), None, "SIGTERM released the Lease");
}
