//! Processes and ports the end-to-end tests start: a free loopback port, a child stopped with SIGTERM
//! (as a kubelet stops a container) and bounded in time, and polling until something holds.

use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// A loopback port nothing listens on now.
pub fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("its address")
}

/// Sends SIGTERM to `child` and waits at most 30 s for it to exit (then kills it and fails the test,
/// naming `what`): its exit status (a graceful shutdown exits 0).
pub fn stop(mut child: Child, what: &str) -> ExitStatus {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "SIGTERM could not be sent to {what}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not stop within 30 s of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `check` every 50 ms until it gives a value or `within` passes (then fails, naming `what`).
pub fn wait_for<T>(what: &str, within: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let began = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            began.elapsed() < within,
            "timed out after {within:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// [`wait_for`] a condition: how long it took to hold.
pub fn wait_until(what: &str, within: Duration, mut check: impl FnMut() -> bool) -> Duration {
    let began = Instant::now();
    wait_for(what, within, || check().then_some(()));
    began.elapsed()
}
