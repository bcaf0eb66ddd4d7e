//! The webhook server over real TLS on loopback, driven by a real HTTPS client: malformed input, panics,
//! an idle client, certificate rotation, HTTP/2 and keep-alive, metrics, graceful shutdown.

use crate::webhook_support as support;

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use piceli_runtime::Coded;
use piceli_runtime::webhook::{Request, Verdict, Webhooks};
use support::{Certs, Http1, Http2, Running, deployment_review, metric, options};
use tokio::io::AsyncWriteExt;

async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
    let spec = req.object().spec.as_ref();
    let pod = spec.and_then(|s| s.template.spec.as_ref());
    for c in pod.map(|p| p.containers.as_slice()).unwrap_or_default() {
        let image = c.image.as_deref().unwrap_or_default();
        if image.ends_with(":latest") {
            return Verdict::deny(format!("image {image} uses :latest"));
        }
    }
    Verdict::allow()
}

fn hooks() -> Webhooks {
    Webhooks::new().validate("no-latest-tag", no_latest_tag)
}

const PATH: &str = "/validate/no-latest-tag";

#[tokio::test]
async fn malformed_reviews_get_400_with_a_message() {
    let certs = Certs::new();
    let mut opts = options(&certs);
    opts.max_body_bytes = 16 * 1024;
    let server = Running::start_with(hooks(), opts).await;
    let mut c = Http1::connect(server.addr, &certs).await;

    let r = c.post(PATH, b"{\"apiVersion\": ".to_vec()).await;
    assert_eq!(r.status, 400);
    assert!(
        r.text()
            .starts_with("malformed AdmissionReview: EOF while parsing"),
        "{}",
        r.text()
    );
    let r = c
        .post(
            PATH,
            br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
        )
        .await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (
            400,
            "malformed AdmissionReview: the review has no `request`\n"
        )
    );
    let r = c.post(PATH, vec![b' '; 32 * 1024]).await;
    assert_eq!(r.status, 413, "{}", r.text());
    let r = c
        .post(
            "/validate/unknown",
            deployment_review("u1", &["a:1"], false),
        )
        .await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (404, "no webhook at /validate/unknown\n")
    );
    let r = c.get(PATH).await;
    assert_eq!(r.status, 405);

    // The connection still serves well-formed reviews.
    let r = c
        .post(PATH, deployment_review("u2", &["nginx:1.27"], false))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["response"]["uid"], "u2");
    let m = c.get("/metrics").await.text();
    assert_eq!(
        metric(
            &m,
            r#"piceli_webhook_malformed_requests_total{webhook="no-latest-tag",type="validate"}"#
        ),
        3.0
    );
    server.stop().await;
}

#[tokio::test]
async fn a_panicking_handler_is_answered_denied_and_the_server_keeps_serving() {
    let certs = Certs::new();
    let boom = |req: Request<Deployment>| -> Verdict {
        match req.name() {
            "web" => panic!("boom on {}", req.uid()),
            _ => Verdict::allow(),
        }
    };
    let server = Running::start(hooks().validate("boom", boom), &certs).await;
    let mut c = Http1::connect(server.addr, &certs).await;
    for uid in ["p1", "p2"] {
        let r = c
            .post("/validate/boom", deployment_review(uid, &["a:1"], false))
            .await;
        assert_eq!(r.status, 200);
        let resp = &r.json()["response"];
        assert_eq!(resp["uid"], uid);
        assert_eq!(resp["allowed"], false);
        assert_eq!(resp["status"]["code"], 500);
        assert_eq!(
            resp["status"]["message"],
            format!("webhook boom panicked: boom on {uid}")
        );
    }
    // The same connection and a new one still serve the other webhook.
    let r = c
        .post(PATH, deployment_review("ok1", &["nginx:latest"], false))
        .await;
    assert_eq!(
        r.json()["response"]["status"]["message"],
        "image nginx:latest uses :latest"
    );
    let mut fresh = Http1::connect(server.addr, &certs).await;
    let r = fresh
        .post(PATH, deployment_review("ok2", &["nginx:1.27"], false))
        .await;
    assert_eq!(r.json()["response"]["allowed"], true);
    let m = fresh.get("/metrics").await.text();
    assert_eq!(
        metric(
            &m,
            r#"piceli_webhook_handler_failures_total{webhook="boom",type="validate",reason="panic"}"#
        ),
        2.0
    );
    server.stop().await;
}

#[tokio::test]
async fn an_idle_client_does_not_stall_other_clients() {
    let certs = Certs::new();
    let mut opts = options(&certs);
    opts.handshake_timeout = Duration::from_secs(60);
    let server = Running::start_with(hooks(), opts).await;
    // One client connects and says nothing; another sends half a ClientHello and stops.
    let _silent = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let mut half = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    half.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .await
        .expect("write");
    let served = tokio::time::timeout(Duration::from_secs(10), async {
        let mut c = Http1::connect(server.addr, &certs).await;
        c.post(PATH, deployment_review("i1", &["nginx:1.27"], false))
            .await
    })
    .await
    .expect("a third client is served while two are stuck in their handshakes");
    assert_eq!(served.json()["response"]["uid"], "i1");
    server.stop().await;
}

#[tokio::test]
async fn a_rotated_certificate_is_served_once_the_files_change() {
    let certs = Certs::new();
    let first = std::fs::read(certs.cert()).expect("cert");
    let server = Running::start(hooks(), &certs).await;
    let mut old = Http1::connect(server.addr, &certs).await;
    let first_der = old.cert.clone();
    let renewed = certs.issue();
    assert_ne!(renewed, first_der);
    assert_ne!(std::fs::read(certs.cert()).expect("cert"), first);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut c = loop {
        let c = Http1::connect(server.addr, &certs).await;
        if c.cert == renewed {
            break c;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the renewed certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let r = c
        .post(PATH, deployment_review("r1", &["nginx:1.27"], false))
        .await;
    assert_eq!(r.json()["response"]["allowed"], true);
    // A connection opened before the rotation keeps working.
    let r = old
        .post(PATH, deployment_review("r2", &["nginx:1.27"], false))
        .await;
    assert_eq!(r.json()["response"]["uid"], "r2");
    // A half-written pair (a key that does not match) keeps the current certificate.
    std::fs::write(
        certs.key(),
        rcgen::KeyPair::generate().expect("key").serialize_pem(),
    )
    .expect("key");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(Http1::connect(server.addr, &certs).await.cert, renewed);
    let m = c.get("/metrics").await.text();
    assert_eq!(metric(&m, "piceli_webhook_certificate_reloads_total"), 1.0);
    server.stop().await;
}

#[tokio::test]
async fn http2_and_http1_keep_alive_serve_many_requests_per_connection() {
    let certs = Certs::new();
    let server = Running::start(hooks(), &certs).await;
    let (h2, alpn) = Http2::connect(server.addr, &certs).await;
    assert_eq!(alpn.as_deref(), Some(&b"h2"[..]), "ALPN picks HTTP/2");
    let concurrent = (0..8).map(|i| {
        let h2 = h2.clone();
        async move {
            h2.post(PATH, deployment_review(&format!("h2-{i}"), &["a:1"], false))
                .await
        }
    });
    let replies = futures::future::join_all(concurrent).await;
    for (i, r) in replies.iter().enumerate() {
        assert_eq!(r.json()["response"]["uid"], format!("h2-{i}"));
    }
    let mut h1 = Http1::connect(server.addr, &certs).await;
    for i in 0..5 {
        let r = h1
            .post(PATH, deployment_review(&format!("h1-{i}"), &["a:1"], false))
            .await;
        assert_eq!(r.json()["response"]["uid"], format!("h1-{i}"));
    }
    // A client that offers no ALPN: the server detects HTTP/1.1 from the first bytes.
    let mut plain = Http1::connect_offering(server.addr, &certs, &[]).await;
    let r = plain
        .post(PATH, deployment_review("plain", &["a:1"], false))
        .await;
    assert_eq!(r.json()["response"]["uid"], "plain");
    let m = h1.get("/metrics").await.text();
    assert_eq!(
        metric(&m, "piceli_webhook_connections_total"),
        3.0,
        "14 requests on 3 connections"
    );
    server.stop().await;
}

#[tokio::test]
async fn metrics_count_requests_denials_dry_runs_and_latency() {
    let certs = Certs::new();
    let server = Running::start(hooks(), &certs).await;
    let mut c = Http1::connect(server.addr, &certs).await;
    for (uid, image, dry) in [
        ("m1", "nginx:1.27", false),
        ("m2", "nginx:latest", false),
        ("m3", "nginx:latest", true),
        ("m4", "nginx:1.27", false),
    ] {
        let r = c.post(PATH, deployment_review(uid, &[image], dry)).await;
        assert_eq!(r.json()["response"]["uid"], uid);
    }
    assert_eq!(c.get("/healthz").await.status, 200);
    assert_eq!(c.get("/readyz").await.text(), "ready\n");
    let m = c.get("/metrics").await.text();
    let series = |name: &str, extra: &str| {
        metric(
            &m,
            &format!("{name}{{webhook=\"no-latest-tag\",type=\"validate\"{extra}}}"),
        )
    };
    assert_eq!(
        series("piceli_webhook_requests_total", ",dry_run=\"false\""),
        3.0
    );
    assert_eq!(
        series("piceli_webhook_requests_total", ",dry_run=\"true\""),
        1.0
    );
    assert_eq!(
        series("piceli_webhook_denials_total", ",dry_run=\"false\""),
        1.0
    );
    assert_eq!(
        series("piceli_webhook_denials_total", ",dry_run=\"true\""),
        1.0
    );
    assert_eq!(series("piceli_webhook_duration_seconds_count", ""), 4.0);
    assert_eq!(
        series("piceli_webhook_duration_seconds_bucket", ",le=\"+Inf\""),
        4.0
    );
    assert!(
        m.contains("# TYPE piceli_webhook_duration_seconds histogram"),
        "{m}"
    );
    server.stop().await;
}

#[tokio::test]
async fn shutdown_finishes_in_flight_requests_and_stops_accepting() {
    async fn slow(_: Request<Deployment>) -> Verdict {
        tokio::time::sleep(Duration::from_millis(600)).await;
        Verdict::deny("slow but answered")
    }
    let certs = Certs::new();
    let server = Running::start(Webhooks::new().validate("slow", slow), &certs).await;
    let addr = server.addr;
    let mut c = Http1::connect(addr, &certs).await;
    let in_flight = tokio::spawn(async move {
        c.post("/validate/slow", deployment_review("s1", &["a:1"], false))
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.stop().await;
    let r = in_flight.await.expect("in-flight request");
    assert_eq!(
        r.json()["response"]["status"]["message"],
        "slow but answered"
    );
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed after shutdown"
    );
}

#[tokio::test]
async fn unreadable_or_mismatched_tls_files_and_bad_names_refuse_to_start() {
    let certs = Certs::new();
    let mut opts = options(&certs);
    opts.tls_cert = certs.dir.path().join("missing.crt");
    let err = piceli_runtime::webhook::Server::bind(hooks(), opts)
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().starts_with("TLS file "), "{err}");
    assert!(err.help().contains("--tls-cert"), "{}", err.help());
    std::fs::write(
        certs.key(),
        rcgen::KeyPair::generate().expect("key").serialize_pem(),
    )
    .expect("key");
    let err = piceli_runtime::webhook::Server::bind(hooks(), options(&certs))
        .await
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("does not go with the certificate"),
        "{err}"
    );
    certs.issue();
    let twice = hooks().validate("no-latest-tag", no_latest_tag);
    let err = piceli_runtime::webhook::Server::bind(twice, options(&certs))
        .await
        .err()
        .expect("refused");
    assert_eq!(
        err.to_string(),
        "the webhooks cannot be served: /validate/no-latest-tag is registered twice"
    );
    let _ = support::read(&certs.cert());
}

/// kube-apiserver keeps an idle webhook connection in its pool for 90 s and sends the next review on it:
/// the server must not close it after the header timeout (hyper's own header timeout counts from the
/// end of the previous response and did), only after the idle timeout.
#[tokio::test]
async fn an_idle_keep_alive_connection_outlives_the_header_timeout_until_the_idle_timeout() {
    let certs = Certs::new();
    let mut opts = options(&certs);
    opts.header_timeout = Duration::from_millis(200);
    opts.idle_timeout = Duration::from_millis(1500);
    let server = Running::start_with(hooks(), opts).await;
    let mut c = Http1::connect(server.addr, &certs).await;
    assert_eq!(c.get("/healthz").await.status, 200);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!c.is_closed(), "closed after the header timeout while idle");
    let review = deployment_review("idle-1", &["nginx:1.27"], false);
    let reply = c.post("/validate/no-latest-tag", review).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["response"]["uid"], "idle-1");
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        while !c.is_closed() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(closed.is_ok(), "still open long after the idle timeout");
    server.stop().await;
}

#[tokio::test]
async fn slow_handshakes_and_slow_headers_are_cut_off() {
    use tokio::io::AsyncReadExt;
    let certs = Certs::new();
    let mut opts = options(&certs);
    opts.handshake_timeout = Duration::from_millis(200);
    opts.header_timeout = Duration::from_millis(200);
    let server = Running::start_with(hooks(), opts).await;
    let mut silent = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(10), silent.read(&mut buf))
        .await
        .expect("the server closes a connection that never handshakes");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");

    let mut slow = support::tls(server.addr, &certs, &[b"http/1.1"]).await;
    slow.write_all(b"POST /validate/no-latest-tag HTTP/1.1\r\nHost: a\r\n")
        .await
        .expect("write");
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut rest))
        .await
        .expect("the server gives up on headers that never end");
    assert!(
        read.is_err() || !String::from_utf8_lossy(&rest).contains("200 OK"),
        "{rest:?}"
    );

    let mut c = Http1::connect(server.addr, &certs).await;
    let m = c.get("/metrics").await.text();
    assert_eq!(
        metric(&m, "piceli_webhook_tls_handshake_failures_total"),
        1.0
    );
    server.stop().await;
}
