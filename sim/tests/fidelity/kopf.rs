//! kopf, the Python operator framework, through the cycle its users rely on: a real kopf operator
//! (`kopf_operator.py`, run with `kopf.run`, standalone) on a CRD the test creates — its create
//! handler runs, patches the object and posts an Event, its finalizer is added, its update handler
//! runs on a spec change and writes status, and a delete waits for its delete handler, after which kopf removes the
//! finalizer and the object is gone. Asserted through kubectl and kopf's own output. Fails (does not
//! skip) without kopf: `.ci/run` installs it.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{self, Kubectl, json_of};
use serde_json::Value;

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.piceli.dev}
spec:
  group: piceli.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
";

const WIDGET: &str = "apiVersion: piceli.dev/v1
kind: Widget
metadata: {name: w1}
spec: {size: 1}
";

/// kopf's finalizer (`settings.persistence.finalizer`'s default).
const FINALIZER: &str = "kopf.zalando.org/KopfFinalizerMarker";

/// The operator process, killed (by its PID) when dropped; its stdout and stderr as they arrive.
struct Operator {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

fn drain(mut from: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let sink = Arc::new(Mutex::new(String::new()));
    let into = sink.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            into.lock()
                .expect("output")
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    sink
}

impl Operator {
    fn start(kubeconfig: &std::path::Path, home: &std::path::Path) -> Operator {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fidelity/kopf_operator.py"
        );
        let mut child = Command::new("python3")
            .arg(script)
            .arg(kubeconfig)
            .env_remove("KUBECONFIG")
            // Nothing of the user's: no ~/.kube/config for any fallback to find.
            .env("HOME", home)
            .env("PYTHONUNBUFFERED", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("python3 is required for this test and could not be run: {e}")
            });
        let stdout = drain(child.stdout.take().expect("stdout"));
        let stderr = drain(child.stderr.take().expect("stderr"));
        Operator {
            child,
            stdout,
            stderr,
        }
    }

    fn output(&self) -> (String, String) {
        (
            self.stdout.lock().expect("stdout").clone(),
            self.stderr.lock().expect("stderr").clone(),
        )
    }

    /// Waits (up to 30 s) until `ready(stdout, stderr)` holds, failing at once if the operator exits.
    fn wait(&mut self, what: &str, mut ready: impl FnMut(&str, &str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let (out, err) = self.output();
            if ready(&out, &err) {
                return;
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(200));
                let (out, err) = self.output();
                panic!(
                    "the kopf operator exited ({status}) before {what} (it needs `pip install kopf kubernetes`):\n{out}\n{err}"
                );
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}:\n--- stdout\n{out}\n--- stderr\n{err}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn widget(k: &Kubectl) -> Value {
    json_of(&k.ok(&["get", "widget", "w1", "-o", "json"]))
}

#[test]
fn a_kopf_operator_creates_updates_and_finalizes_a_custom_resource() {
    let sim = common::sim();
    let k = Kubectl::new(&sim);
    k.ok(&["apply", "-f", &k.file("crd.yaml", CRD)]);
    common::eventually("the Widget type served", 10, || {
        (k.run(&["get", "widgets"]).code == 0).then_some(())
    });
    let home = tempfile::tempdir().expect("home");
    let mut op = Operator::start(sim.kubeconfig_path(), home.path());

    // Create: the handler runs, patches an annotation, kopf stores its result and adds its finalizer.
    k.ok(&["apply", "-f", &k.file("w1.yaml", WIDGET)]);
    op.wait("the create handler", |out, _| {
        out.contains("create w1 size=1")
    });
    let mut w = Value::Null;
    op.wait("kopf's create outcome on the Widget", |_, _| {
        w = widget(&k);
        w["metadata"]["annotations"]["piceli.dev/created-size"] == "1"
            && w["status"]["on_create"]["size"] == 1
            && w["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f == FINALIZER))
    });
    // kopf remembers what it handled (its last-handled-configuration annotation).
    assert!(
        w["metadata"]["annotations"]["kopf.zalando.org/last-handled-configuration"].is_string(),
        "{w}"
    );

    // Update of spec.size: the update handler runs and writes status.
    k.ok(&[
        "patch",
        "widget",
        "w1",
        "--type=merge",
        "-p",
        r#"{"spec":{"size":2}}"#,
    ]);
    op.wait("the update handler", |out, _| {
        out.contains("update w1 1->2")
    });
    op.wait("the update handler's status", |_, _| {
        widget(&k)["status"]["resized"] == "1->2"
    });

    // Delete: kubectl waits while kopf's finalizer holds the Widget, kopf's delete handler runs,
    // kopf removes its finalizer, and the Widget is gone.
    let deleted = k.run(&["delete", "widget", "w1", "--timeout=30s"]);
    let (out, err) = op.output();
    assert_eq!(
        deleted.code, 0,
        "{deleted:?}\n--- kopf stdout\n{out}\n--- kopf stderr\n{err}"
    );
    assert!(out.contains("delete w1"), "{out}\n{err}");
    let gone = k.run(&["get", "widget", "w1"]);
    assert!(gone.stderr.contains("NotFound"), "{gone:?}");

    // kopf's own account: every handler succeeded, nothing it patched came back different.
    op.wait("kopf's deletion log", |_, err| {
        err.contains("Deletion is processed")
    });
    let (out, err) = op.output();
    for line in [
        "Handler 'on_create' succeeded.",
        "Creation is processed: 1 succeeded; 0 failed.",
        "Handler 'on_update/spec.size' succeeded.",
        "Updating is processed: 1 succeeded; 0 failed.",
        "Handler 'on_delete' succeeded.",
        "Deletion is processed: 1 succeeded; 0 failed.",
    ] {
        assert!(
            err.contains(line),
            "kopf did not log {line:?}:\n{out}\n{err}"
        );
    }
    for bad in ["inconsistencies", "Traceback", " ERROR "] {
        assert!(!err.contains(bad), "kopf logged {bad:?}:\n{err}");
    }
    // The Event the create handler posted (`kopf.info`), on the Widget.
    let event = common::eventually("kopf's Event", 10, || {
        let events = json_of(&k.ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=w1,reason=Created",
            "-o",
            "json",
        ]));
        events["items"].get(0).cloned()
    });
    let events = &event;
    assert_eq!(event["message"], "size 1", "{events}");
    assert_eq!(event["type"], "Normal", "{events}");
    assert_eq!(event["involvedObject"]["kind"], "Widget", "{events}");
    assert_eq!(event["source"]["component"], "kopf", "{events}");
}
