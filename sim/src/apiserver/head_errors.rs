//! Heads hyper cannot parse, answered with a `Status` body: a request line over 65,534 bytes (the
//! longest URI the `http` crate holds: a label selector of tens of thousands of keys) gets 414, a head
//! over the connection's buffer 431, a malformed one 400 — hyper writes those answers itself, with no
//! body, so kubectl and client-go could only say "the server responded with the status code 414 but
//! did not return more information". [`StatusOnHeadErrors`] wraps the connection's stream and puts an
//! answer of the same code with a `Status` in place of hyper's: it knows hyper's own answers from the
//! connection's [`Phases`], since a response written while a head is still being read (no request was
//! handed to the service since its first byte) can only be one of them. hyper closes the connection
//! after it, and so does the answer (`Connection: close`).

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};

use piceli_net::conn_timeouts::Phases;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::apiserver::handlers::MAX_HEAD;
use crate::status::ApiError;

/// The longest URI hyper accepts (`http::Uri`'s limit).
const MAX_URI: usize = u16::MAX as usize - 1;

/// A connection's stream whose automatic error answers from hyper carry a `Status`.
pub(crate) struct StatusOnHeadErrors<S> {
    stream: S,
    phases: Phases,
    /// The answer being written in place of hyper's, and how much of it is written.
    answer: Option<(Vec<u8>, usize)>,
}

impl<S> StatusOnHeadErrors<S> {
    /// `stream`, whose phases `phases` tracks.
    pub(crate) fn new(stream: S, phases: Phases) -> StatusOnHeadErrors<S> {
        StatusOnHeadErrors {
            stream,
            phases,
            answer: None,
        }
    }
}

/// The error hyper's automatic answer with this status line stands for.
fn error_for(status_line: &[u8]) -> Option<ApiError> {
    let code = status_line.strip_prefix(b"HTTP/1.1 ")?.get(..3)?;
    Some(match code {
        b"414" => ApiError::new(
            414,
            "RequestURITooLong",
            format!("Request-URI Too Long: the request's URI is longer than {MAX_URI} bytes"),
        ),
        b"431" => ApiError::header_too_large(MAX_HEAD),
        b"400" => {
            ApiError::bad_request("Bad Request: the request line or a header could not be parsed")
        }
        _ => return None,
    })
}

/// The whole HTTP/1.1 answer for `error`.
fn answer(error: &ApiError) -> Vec<u8> {
    let body = error.to_status().to_string();
    let reason = http::StatusCode::from_u16(error.code)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        error.code,
        body.len()
    )
    .into_bytes()
}

impl<S: AsyncWrite + Unpin> StatusOnHeadErrors<S> {
    /// Starts the answer in place of hyper's when `first` begins hyper's own.
    fn intercept(&mut self, first: &[u8]) {
        if self.answer.is_none()
            && self.phases.reading_head()
            && let Some(error) = error_for(first)
        {
            self.answer = Some((answer(&error), 0));
        }
    }

    /// Writes what is left of the answer; `Ready(Ok(true))` when an answer is being given.
    fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<bool>> {
        let Some((bytes, written)) = self.answer.as_mut() else {
            return Poll::Ready(Ok(false));
        };
        while *written < bytes.len() {
            match Pin::new(&mut self.stream).poll_write(cx, &bytes[*written..]) {
                Poll::Ready(Ok(0)) => {
                    return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                }
                Poll::Ready(Ok(n)) => *written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(true))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for StatusOnHeadErrors<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for StatusOnHeadErrors<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.intercept(buf);
        match this.poll_answer(cx) {
            // hyper's own bytes are taken and dropped.
            Poll::Ready(Ok(true)) => Poll::Ready(Ok(buf.len())),
            Poll::Ready(Ok(false)) => Pin::new(&mut this.stream).poll_write(cx, buf),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
            this.intercept(first);
        }
        match this.poll_answer(cx) {
            Poll::Ready(Ok(true)) => Poll::Ready(Ok(bufs.iter().map(|b| b.len()).sum())),
            Poll::Ready(Ok(false)) => Pin::new(&mut this.stream).poll_write_vectored(cx, bufs),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match this.poll_answer(cx) {
            Poll::Ready(Ok(_)) => Pin::new(&mut this.stream).poll_flush(cx),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        match this.poll_answer(cx) {
            Poll::Ready(Ok(_)) => Pin::new(&mut this.stream).poll_shutdown(cx),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hyper_s_parse_error_answers_are_replaced() {
        let e = error_for(b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\n\r\n").expect("414");
        assert_eq!((e.code, e.reason), (414, "RequestURITooLong"));
        assert_eq!(error_for(b"HTTP/1.1 431 x").map(|e| e.code), Some(431));
        assert_eq!(error_for(b"HTTP/1.1 400 x").map(|e| e.code), Some(400));
        assert!(error_for(b"HTTP/1.1 200 OK\r\n").is_none());
        assert!(error_for(b"{\"HTTP/1.1 414").is_none());
        let text = String::from_utf8(answer(&e)).expect("utf-8");
        let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n"), "{head}");
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        let status: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["code"], 414);
    }
}
