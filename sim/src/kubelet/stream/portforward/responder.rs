//! The built-in responder behind unmapped pod ports: a tiny HTTP/1.x server that answers every
//! request with `200 OK`, `text/plain`, and the pod's name plus a newline as the body.
//!
//! Connections persist as HTTP says: HTTP/1.1 keeps the connection unless the request says
//! `Connection: close`; HTTP/1.0 closes it unless the request says `Connection: keep-alive`.
//! Request bodies with `Content-Length` are read and ignored; a chunked body or anything that
//! is not an HTTP/1.x request gets its answer (400 for garbage) and the connection closes.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest request head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// What one parsed request head says about the exchange.
#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    /// The request method (`GET`, `POST`, …).
    pub method: String,
    /// Whether the connection stays open after this exchange.
    pub keep_alive: bool,
    /// The `Content-Length` (0 without the header).
    pub content_length: usize,
    /// Whether the body uses chunked transfer encoding.
    pub chunked: bool,
    /// `HTTP/1.0` or `HTTP/1.1`.
    pub version: String,
}

/// Parses a request head (everything before the blank line); `None` if it is not HTTP/1.x.
pub fn parse_head(head: &[u8]) -> Option<Head> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let _target = first.next()?;
    let version = first.next()?.to_string();
    if method.is_empty() || !(version == "HTTP/1.1" || version == "HTTP/1.0") {
        return None;
    }
    let mut keep_alive = version == "HTTP/1.1";
    let mut content_length = 0;
    let mut chunked = false;
    for line in lines {
        let (name, value) = line.split_once(':')?;
        let value = value.trim();
        if name.eq_ignore_ascii_case("connection") {
            for token in value.split(',').map(str::trim) {
                if token.eq_ignore_ascii_case("close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case("keep-alive") {
                    keep_alive = true;
                }
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            content_length = value.parse().ok()?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        }
    }
    Some(Head {
        method,
        keep_alive,
        content_length,
        chunked,
        version,
    })
}

/// The response to one request.
pub fn response(head: &Head, pod: &str) -> Vec<u8> {
    let body = format!("{pod}\n");
    let keep = head.keep_alive && !head.chunked;
    let connection = match (keep, head.version.as_str()) {
        (true, "HTTP/1.0") => "Connection: keep-alive\r\n",
        (true, _) => "",
        (false, _) => "Connection: close\r\n",
    };
    let mut out = format!(
        "{} 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n{connection}\r\n",
        head.version,
        body.len()
    )
    .into_bytes();
    if head.method != "HEAD" {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbad request\n";

/// Serves HTTP on `io` until the client closes or asks to close.
pub async fn serve<S: AsyncRead + AsyncWrite + Unpin>(mut io: S, pod: String) {
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        // Read until a whole head is buffered.
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            if buf.len() > MAX_HEAD {
                let _ = io.write_all(BAD_REQUEST).await;
                let _ = io.shutdown().await;
                return;
            }
            match io.read(&mut chunk).await {
                Ok(0) | Err(_) => {
                    let _ = io.shutdown().await;
                    return;
                }
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let Some(head) = parse_head(&buf[..end]) else {
            let _ = io.write_all(BAD_REQUEST).await;
            let _ = io.shutdown().await;
            return;
        };
        buf.drain(..end + 4);
        // Skip the body.
        let mut left = head.content_length;
        let take = left.min(buf.len());
        buf.drain(..take);
        left -= take;
        while left > 0 {
            match io.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let used = n.min(left);
                    left -= used;
                    buf.extend_from_slice(&chunk[used..n]);
                }
            }
        }
        if io.write_all(&response(&head, &pod)).await.is_err() {
            return;
        }
        let _ = io.flush().await;
        if !head.keep_alive || head.chunked {
            let _ = io.shutdown().await;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_follows_the_version_and_connection_header() {
        let h = parse_head(b"GET / HTTP/1.1\r\nHost: x").unwrap();
        assert!(h.keep_alive);
        let h = parse_head(b"GET / HTTP/1.1\r\nConnection: close").unwrap();
        assert!(!h.keep_alive);
        let h = parse_head(b"GET / HTTP/1.0").unwrap();
        assert!(!h.keep_alive);
        let h = parse_head(b"GET / HTTP/1.0\r\nConnection: Keep-Alive").unwrap();
        assert!(h.keep_alive);
        assert!(
            String::from_utf8(response(&h, "p"))
                .unwrap()
                .contains("Connection: keep-alive")
        );
        assert!(parse_head(b"hello").is_none());
        assert!(parse_head(b"GET / SPDY/3").is_none());
    }

    #[tokio::test]
    async fn answers_pipelined_requests_with_the_pod_name() {
        let (mut client, server) = tokio::io::duplex(1024);
        tokio::spawn(serve(server, "web-1".into()));
        client
            .write_all(b"POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcHEAD / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut out = String::new();
        client.read_to_string(&mut out).await.unwrap();
        assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 3);
        assert_eq!(out.matches("web-1\n").count(), 2);
        assert!(out.ends_with("Connection: close\r\n\r\nweb-1\n"));
    }
}
