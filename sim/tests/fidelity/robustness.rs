//! Robustness of the server: its address survives restarts, idle and slowloris connections are
//! closed, running out of descriptors does not stop it, and a new server takes over the pid file of
//! a killed (even zombie) one.

use std::io::Read;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Kubectl, eventually};
use piceli_sim::{Sim, SimConfig};

fn sim_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_piceli-sim"))
}

/// A `piceli-sim serve` child, killed and reaped on drop.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn pid_in(dir: &std::path::Path) -> Option<u32> {
    std::fs::read_to_string(dir.join("sim.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

fn kubectl_with(
    kubeconfig: &std::path::Path,
    cache: &std::path::Path,
    args: &[&str],
) -> (i32, String) {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache)
        .output()
        .unwrap_or_else(|e| {
            panic!("kubectl is required for these tests and could not be run: {e}")
        });
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_restarted_server_keeps_its_port_so_old_kubeconfigs_work() {
    let dir = tempfile::tempdir().expect("dir");
    let cache = tempfile::tempdir().expect("cache");
    let config = SimConfig {
        dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let first = Sim::start(config.clone()).expect("first start");
    let addr = first.addr();
    // A client keeps its copy of the kubeconfig across the restart.
    let saved = dir.path().join("saved-kubeconfig");
    std::fs::copy(first.kubeconfig_path(), &saved).expect("copy");
    first.stop();
    let second = Sim::start(config).expect("restart");
    assert_eq!(second.addr(), addr, "the port is reused");
    let (code, out) = kubectl_with(&saved, cache.path(), &["get", "namespace", "default"]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn idle_and_slowloris_connections_are_closed() {
    let mut config = SimConfig::default();
    config.controllers.enabled = false;
    config.header_timeout = Some(Duration::from_millis(500));
    let sim = Sim::start(config).expect("sim");
    // Idle: connects and sends nothing.
    let mut idle = TcpStream::connect(sim.addr()).expect("connect");
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut buf = [0u8; 16];
    assert!(
        matches!(idle.read(&mut buf), Ok(0)),
        "an idle connection is closed by the server"
    );
    // Slowloris: a TLS handshake, then headers one byte at a time.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let closed = runtime.block_on(async {
        use tokio::io::AsyncWriteExt;
        let mut roots = rustls::RootCertStore::empty();
        let ca = sim
            .kubeconfig_yaml()
            .lines()
            .find_map(|l| l.trim().strip_prefix("certificate-authority-data:"))
            .expect("ca")
            .trim()
            .to_string();
        use base64::Engine;
        let pem = base64::engine::general_purpose::STANDARD
            .decode(ca)
            .expect("base64");
        use rustls::pki_types::{CertificateDer, pem::PemObject};
        for cert in CertificateDer::pem_slice_iter(&pem) {
            roots.add(cert.expect("cert")).expect("root");
        }
        let provider = std::sync::Arc::new(piceli_net::tls::provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocols")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(tls));
        let tcp = tokio::net::TcpStream::connect(sim.addr())
            .await
            .expect("connect");
        let name = rustls::pki_types::ServerName::try_from("127.0.0.1").expect("name");
        let mut stream = connector.connect(name, tcp).await.expect("handshake");
        let started = Instant::now();
        for b in b"GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
            .iter()
            .cycle()
        {
            if stream.write_all(&[*b]).await.is_err() || stream.flush().await.is_err() {
                return true;
            }
            if started.elapsed() > Duration::from_secs(10) {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        false
    });
    assert!(closed, "a connection dripping its headers is closed");
    // Normal clients are unaffected.
    let k = Kubectl::new(&sim);
    k.ok(&["get", "namespaces"]);
}

#[test]
fn out_of_descriptors_the_server_recovers_once_idle_connections_are_closed() {
    let dir = tempfile::tempdir().expect("dir");
    let script = format!(
        "ulimit -n 128 && exec '{}' serve --dir '{}' --no-controllers --header-timeout-ms 1000",
        env!("CARGO_BIN_EXE_piceli-sim"),
        dir.path().display()
    );
    let _server = Serve(
        Command::new("sh")
            .args(["-c", &script])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve"),
    );
    let kubeconfig = dir.path().join("kubeconfig");
    eventually("the server's pid file", 20, || pid_in(dir.path()));
    let port = eventually("the kubeconfig", 20, || {
        let text = std::fs::read_to_string(&kubeconfig).ok()?;
        text.lines()
            .find_map(|l| l.trim().strip_prefix("server: https://127.0.0.1:"))
            .and_then(|p| p.parse::<u16>().ok())
    });
    // More idle connections than the server has descriptors.
    let idle: Vec<TcpStream> = (0..200)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect();
    assert!(idle.len() >= 150, "{} connections", idle.len());
    let cache = tempfile::tempdir().expect("cache");
    let (code, out) = kubectl_with(
        &kubeconfig,
        cache.path(),
        &["get", "namespaces", "--request-timeout=30s"],
    );
    assert_eq!(
        code, 0,
        "a request succeeds once idle connections are closed: {out}"
    );
    drop(idle);
}

#[test]
fn a_new_server_takes_over_the_pid_file_of_a_killed_zombie_one() {
    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path().display().to_string();
    let mut first = sim_bin()
        .args(["serve", "--dir", &d, "--no-controllers"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("first serve");
    let first_pid = first.id();
    eventually("the first server's pid file", 20, || {
        (pid_in(dir.path()) == Some(first_pid)).then_some(())
    });
    let server_of = || {
        let kubeconfig =
            std::fs::read_to_string(dir.path().join("kubeconfig")).expect("kubeconfig");
        kubeconfig
            .lines()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("server:")
                    .map(|s| s.trim().to_string())
            })
            .expect("a server line")
    };
    let first_server = server_of();
    // SIGKILL, not reaped: the old server stays a zombie while the new one starts.
    first.kill().expect("kill");
    let second = Serve(
        sim_bin()
            .args(["serve", "--dir", &d, "--no-controllers"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("second serve"),
    );
    let second_pid = second.0.id();
    eventually("the new server's pid file", 20, || {
        (pid_in(dir.path()) == Some(second_pid)).then_some(())
    });
    assert!(
        std::path::Path::new(&format!("/proc/{first_pid}")).exists(),
        "the first server is still an unreaped zombie"
    );
    // `serve` on the directory again listens where the first did: clients' kubeconfigs stay valid.
    assert_eq!(server_of(), first_server);
    let status = sim_bin()
        .args(["status", "--dir", &d])
        .output()
        .expect("status");
    let text = String::from_utf8_lossy(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{text}");
    assert!(text.contains(&format!("pid {second_pid}")), "{text}");
    let cache = tempfile::tempdir().expect("cache");
    let (code, out) = kubectl_with(&dir.path().join("kubeconfig"), cache.path(), &["get", "ns"]);
    assert_eq!(code, 0, "{out}");
    let stop = sim_bin()
        .args(["stop", "--dir", &d])
        .output()
        .expect("stop");
    assert_eq!(
        stop.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&stop.stderr)
    );
    let _ = first.wait();
}
