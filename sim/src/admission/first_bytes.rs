//! The first bytes a webhook's server sent on a connection, kept while the TLS handshake reads them:
//! when the handshake fails on the first record, Go's `crypto/tls` reports `tls: first record does
//! not look like a TLS handshake`, which its `net/http` client turns into `http: server gave HTTP
//! response to HTTPS client` when those bytes are `HTTP/` (a webhook served without TLS).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How many bytes a TLS record header has (and `HTTP/`).
const HEADER: usize = 5;

/// A stream that remembers the first [`HEADER`] bytes read from it.
pub struct FirstBytes<S> {
    inner: S,
    seen: [u8; HEADER],
    len: usize,
}

impl<S> FirstBytes<S> {
    pub fn new(inner: S) -> FirstBytes<S> {
        FirstBytes {
            inner,
            seen: [0; HEADER],
            len: 0,
        }
    }

    /// Why a TLS handshake that failed on its first record failed, as Go's client words it; `None`
    /// when the server's first record was a TLS one.
    pub fn not_tls(&self) -> Option<&'static str> {
        let header = &self.seen[..self.len];
        if header == b"HTTP/" {
            return Some("http: server gave HTTP response to HTTPS client");
        }
        // Go's check (`Conn.readRecordOrCCS` before a version is agreed): a handshake or an alert
        // record of a version below 0x1000.
        let tls_like = header.first().is_none_or(|t| *t == 21 || *t == 22)
            && (header.len() < 3 || header[1] < 0x10);
        (!tls_like).then_some("tls: first record does not look like a TLS handshake")
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FirstBytes<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut me.inner).poll_read(cx, buf);
        if me.len < HEADER {
            let new = &buf.filled()[before..];
            let n = new.len().min(HEADER - me.len);
            me.seen[me.len..me.len + n].copy_from_slice(&new[..n]);
            me.len += n;
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FirstBytes<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(bytes: &[u8]) -> Option<&'static str> {
        let mut f = FirstBytes::new(tokio::io::empty());
        f.seen[..bytes.len()].copy_from_slice(bytes);
        f.len = bytes.len();
        f.not_tls()
    }

    #[test]
    fn http_answers_and_other_bytes_are_told_apart_from_tls_records() {
        assert_eq!(
            after(b"HTTP/"),
            Some("http: server gave HTTP response to HTTPS client")
        );
        assert_eq!(
            after(b"SSH-2"),
            Some("tls: first record does not look like a TLS handshake")
        );
        assert_eq!(after(&[22, 3, 3, 0, 90]), None, "a handshake record");
        assert_eq!(after(&[21, 3, 3, 0, 2]), None, "an alert");
        assert_eq!(after(b""), None, "nothing came");
    }
}
