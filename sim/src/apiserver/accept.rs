//! The accept loop's guard against running out of file descriptors: when `accept` fails with
//! EMFILE/ENFILE, a reserve descriptor (an open `/dev/null`) is given up to accept and close one
//! pending connection, so the listen queue does not keep the loop spinning, and the loop backs off
//! (1 ms doubling to 500 ms) until descriptors are free again — connections that never finish their
//! handshake or headers are closed by their timeouts meanwhile.

use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};

const MIN_BACKOFF: Duration = Duration::from_millis(1);
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// Linux's "too many open files" for the process (EMFILE) and the system (ENFILE).
fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(23 | 24))
}

fn reserve() -> Option<std::fs::File> {
    std::fs::File::open("/dev/null").ok()
}

/// Accepts connections, surviving descriptor exhaustion.
pub struct Acceptor {
    listener: TcpListener,
    reserve: Option<std::fs::File>,
    backoff: Duration,
}

impl Acceptor {
    pub fn new(listener: TcpListener) -> Acceptor {
        Acceptor {
            listener,
            reserve: reserve(),
            backoff: MIN_BACKOFF,
        }
    }

    /// The next accepted connection.
    pub async fn next(&mut self) -> TcpStream {
        loop {
            match self.listener.accept().await {
                Ok((stream, _)) => {
                    self.backoff = MIN_BACKOFF;
                    if self.reserve.is_none() {
                        self.reserve = reserve();
                    }
                    return stream;
                }
                Err(e) if out_of_descriptors(&e) => {
                    if self.reserve.take().is_some() {
                        // One descriptor is free now: take the waiting connection and close it.
                        let shed = tokio::time::timeout(MIN_BACKOFF, self.listener.accept()).await;
                        drop(shed);
                        self.reserve = reserve();
                    }
                    tokio::time::sleep(self.backoff).await;
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                }
                // Other accept errors (a connection reset while queued, ...) concern one client.
                Err(_) => tokio::time::sleep(MIN_BACKOFF).await,
            }
        }
    }
}
