//! The `proxy` subresource through the real kubectl: `kubectl get --raw …/pods/NAME:PORT/proxy/…` and
//! `kubectl proxy` to `…/services/NAME:PORT/proxy/…` reach the process a pod port is mapped to (or a
//! Service's route), without the caller's credentials.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use common::Kubectl;

/// A tiny HTTP server answering `you asked for PATH` and keeping each request head.
fn http_server() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let path = head.split_whitespace().nth(1).unwrap_or("").to_string();
            seen.lock().expect("heads").push(head);
            let body = format!("you asked for {path}");
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (addr, heads)
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - {name: web, image: nginx:1.27, ports: [{name: http, containerPort: 8080}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
";

#[test]
fn kubectl_reaches_mapped_pod_and_service_ports_through_the_proxy_subresource() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    let (addr, heads) = http_server();
    k.ok(&["apply", "-f", &k.file("web.yaml", POD)]);
    let out = k.run(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/web:8080/proxy/",
    ]);
    assert!(
        out.stderr.contains("ServiceUnavailable") || out.stderr.contains("not mapped"),
        "an unmapped port: {out:?}"
    );
    sim.map_port("default", "app=web", 8080, addr).expect("map");
    let got = k.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/pods/web:8080/proxy/hello?x=1",
    ]);
    assert_eq!(got, "you asked for /hello?x=1");
    let got = k.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/default/services/web:http/proxy/svc",
    ]);
    assert_eq!(got, "you asked for /svc");
    assert!(
        heads
            .lock()
            .expect("heads")
            .iter()
            .all(|h| !h.to_ascii_lowercase().contains("authorization:")),
        "credentials are not passed on"
    );

    // kubectl proxy on a free port, then a plain HTTP client through it.
    let mut proxy = k.spawn(&["proxy", "--port=0"]);
    let stdout = proxy.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("first line");
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("kubectl proxy said {line:?}"));
    let through_proxy = |path: &str| {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect to kubectl proxy");
        write!(
            c,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        .expect("request");
        let mut response = String::new();
        c.read_to_string(&mut response).expect("response");
        response
    };
    let service =
        through_proxy("/api/v1/namespaces/default/services/web:80/proxy/through-kubectl-proxy");
    // A pod without a port: its first container port, as the apiserver's pod ResourceLocation.
    let pod = through_proxy("/api/v1/namespaces/default/pods/web/proxy/portless");
    let _ = proxy.kill();
    let _ = proxy.wait();
    for (response, path) in [(service, "/through-kubectl-proxy"), (pod, "/portless")] {
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(
            response.ends_with(&format!("you asked for {path}")),
            "{response}"
        );
    }
}
