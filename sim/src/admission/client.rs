//! A small blocking HTTPS client for webhook calls: keep-alive TLS connections pooled per webhook
//! endpoint (`pool.rs`), verified against the webhook's `caBundle`, with the whole call bounded by a
//! deadline.
//! Blocking on purpose: the write pipeline runs on blocking threads, and a plain socket with read and
//! write timeouts needs no runtime context. Errors are worded like Go's `net/http` client's, which the
//! real API server quotes in its `failed calling webhook` messages.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};

use super::pool;

/// Where one call goes.
pub struct Target {
    /// The address to connect to.
    pub addr: SocketAddr,
    /// The name the server certificate must be valid for (a DNS name or an IP address).
    pub server_name: String,
    /// The `Host` header.
    pub host: String,
    /// Path and query of the request.
    pub path: String,
    /// The full URL, for error messages.
    pub url: String,
}

/// A client TLS configuration trusting exactly the PEM certificates of `ca_bundle` (as Go does, also
/// a serving certificate that is itself in the bundle: `verify.rs`). No bundle means no trusted roots
/// (the simulator does not read the system's), so every verification fails.
pub fn tls_config(ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, String> {
    let bundle = CertificateDer::pem_slice_iter(ca_bundle)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("unable to load root certificates: {e}"))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let config = if bundle.is_empty() {
        builder
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth()
    } else {
        let verifier = super::verify::BundleVerifier::new(bundle)?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth()
    };
    Ok(Arc::new(config))
}

/// POSTs a JSON body; returns the HTTP status and the response body. An idle keep-alive connection to
/// the same endpoint is reused when there is one (a stale one — closed by the server meanwhile — is
/// replaced by a new connection once); the connection goes back to the pool after a complete response.
pub fn post(
    tls: &Arc<rustls::ClientConfig>,
    target: &Target,
    body: &[u8],
    deadline: Instant,
) -> Result<(u16, Vec<u8>), String> {
    let fail = |why: String| format!("Post {:?}: {why}", target.url);
    let mut request = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: kube-apiserver-admission\r\n\
         Content-Type: application/json\r\nAccept: application/json, */*\r\n\
         Content-Length: {}\r\n\r\n",
        target.path,
        target.host,
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    let endpoint = pool::Endpoint::new(target.addr, &target.server_name, tls);
    if let Some(mut stream) = pool::take(&endpoint) {
        match exchange(&mut stream, &request, deadline) {
            Ok(done) => return Ok(finish(endpoint, stream, done)),
            Err(Failure::Stale) => {}
            Err(Failure::Io(e)) => return Err(fail(io_message(&e, deadline))),
            Err(Failure::Http(why)) => return Err(fail(why)),
        }
    }
    let mut stream = connect(tls, target, deadline).map_err(fail)?;
    match exchange(&mut stream, &request, deadline) {
        Ok(done) => Ok(finish(endpoint, stream, done)),
        Err(Failure::Stale) => Err(fail("EOF".into())),
        Err(Failure::Io(e)) => Err(fail(io_message(&e, deadline))),
        Err(Failure::Http(why)) => Err(fail(why)),
    }
}

/// A complete response, and whether its connection may be used again.
struct Done {
    status: u16,
    body: Vec<u8>,
    reusable: bool,
}

/// Why an exchange failed.
enum Failure {
    /// The connection was closed before any byte of a response came (a reused one the server dropped).
    Stale,
    Io(std::io::Error),
    Http(String),
}

fn finish(endpoint: pool::Endpoint, stream: pool::Stream, done: Done) -> (u16, Vec<u8>) {
    if done.reusable {
        pool::put(endpoint, stream);
    }
    (done.status, done.body)
}

fn left(deadline: Instant) -> Option<Duration> {
    let d = deadline.saturating_duration_since(Instant::now());
    (!d.is_zero()).then_some(d)
}

fn io_message(e: &std::io::Error, deadline: Instant) -> String {
    match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => "context deadline exceeded".into(),
        _ if left(deadline).is_none() => "context deadline exceeded".into(),
        _ => tls_or_io(e),
    }
}

/// A new TLS connection (the handshake completes on the first write).
fn connect(
    tls: &Arc<rustls::ClientConfig>,
    target: &Target,
    deadline: Instant,
) -> Result<pool::Stream, String> {
    let timeout = || "context deadline exceeded".to_string();
    let wait = left(deadline).ok_or_else(timeout)?;
    let tcp = TcpStream::connect_timeout(&target.addr, wait).map_err(|e| match e.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => timeout(),
        _ => format!("dial tcp {}: connect: {}", target.addr, go_io(&e)),
    })?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::try_from(target.server_name.clone())
        .map_err(|e| format!("invalid server name: {e}"))?;
    let conn = rustls::ClientConnection::new(tls.clone(), name).map_err(|e| e.to_string())?;
    Ok(rustls::StreamOwned::new(conn, tcp))
}

/// Sends one request and reads its whole response.
fn exchange(stream: &mut pool::Stream, request: &[u8], deadline: Instant) -> Result<Done, Failure> {
    let timed_out = || Failure::Io(std::io::Error::from(ErrorKind::TimedOut));
    let wait = left(deadline).ok_or_else(timed_out)?;
    stream
        .sock
        .set_write_timeout(Some(wait))
        .map_err(Failure::Io)?;
    stream
        .sock
        .set_read_timeout(Some(wait))
        .map_err(Failure::Io)?;
    let stale_or = |e: std::io::Error| match e.kind() {
        ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => {
            Failure::Stale
        }
        _ => Failure::Io(e),
    };
    stream.write_all(request).map_err(stale_or)?;
    stream.flush().map_err(stale_or)?;
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(r) = parse_response(&buf, false).map_err(Failure::Http)? {
            return Ok(done(&buf, r));
        }
        let wait = left(deadline).ok_or_else(timed_out)?;
        stream
            .sock
            .set_read_timeout(Some(wait))
            .map_err(Failure::Io)?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            // A server closing without close_notify: use what arrived.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if buf.is_empty() => return Err(stale_or(e)),
            Err(e) => return Err(Failure::Io(e)),
        }
    }
    if buf.is_empty() {
        return Err(Failure::Stale);
    }
    match parse_response(&buf, true).map_err(Failure::Http)? {
        Some((status, body)) => Ok(Done {
            status,
            body,
            reusable: false,
        }),
        None => Err(Failure::Http("EOF".into())),
    }
}

/// A response read before the connection ended: reusable when its length was given exactly, all of it
/// (and nothing more) arrived, and the server did not ask to close.
fn done(buf: &[u8], (status, body): (u16, Vec<u8>)) -> Done {
    let head_end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0);
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let has_length = head.lines().any(|l| l.starts_with("content-length:"));
    let closes = head
        .lines()
        .any(|l| l.starts_with("connection:") && l.contains("close"));
    let http11 = head.starts_with("http/1.1");
    Done {
        reusable: has_length && !closes && http11 && buf.len() == head_end + 4 + body.len(),
        status,
        body,
    }
}

/// Go's wording of common socket errors.
fn go_io(e: &std::io::Error) -> String {
    match e.kind() {
        ErrorKind::ConnectionRefused => "connection refused".into(),
        ErrorKind::ConnectionReset => "connection reset by peer".into(),
        _ => e.to_string(),
    }
}

/// A TLS failure worded like Go's `crypto/tls`, or a socket error.
fn tls_or_io(e: &std::io::Error) -> String {
    let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) else {
        return go_io(e);
    };
    use rustls::CertificateError as C;
    let x509 = match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            C::UnknownIssuer | C::BadSignature => "certificate signed by unknown authority".into(),
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => "certificate has expired or is not yet valid".into(),
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                "certificate is not valid for the webhook's host name".into()
            }
            // A CA certificate serving (not itself in the bundle): Go finds no chain to a root.
            C::Other(o) if format!("{o:?}").contains("CaUsedAsEndEntity") => {
                "certificate signed by unknown authority".into()
            }
            other => format!("{other:?}"),
        },
        other => return format!("remote error: tls: {other}"),
    };
    format!("tls: failed to verify certificate: x509: {x509}")
}

/// Parses a complete HTTP/1.1 response out of `buf`; `None` while incomplete (unless `eof`).
fn parse_response(buf: &[u8], eof: bool) -> Result<Option<(u16, Vec<u8>)>, String> {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if eof {
            Err("malformed HTTP response".into())
        } else {
            Ok(None)
        };
    };
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| "malformed HTTP response")?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| format!("malformed HTTP status line {:?}", head.lines().next()))?;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim();
        if k.eq_ignore_ascii_case("content-length") {
            length = Some(v.parse::<usize>().map_err(|_| "malformed Content-Length")?);
        } else if k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked") {
            chunked = true;
        }
    }
    let body = &buf[end + 4..];
    if chunked {
        return match dechunk(body)? {
            Some(b) => Ok(Some((status, b))),
            None if eof => Err("unexpected EOF".into()),
            None => Ok(None),
        };
    }
    match length {
        Some(n) if body.len() >= n => Ok(Some((status, body[..n].to_vec()))),
        Some(_) if eof => Err("unexpected EOF".into()),
        Some(_) => Ok(None),
        None if eof => Ok(Some((status, body.to_vec()))),
        None => Ok(None),
    }
}

/// Decodes a chunked body; `None` until the last chunk has arrived.
fn dechunk(mut rest: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let size_text = std::str::from_utf8(&rest[..eol]).map_err(|_| "malformed chunk")?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "malformed chunk size")?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(Some(out));
        }
        if rest.len() < size + 2 {
            return Ok(None);
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// The default timeout of a webhook call and its bounds.
pub fn timeout_of(seconds: Option<i64>) -> Duration {
    Duration::from_secs(seconds.unwrap_or(10).clamp(1, 30) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_length_chunked_and_eof_bodies() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(parse_response(r, false), Ok(Some((200, b"{}".to_vec()))));
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}";
        assert_eq!(parse_response(r, false), Ok(None));
        let r = b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n1\r\n \r\n0\r\n\r\n";
        assert_eq!(parse_response(r, false), Ok(Some((201, b"{} ".to_vec()))));
        let r = b"HTTP/1.1 200 OK\r\n\r\nabc";
        assert_eq!(parse_response(r, false), Ok(None));
        assert_eq!(parse_response(r, true), Ok(Some((200, b"abc".to_vec()))));
        assert!(parse_response(b"garbage", true).is_err());
    }

    #[test]
    fn timeouts_default_to_ten_seconds_within_one_to_thirty() {
        assert_eq!(timeout_of(None), Duration::from_secs(10));
        assert_eq!(timeout_of(Some(0)), Duration::from_secs(1));
        assert_eq!(timeout_of(Some(99)), Duration::from_secs(30));
    }
}
