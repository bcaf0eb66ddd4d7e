//! Helpers shared by the integration tests: starting a simulator and running the real kubectl
//! against it with an isolated cache and an explicit kubeconfig.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use k8s_openapi::api::core::v1::ConfigMap;
use piceli_sim::{RunningSim, Sim, SimConfig};
use serde_json::{Value, json};

/// An in-memory simulator on a free port, as a plain API server: its controllers are off, so
/// the objects a test writes change only when the test changes them.
pub fn sim() -> RunningSim {
    let mut config = SimConfig::default();
    config.controllers.enabled = false;
    Sim::start(config).expect("simulator starts")
}

/// An in-memory simulator with its controllers running (the default configuration).
pub fn live_sim() -> RunningSim {
    Sim::start(SimConfig::default()).expect("simulator starts")
}

/// The result of one kubectl run.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs the real kubectl against one simulator: its own KUBECACHEDIR, `--kubeconfig` to the
/// simulator's file, KUBECONFIG cleared. Fails the test when kubectl is missing.
pub struct Kubectl {
    kubeconfig: PathBuf,

    cache: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Kubectl {
    pub fn new(sim: &RunningSim) -> Kubectl {
        Kubectl {
            kubeconfig: sim.kubeconfig_path().to_path_buf(),

            cache: tempfile::tempdir().expect("cache dir"),
            work: tempfile::tempdir().expect("work dir"),
        }
    }

    /// kubectl with the simulator's kubeconfig minus its token: anonymous requests. (A kubeconfig
    /// user with nothing at all makes kubectl prompt for a password; a username and password make it
    /// send only an `Authorization: Basic` header, which kube-apiserver 1.33 no longer
    /// authenticates, so the request is anonymous.)
    pub fn anonymous(sim: &RunningSim) -> Kubectl {
        let k = Kubectl::new(sim);
        let yaml: String = sim
            .kubeconfig_yaml()
            .lines()
            .filter(|l| !l.trim_start().starts_with("token:"))
            .map(|l| {
                if l.trim() == "user:" {
                    "  user: {username: nobody, password: none}".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let path = k.work.path().join("anonymous.kubeconfig");
        std::fs::write(&path, yaml).expect("write kubeconfig");
        Kubectl {
            kubeconfig: path,

            ..k
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.arg("--kubeconfig").arg(&self.kubeconfig);
        c.args(args);
        c.env_remove("KUBECONFIG");
        c.env("KUBECACHEDIR", self.cache.path());
        c.current_dir(self.work.path());
        c
    }

    /// Writes a manifest into the work directory and returns its file name.
    pub fn file(&self, name: &str, contents: &str) -> String {
        std::fs::write(self.work.path().join(name), contents).expect("write manifest");
        name.to_string()
    }

    pub fn run(&self, args: &[&str]) -> Out {
        self.run_stdin(args, None)
    }

    pub fn run_stdin(&self, args: &[&str], stdin: Option<&str>) -> Out {
        let mut cmd = self.command(args);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => panic!("kubectl is required for these tests and could not be run: {e}"),
        };
        if let Some(input) = stdin {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        } else {
            drop(child.stdin.take());
        }
        let out = child.wait_with_output().expect("kubectl runs");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Runs and asserts success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.code, 0,
            "kubectl {args:?} failed: {}{}",
            out.stdout, out.stderr
        );
        out.stdout
    }

    /// Starts a long-running kubectl (e.g. `get -w`) writing to pipes.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.spawn_env(args, &[])
    }

    /// As [`Kubectl::spawn`], with extra environment variables.
    pub fn spawn_env(&self, args: &[&str], env: &[(&str, &str)]) -> Child {
        let mut cmd = self.command(args);
        cmd.envs(env.iter().copied());
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match cmd.spawn() {
            Ok(c) => c,
            Err(e) => panic!("kubectl is required for these tests and could not be run: {e}"),
        }
    }
}

/// A running `kubectl ... -w` whose output lines are collected as they arrive.
pub struct Watching {
    child: Child,
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Watching {
    pub fn start(k: &Kubectl, args: &[&str]) -> Watching {
        let mut child = k.spawn(args);
        let stdout = child.stdout.take().expect("stdout");
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = lines.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                sink.lock().expect("lines").push(line);
            }
        });
        Watching { child, lines }
    }

    /// Waits (up to 20 s) until some printed line satisfies `pred`.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) {
        self.wait_count(what, pred, 1);
    }

    /// Waits (up to 20 s) until `n` printed lines satisfy `pred`.
    pub fn wait_count(&self, what: &str, pred: impl Fn(&str) -> bool, n: usize) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if self
                .lines
                .lock()
                .expect("lines")
                .iter()
                .filter(|l| pred(l))
                .count()
                >= n
            {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!(
            "kubectl never printed {what}; got {:?}",
            self.lines.lock().expect("lines")
        );
    }

    /// Stops kubectl and returns everything it printed on stdout.
    pub fn stop(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.lines.lock().expect("lines").clone()
    }
}

pub const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
      - name: side
        image: busybox:1.36
";

/// Parses kubectl's JSON output.
pub fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("kubectl printed invalid JSON ({e}): {s}"))
}

pub fn cm(name: &str, data: serde_json::Value) -> ConfigMap {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}),
    )
    .expect("configmap")
}

pub fn api_error(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Polls `f` every 50 ms until it returns `Some`, failing after `secs` seconds.
pub fn eventually<T>(what: &str, secs: u64, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The items of `kubectl get WHAT -o json`.
pub fn items(k: &Kubectl, what: &str) -> Vec<Value> {
    json_of(&k.ok(&["get", what, "-o", "json"]))["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Runs `sim/tests/fidelity/SCRIPT KUBECONFIG ARGS…` with the official Python client (no `KUBECONFIG` from
/// the environment) and returns its stdout; fails, naming `what`, when python3 is missing or the script
/// fails (it needs `pip install kubernetes`, which `.ci/run` does).
pub fn python_client(sim: &RunningSim, script: &str, args: &[&str], what: &str) -> String {
    let path = format!("{}/tests/fidelity/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(path)
        .arg(sim.kubeconfig_path())
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap_or_else(|e| panic!("python3 is required for this test and could not be run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed (it needs `pip install kubernetes`):\n{stdout}{stderr}"
    );
    stdout
}
