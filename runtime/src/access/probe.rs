//! The health probe of a forward: an HTTP/1.1 GET of its `health` path through a fresh forward to a ready
//! pod, every few seconds; only changes are reported.

use super::Context;
use super::event::Event;
use super::spec::Spec;
use crate::forward;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How often a forward is probed.
pub const INTERVAL: Duration = Duration::from_secs(5);
/// How long one probe may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The status code of an HTTP status line (`HTTP/1.1 200 OK`).
pub fn status_code(line: &str) -> Option<u16> {
    let mut parts = line.split_whitespace();
    let version = parts.next()?;
    if !version.starts_with("HTTP/") {
        return None;
    }
    parts.next()?.parse().ok()
}

/// One probe: `(status, status line or error)`.
async fn probe_once(cx: &Context, spec: &Spec, path: &str) -> (Option<u16>, String) {
    let attempt = async {
        let mut fwd = forward::connect(
            &cx.client,
            &cx.app,
            &cx.namespace,
            &spec.name,
            spec.port.as_ref(),
        )
        .await
        .map_err(|e| e.to_string())?;
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: piceli-access\r\nConnection: close\r\n\r\n"
        );
        let io = async {
            fwd.stream.write_all(request.as_bytes()).await?;
            let mut head = Vec::new();
            let mut buf = [0u8; 512];
            while !head.windows(2).any(|w| w == b"\r\n") && head.len() < 4096 {
                let n = fwd.stream.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            Ok::<_, std::io::Error>(head)
        };
        let head = io.await.map_err(|e| e.to_string());
        drop(fwd.stream);
        fwd.forwarder.abort();
        let head = head?;
        let text = String::from_utf8_lossy(&head);
        let line = text.lines().next().unwrap_or_default().trim().to_string();
        Ok::<_, String>((status_code(&line), line))
    };
    match tokio::time::timeout(TIMEOUT, attempt).await {
        Ok(Ok((Some(code), line))) => (Some(code), line),
        Ok(Ok((None, line))) => (None, format!("not an HTTP answer: {line:?}")),
        Ok(Err(e)) => (None, e),
        Err(_) => (None, format!("no answer in {}s", TIMEOUT.as_secs())),
    }
}

/// Probe forever (until aborted), reporting each change of result.
pub async fn run(cx: Context, spec: Spec, path: String, emit: super::Emit) {
    let mut last: Option<(bool, Option<u16>)> = None;
    loop {
        let (status, message) = probe_once(&cx, &spec, &path).await;
        let healthy = status.is_some_and(|s| (200..400).contains(&s));
        if last != Some((healthy, status)) {
            last = Some((healthy, status));
            emit(Event::Health {
                name: spec.name.clone(),
                path: path.clone(),
                healthy,
                status,
                message,
            });
        }
        tokio::time::sleep(INTERVAL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_status_lines() {
        assert_eq!(status_code("HTTP/1.1 200 OK"), Some(200));
        assert_eq!(status_code("HTTP/1.0 503 Service Unavailable"), Some(503));
        assert_eq!(status_code("SSH-2.0-OpenSSH"), None);
        assert_eq!(status_code(""), None);
    }
}
