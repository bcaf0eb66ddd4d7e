//! The built-in responder behind unmapped pod ports: hyper's HTTP/1.x server answering every request
//! with `200 OK`, `text/plain; charset=utf-8`, and the pod's name plus a newline as the body — except
//! `/status/NNN`, answered with status NNN (as httpbin does), so a test can make a check fail the same
//! way here and on the real control plane's responder (scripts/real-cluster/pods-responder.py).
//!
//! hyper keeps the protocol: HTTP/1.1 keeps the connection unless the request says `Connection:
//! close`, HTTP/1.0 closes it unless the request says `Connection: keep-alive`, `HEAD` answers have no
//! body, request bodies (with `Content-Length` or chunked) are read and dropped, and a request that
//! is not HTTP/1.x gets a 400 and the connection closes. Header names are written in the canonical
//! case Go's servers use (`Content-Type`).

use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

/// The largest request head accepted (hyper's buffer; a longer head is refused).
const MAX_HEAD: usize = 64 * 1024;

/// Reads the request body to its end and drops it, so the next request on the connection is read.
async fn drain(request: Request<Incoming>) {
    let mut body = request.into_body();
    while let Some(Ok(_)) = body.frame().await {}
}

/// The status a request path asks for: `/status/NNN` (100–599), else 200.
fn status_of(path: &str) -> http::StatusCode {
    path.strip_prefix("/status/")
        .and_then(|code| code.parse::<u16>().ok())
        .and_then(|code| http::StatusCode::from_u16(code).ok())
        .unwrap_or(http::StatusCode::OK)
}

/// Serves HTTP on `io` until the client closes or asks to close.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(io: S, pod: String) {
    let body = Bytes::from(format!("{pod}\n"));
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let body = body.clone();
        async move {
            let status = status_of(request.uri().path());
            drain(request).await;
            let mut response = Response::new(Full::new(body));
            *response.status_mut() = status;
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            Ok::<_, Infallible>(response)
        }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .title_case_headers(true)
        .max_buf_size(MAX_HEAD)
        .serve_connection(TokioIo::new(io), service)
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn exchange(request: &[u8]) -> String {
        let (mut client, server) = tokio::io::duplex(1024);
        tokio::spawn(serve(server, "web-1".into()));
        client.write_all(request).await.expect("write");
        let mut out = String::new();
        let read = client.read_to_string(&mut out);
        tokio::time::timeout(std::time::Duration::from_secs(5), read)
            .await
            .expect("the server closes the connection")
            .expect("read");
        out
    }

    #[tokio::test]
    async fn answers_pipelined_requests_with_the_pod_name() {
        let out = exchange(b"POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcHEAD / HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n").await;
        assert_eq!(out.matches("HTTP/1.1 200 OK\r\n").count(), 4, "{out}");
        assert_eq!(
            out.matches("Content-Type: text/plain; charset=utf-8\r\n")
                .count(),
            4,
            "{out}"
        );
        assert_eq!(
            out.matches("\r\n\r\nweb-1\n").count(),
            3,
            "HEAD has no body: {out}"
        );
        assert!(out.ends_with("\r\n\r\nweb-1\n"), "{out}");
    }

    #[tokio::test]
    async fn a_status_path_answers_that_status() {
        let out =
            exchange(b"GET /status/503 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        assert!(
            out.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{out}"
        );
        let out =
            exchange(b"GET /status/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"), "{out}");
    }

    #[tokio::test]
    async fn keep_alive_follows_the_version_and_connection_header() {
        // HTTP/1.0 closes after one answer unless asked to keep the connection.
        let out = exchange(b"GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n").await;
        assert_eq!(out.matches("200 OK").count(), 1, "{out}");
        let out =
            exchange(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n")
                .await;
        assert_eq!(out.matches("200 OK").count(), 2, "{out}");
        assert!(out.contains("Connection: keep-alive\r\n"), "{out}");
    }

    #[tokio::test]
    async fn garbage_is_a_400_and_the_end_of_the_connection() {
        let out = exchange(b"hello there\r\n\r\nGET / HTTP/1.1\r\n\r\n").await;
        assert!(out.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{out}");
        assert!(!out.contains("200 OK"), "{out}");
    }
}
