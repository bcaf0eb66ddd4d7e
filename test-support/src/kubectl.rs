//! The real kubectl as every end-to-end test runs it: an explicit `--kubeconfig`, `KUBECONFIG` cleared (a
//! test never reads the user's), its own discovery cache (`KUBECACHEDIR`), stdin piped when given. A test
//! fails, never skips, when kubectl cannot run.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What one kubectl run gave: its exit code (-1 when killed by a signal), stdout and stderr.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Ran {
    /// `(code, stdout, stderr)`, the shape the tests compare.
    pub fn parts(self) -> (i32, String, String) {
        (self.code, self.stdout, self.stderr)
    }
}

/// Runs kubectl with `args` against `kubeconfig` in `work` (the current directory when `None`), with
/// `stdin` piped in when given.
pub fn run(kubeconfig: &Path, work: Option<&Path>, args: &[&str], stdin: Option<&str>) -> Ran {
    let cache = tempfile::tempdir().expect("a kubectl cache directory");
    let mut command = Command::new("kubectl");
    command
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .env("KUBECACHEDIR", cache.path())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = work {
        command.current_dir(dir);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl is required for this test and could not be run: {e}"));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .expect("write kubectl's stdin");
    }
    let out = child.wait_with_output().expect("kubectl's output");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// kubectl that must succeed: its stdout (the test fails with both outputs otherwise).
pub fn ok(kubeconfig: &Path, args: &[&str]) -> String {
    let ran = run(kubeconfig, None, args, None);
    assert_eq!(
        ran.code, 0,
        "kubectl {args:?} failed: {}{}",
        ran.stderr, ran.stdout
    );
    ran.stdout
}

/// `kubectl … -o json`, parsed; `None` when kubectl fails (e.g. NotFound) or prints no JSON.
pub fn json(kubeconfig: &Path, args: &[&str]) -> Option<serde_json::Value> {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let ran = run(kubeconfig, None, &all, None);
    (ran.code == 0)
        .then(|| serde_json::from_str(&ran.stdout).ok())
        .flatten()
}
