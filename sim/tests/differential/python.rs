//! The official Python client as a runner: one `python_driver.py` process per target, fed one
//! operation per line, answering one JSON line each (bounded by a timeout).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::differential::run::Answer;
use crate::differential::target::Target;

/// How long one Python operation may take (a watch in it is bounded by its own timeout first).
const OP_TIMEOUT: Duration = Duration::from_secs(40);

/// A running driver.
pub struct Driver {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    dead: bool,
}

impl Driver {
    /// Starts the driver against `target`'s admin kubeconfig; fails the test when python3 or the
    /// `kubernetes` package is missing (`pip install kubernetes==33.1.0`, as `.ci/run` does).
    pub fn start(target: &Target) -> Driver {
        let (kubeconfig, context) = target.admin_kubeconfig();
        let script = format!(
            "{}/tests/differential/python_driver.py",
            env!("CARGO_MANIFEST_DIR")
        );
        let mut child = Command::new("python3")
            .arg(script)
            .arg(kubeconfig)
            .arg(context)
            .env_remove("KUBECONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("python3 is required for the differential suite: {e}"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut d = Driver {
            child,
            stdin,
            lines: rx,
            dead: false,
        };
        let ready = d.lines.recv_timeout(OP_TIMEOUT).unwrap_or_default();
        if ready != "ready" {
            let _ = d.child.kill();
            let mut err = String::new();
            if let Some(mut e) = d.child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!(
                "the Python driver did not start (it needs `pip install kubernetes==33.1.0`): {ready}{err}"
            );
        }
        d
    }

    /// Runs one operation.
    pub fn call(&mut self, op: &str, args: &Value) -> Answer {
        if self.dead {
            return Answer {
                code: -3,
                out: String::new(),
                err: "the Python driver is gone".into(),
            };
        }
        let line = json!({"op": op, "args": args}).to_string();
        if writeln!(self.stdin, "{line}").is_err() || self.stdin.flush().is_err() {
            self.dead = true;
            return self.call(op, args);
        }
        match self.lines.recv_timeout(OP_TIMEOUT) {
            Ok(reply) => {
                let v: Value = serde_json::from_str(&reply).unwrap_or(json!({"raw": reply}));
                Answer {
                    code: v["code"].as_i64().unwrap_or(-1),
                    out: v["out"].to_string(),
                    err: v["err"].as_str().unwrap_or_default().to_string(),
                }
            }
            Err(_) => {
                self.dead = true;
                let _ = self.child.kill();
                Answer {
                    code: -2,
                    out: String::new(),
                    err: "timed out".into(),
                }
            }
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
