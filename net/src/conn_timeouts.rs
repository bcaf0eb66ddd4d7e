//! A connection's time limits, as kube-apiserver's (Go's `net/http` server with `IdleTimeout: 90s` and
//! a `ReadHeaderTimeout`):
//!
//! - **Idle**: between requests a keep-alive connection may wait [`Limits::idle`] (90 s unless
//!   configured) for the next one, so clients that reuse connections from a pool (the Python client,
//!   client-go, kube) find them open after a pause.
//! - **Header**: a request's head must arrive within [`Limits::header`], counted from the connection's
//!   start for its first request and from the first byte of each later one; not from the end of the
//!   previous response, which would close every idle connection after the header timeout (hyper's own
//!   `header_read_timeout` counts that way, so it is off). Slowloris connections are still closed.
//! - While a request is handled and its response (a watch, a long list) is written, no limit applies.
//!
//! [`Watched`] wraps the connection's stream and marks when the next request's first byte arrives;
//! [`Phases::request`] marks a request as read (its response body holds an [`InFlight`] until hyper
//! drops it after the last byte); [`Phases::expired`] resolves once a limit is passed and the server
//! closes the connection.
//!
//! The watchdog is told of a change only when the change brings a deadline earlier than the one it
//! sleeps until (or it waits for any change): a keep-alive connection's requests, each moving the
//! phase three times, wake it about once per header timeout, not three times per request.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::Frame;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// kube-apiserver's idle timeout for keep-alive connections.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// The limits of every connection.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// For the TLS handshake, and for each request's head from its first byte.
    pub header: Duration,
    /// Between requests, for the next one's first byte.
    pub idle: Duration,
}

/// Where a connection is.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a request's first byte since the end of the last response.
    Idle(Instant),
    /// Reading a request's head since its first byte (or since the connection started).
    Head(Instant),
    /// This many requests being handled or answered.
    Busy(usize),
}

impl Phase {
    /// When this phase passes a limit (`None` while busy).
    fn deadline(self, limits: Limits) -> Option<Instant> {
        match self {
            Phase::Idle(since) => Some(since + limits.idle),
            Phase::Head(since) => Some(since + limits.header),
            Phase::Busy(_) => None,
        }
    }
}

/// What the connection's one waiter ([`Phases::expired`] or [`Phases::quiet`]) needs to be told.
#[derive(Debug, Clone, Copy)]
enum Waiter {
    /// Nobody waits.
    Nobody,
    /// `expired` sleeps until this instant and then reads the phase again: only a phase whose deadline
    /// (under these limits) comes sooner needs telling.
    Until(Instant, Limits),
    /// Any change (`expired` while requests are in flight; `quiet`).
    AnyChange,
}

#[derive(Debug)]
struct State {
    phase: Phase,
    waiter: Waiter,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Notify,
}

/// One connection's phase, shared by its stream, its service and its watchdog.
#[derive(Debug, Clone)]
pub struct Phases(Arc<Shared>);

impl Phases {
    /// A new connection: its first request's head is due within the header timeout.
    pub fn new() -> Phases {
        Phases(Arc::new(Shared {
            state: Mutex::new(State {
                phase: Phase::Head(Instant::now()),
                waiter: Waiter::Nobody,
            }),
            changed: Notify::new(),
        }))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn phase(&self) -> Phase {
        self.state().phase
    }

    fn set(&self, f: impl FnOnce(Phase) -> Phase) {
        let mut state = self.state();
        state.phase = f(state.phase);
        Self::tell_if_sooner(state, &self.0.changed);
    }

    /// Wakes the waiter if the phase just set concerns it (see [`Waiter`]); takes the lock to drop it
    /// before notifying.
    fn tell_if_sooner(state: std::sync::MutexGuard<'_, State>, changed: &Notify) {
        let tell = match state.waiter {
            Waiter::Nobody => false,
            Waiter::AnyChange => true,
            Waiter::Until(at, limits) => state.phase.deadline(limits).is_some_and(|d| d < at),
        };
        drop(state);
        if tell {
            changed.notify_one();
        }
    }

    /// Bytes arrived: on an idle connection, the next request has begun.
    fn read(&self) {
        let mut state = self.state();
        if matches!(state.phase, Phase::Idle(_)) {
            state.phase = Phase::Head(Instant::now());
            Self::tell_if_sooner(state, &self.0.changed);
        }
    }

    /// Whether a request's head is being read: its first byte arrived (or the connection is new) and
    /// no request was handed to the service since. A response written now is hyper's own answer to a
    /// head it could not parse.
    pub fn reading_head(&self) -> bool {
        matches!(self.phase(), Phase::Head(_))
    }

    /// A request's head was read: no limit until its response is written (the guard's drop).
    pub fn request(&self) -> InFlight {
        self.set(|p| match p {
            Phase::Busy(n) => Phase::Busy(n + 1),
            _ => Phase::Busy(1),
        });
        InFlight(self.clone())
    }

    /// Resolves once the connection passed a limit: idle too long, or a head too slow.
    pub async fn expired(&self, limits: Limits) {
        loop {
            let changed = self.0.changed.notified();
            let deadline = {
                let mut state = self.state();
                let deadline = state.phase.deadline(limits);
                state.waiter = match deadline {
                    Some(at) => Waiter::Until(at, limits),
                    None => Waiter::AnyChange,
                };
                deadline
            };
            match deadline {
                Some(deadline) if deadline <= Instant::now() => {
                    self.state().waiter = Waiter::Nobody;
                    return;
                }
                Some(deadline) => {
                    tokio::select! {
                        _ = changed => {}
                        _ = tokio::time::sleep_until(deadline) => {}
                    }
                }
                None => changed.await,
            }
        }
    }
}

impl Phases {
    /// Resolves once no request has been in flight for `linger` (a request starting meanwhile restarts
    /// the wait): at shutdown, the time an HTTP/2 connection gets to flush its last responses and to let
    /// the client answer the GOAWAY, before the server closes it.
    pub async fn quiet(&self, linger: Duration) {
        loop {
            let changed = self.0.changed.notified();
            let busy = {
                let mut state = self.state();
                state.waiter = Waiter::AnyChange;
                matches!(state.phase, Phase::Busy(_))
            };
            if busy {
                changed.await;
                continue;
            }
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep(linger) => {
                    let mut state = self.state();
                    if !matches!(state.phase, Phase::Busy(_)) {
                        state.waiter = Waiter::Nobody;
                        return;
                    }
                }
            }
        }
    }
}

impl Default for Phases {
    fn default() -> Phases {
        Phases::new()
    }
}

/// A request being handled; dropped with its response body, after the last byte was written.
#[derive(Debug)]
pub struct InFlight(Phases);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.set(|p| match p {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle(Instant::now()),
        });
    }
}

/// A response body that keeps its request in flight until hyper has written (or given up) it.
pub struct Answering<B> {
    body: B,
    _request: InFlight,
}

impl<B> Answering<B> {
    /// `body`, keeping `request` in flight until it is dropped.
    pub fn new(body: B, request: InFlight) -> Answering<B> {
        Answering {
            body,
            _request: request,
        }
    }
}

impl<B: http_body::Body<Data = Bytes> + Unpin> http_body::Body for Answering<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's stream that tells its [`Phases`] when bytes arrive.
pub struct Watched<S> {
    stream: S,
    phases: Phases,
}

impl<S> Watched<S> {
    /// `stream`, reporting the bytes it reads to `phases`.
    pub fn new(stream: S, phases: Phases) -> Watched<S> {
        Watched { stream, phases }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.phases.read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        header: Duration::from_millis(300),
        idle: Duration::from_millis(900),
    };

    #[tokio::test]
    async fn an_idle_connection_waits_the_idle_timeout_and_a_head_the_header_timeout() {
        let phases = Phases::new();
        drop(phases.request());
        let started = Instant::now();
        // Idle longer than the header timeout; then a request's first byte starts the header clock.
        tokio::time::sleep(Duration::from_millis(600)).await;
        phases.read();
        phases.expired(LIMITS).await;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(900) && waited < Duration::from_millis(1500),
            "{waited:?}"
        );
        // Nothing arriving: closed after the idle timeout.
        let idle = Phases::new();
        drop(idle.request());
        let started = Instant::now();
        idle.expired(LIMITS).await;
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(900) && waited < Duration::from_millis(1500),
            "{waited:?}"
        );
    }

    #[tokio::test]
    async fn quiet_waits_for_the_requests_in_flight_then_the_linger() {
        let phases = Phases::new();
        let answering = phases.request();
        let linger = Duration::from_millis(200);
        let started = Instant::now();
        let waiting = tokio::spawn({
            let phases = phases.clone();
            async move { phases.quiet(linger).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!waiting.is_finished(), "a request is in flight");
        drop(answering);
        waiting.await.expect("quiet");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(500) && waited < Duration::from_millis(1200),
            "{waited:?}"
        );
        // Bytes arriving (a ping, the client's GOAWAY) do not count as a request.
        let started = Instant::now();
        phases.read();
        phases.quiet(linger).await;
        assert!(started.elapsed() < Duration::from_millis(800));
    }

    #[tokio::test]
    async fn a_head_after_an_idle_spell_is_timed_from_its_first_byte() {
        let phases = Phases::new();
        drop(phases.request());
        let started = Instant::now();
        let watchdog = tokio::spawn({
            let phases = phases.clone();
            async move { phases.expired(LIMITS).await }
        });
        // The watchdog sleeps until the idle deadline (900 ms); a head begun at 200 ms ends at 500 ms.
        tokio::time::sleep(Duration::from_millis(200)).await;
        phases.read();
        watchdog.await.expect("watchdog");
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(500) && waited < Duration::from_millis(850),
            "{waited:?}"
        );
    }

    /// Counts the wake-ups of the task that polls with it.
    struct Wakes(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[tokio::test]
    async fn keep_alive_requests_do_not_wake_the_watchdog() {
        let phases = Phases::new();
        let wakes = Arc::new(Wakes(std::sync::atomic::AtomicUsize::new(0)));
        let waker = std::task::Waker::from(wakes.clone());
        let mut cx = Context::from_waker(&waker);
        let mut watchdog = std::pin::pin!(phases.expired(LIMITS));
        assert!(watchdog.as_mut().poll(&mut cx).is_pending());
        for _ in 0..100 {
            let answering = phases.request();
            drop(answering);
            phases.read();
        }
        assert_eq!(
            wakes.0.load(std::sync::atomic::Ordering::Relaxed),
            0,
            "each head's deadline comes after the one the watchdog sleeps until"
        );
        // It still closes the connection on time: 300 ms after the last head began.
        let started = Instant::now();
        watchdog.await;
        assert!(started.elapsed() < Duration::from_millis(600));
    }

    #[tokio::test]
    async fn no_limit_while_a_response_is_written() {
        let phases = Phases::new();
        let answering = phases.request();
        let cut = tokio::time::timeout(Duration::from_millis(1500), phases.expired(LIMITS)).await;
        assert!(cut.is_err(), "a long response is not cut");
        drop(answering);
        let started = Instant::now();
        phases.expired(LIMITS).await;
        assert!(started.elapsed() >= Duration::from_millis(900));
    }
}
