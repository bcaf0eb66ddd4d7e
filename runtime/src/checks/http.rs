//! `http` checks: one HTTP/1.1 request over a port-forwarded stream, judged by status and body.

use super::code::CheckContext;
use crate::forward::Stream;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use piceli_core::model::PortRef;

/// The most of a response body kept (for the `body:` substring and messages).
pub const MAX_BODY: usize = 1 << 20;

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The body as text (lossy UTF-8, at most [`MAX_BODY`] bytes).
    pub body: String,
}

/// Sends `METHOD path` with `Host: host` over `stream` and reads the whole response.
pub async fn request(
    stream: Box<dyn Stream>,
    method: &str,
    path: &str,
    host: &str,
) -> Result<HttpResponse, String> {
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake failed: {e}"))?;
    let driver = tokio::spawn(connection);
    let method = hyper::Method::from_bytes(method.as_bytes())
        .map_err(|_| format!("`{method}` is not an HTTP method"))?;
    let req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, host)
        .header(hyper::header::USER_AGENT, "piceli-check")
        .body(Empty::<Bytes>::new())
        .map_err(|e| format!("bad request `{path}`: {e}"))?;
    let response = sender
        .send_request(req)
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    let status = response.status().as_u16();
    let body = http_body_util::Limited::new(response.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| format!("reading the body failed: {e}"))?
        .to_bytes();
    driver.abort();
    Ok(HttpResponse {
        status,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// Requests `path` of a declared Service or workload through a port forward.
pub async fn fetch(
    cx: &CheckContext,
    target: &str,
    port: Option<&PortRef>,
    method: &str,
    path: &str,
) -> Result<HttpResponse, String> {
    let forward = cx.open_forward(target, port).await?;
    let host = format!("{target}.{}", cx.namespace());
    let result = request(forward.stream, method, path, &host).await;
    forward.forwarder.abort();
    result
}

/// Judges a response: the status must equal `expect`, and the body contain `body` when given.
pub fn judge(response: &HttpResponse, expect: u16, body: Option<&str>) -> Result<String, String> {
    if response.status != expect {
        return Err(format!(
            "got status {}, expected {expect}{}",
            response.status,
            excerpt(&response.body)
        ));
    }
    if let Some(want) = body
        && !response.body.contains(want)
    {
        return Err(format!(
            "status {expect}, but the body does not contain `{want}`{}",
            excerpt(&response.body)
        ));
    }
    Ok(format!("status {}", response.status))
}

/// The start of a body for a message.
fn excerpt(body: &str) -> String {
    let line = body.trim();
    if line.is_empty() {
        return String::new();
    }
    let cut: String = line.chars().take(120).collect();
    let more = if cut.len() < line.len() { "…" } else { "" };
    format!(" (body: {:?}{more})", cut.replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A one-shot server on the other end of an in-memory stream: reads the request head, answers
    /// `response`, and returns the head it read.
    async fn serve(mut server: tokio::io::DuplexStream, response: &'static str) -> String {
        let mut head = Vec::new();
        let mut buf = [0u8; 512];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = server.read(&mut buf).await.unwrap();
            assert!(n > 0, "request ended early");
            head.extend_from_slice(&buf[..n]);
        }
        server.write_all(response.as_bytes()).await.unwrap();
        server.flush().await.unwrap();
        String::from_utf8(head).unwrap()
    }

    #[tokio::test]
    async fn speaks_http_1_1_over_a_stream() {
        let (client, server) = tokio::io::duplex(4096);
        let served = tokio::spawn(serve(
            server,
            "HTTP/1.1 200 OK\r\ncontent-length: 14\r\n\r\nWelcome, pod-1",
        ));
        let got = request(Box::new(client), "GET", "/health?x=1", "web.hello")
            .await
            .unwrap();
        assert_eq!(got.status, 200);
        assert_eq!(got.body, "Welcome, pod-1");
        let head = served.await.unwrap();
        assert!(head.starts_with("GET /health?x=1 HTTP/1.1\r\n"), "{head}");
        assert!(
            head.to_lowercase().contains("host: web.hello\r\n"),
            "{head}"
        );
        assert_eq!(judge(&got, 200, Some("Welcome")).unwrap(), "status 200");
        let wrong = judge(&got, 200, Some("Goodbye")).unwrap_err();
        assert!(wrong.contains("does not contain `Goodbye`"), "{wrong}");
    }

    #[tokio::test]
    async fn a_wrong_status_fails_with_what_came_back() {
        let (client, server) = tokio::io::duplex(4096);
        tokio::spawn(serve(
            server,
            "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 4\r\n\r\nboom",
        ));
        let got = request(Box::new(client), "POST", "/", "x").await.unwrap();
        let message = judge(&got, 200, None).unwrap_err();
        assert_eq!(message, "got status 500, expected 200 (body: \"boom\")");
    }

    #[tokio::test]
    async fn a_stream_that_closes_is_an_error_not_a_hang() {
        let (client, server) = tokio::io::duplex(64);
        drop(server);
        let err = request(Box::new(client), "GET", "/", "x")
            .await
            .unwrap_err();
        assert!(err.contains("failed"), "{err}");
        let bad = {
            let (client, _server) = tokio::io::duplex(64);
            request(Box::new(client), "GE T", "/", "x")
                .await
                .unwrap_err()
        };
        assert!(bad.contains("not an HTTP method"), "{bad}");
    }
}
