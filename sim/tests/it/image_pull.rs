//! The kubelet's image pull from a loopback registry, read with the real kubectl: a pod of a digest the
//! registry does not have waits `ErrImagePull` then `ImagePullBackOff`, and starts once the registry
//! has it. The registry here is a small HTTP/1.1 server that writes each answer in two pieces, as a
//! server (or a proxy) may: the pull reads HTTP, not the first packet.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Kubectl, eventually, live_sim};

/// A registry answering every manifest `HEAD` with 404 until `present` is set, then with 200; the
/// request lines it got are kept.
struct Registry {
    port: u16,
    present: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Registry {
    fn start() -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind registry");
        let port = listener.local_addr().expect("addr").port();
        let present = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (p, r) = (present.clone(), requests.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().map_while(Result::ok) {
                let (p, r) = (p.clone(), r.clone());
                std::thread::spawn(move || serve(conn, &p, &r));
            }
        });
        Registry {
            port,
            present,
            requests,
        }
    }
}

/// Answers the requests of one keep-alive connection, each in two writes (the status line cut after
/// `HTTP/1.1 `).
fn serve(conn: TcpStream, present: &AtomicBool, requests: &Mutex<Vec<String>>) {
    let _ = conn.set_nodelay(true);
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header == "\r\n" {
                break;
            }
        }
        requests
            .lock()
            .expect("requests")
            .push(line.trim_end().to_string());
        let rest = if present.load(Ordering::SeqCst) {
            "200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\nContent-Length: 512\r\n\r\n"
        } else {
            "404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 74\r\n\r\n"
        };
        if out.write_all(b"HTTP/1.1 ").is_err() {
            return;
        }
        // The first piece leaves before the rest is written.
        std::thread::sleep(Duration::from_millis(30));
        if out.write_all(rest.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn a_pod_of_a_missing_digest_backs_off_until_the_registry_has_it() {
    let registry = Registry::start();
    let sim = live_sim();
    let k = Kubectl::new(&sim);
    let digest = format!("sha256:{}", "c".repeat(64));
    let image = format!("127.0.0.1:{}/shop/api:1.0@{digest}", registry.port);
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: api}}\nspec:\n  containers:\n  - name: api\n    image: {image}\n"
    );
    let file = k.file("pod.yaml", &pod);
    k.ok(&["apply", "-f", &file]);

    let reason = || {
        k.ok(&[
            "get",
            "pod/api",
            "-o",
            "jsonpath={.status.phase}/{.status.containerStatuses[0].state.waiting.reason}",
        ])
    };
    let first = eventually("a failed pull", 30, || {
        let r = reason();
        (r.contains("ImagePull") || r.starts_with("Running")).then_some(r)
    });
    assert!(first.starts_with("Pending/"), "{first}");
    eventually("ImagePullBackOff", 30, || {
        (reason() == "Pending/ImagePullBackOff").then_some(())
    });
    let message = k.ok(&[
        "get",
        "pod/api",
        "-o",
        "jsonpath={.status.containerStatuses[0].state.waiting.message}",
    ]);
    assert!(message.contains("not found"), "{message}");
    let asked = format!("HEAD /v2/shop/api/manifests/{digest} HTTP/1.1");
    assert!(
        registry
            .requests
            .lock()
            .expect("requests")
            .iter()
            .all(|r| *r == asked),
        "{:?}",
        registry.requests.lock().expect("requests")
    );

    registry.present.store(true, Ordering::SeqCst);
    k.ok(&["wait", "--for=condition=Ready", "pod/api", "--timeout=30s"]);
    assert_eq!(
        k.ok(&["get", "pod/api", "-o", "jsonpath={.status.phase}"]),
        "Running"
    );
}
