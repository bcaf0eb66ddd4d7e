//! Exec and logs of simulated pods with the real kubectl and kube 5: registered exec handlers and
//! their exit codes, stdin, the built-in commands, the real server's errors; container logs with
//! their parameters, `kubectl logs -f` and kube's `logs`/`log_stream`.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Kubectl, Watching, eventually, json_of};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, LogParams};
use piceli_sim::hooks::{ExecOutput, ExecRequest};

const APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: shop}
spec:
  replicas: 1
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - name: api
        image: shop:1.0
        env: [{name: MODE, value: simulated}, {name: FROM_SECRET, valueFrom: {secretKeyRef: {name: s, key: k}}}]
      - name: side
        image: busybox:1.36
";

/// A live simulator with the `shop` Deployment rolled out; returns the pod's name.
fn rolled_out(k: &Kubectl) -> String {
    let f = k.file("shop.yaml", APP);
    k.ok(&["apply", "-f", &f]);
    k.ok(&["rollout", "status", "deploy/shop", "--timeout=30s"]);
    let pods = json_of(&k.ok(&["get", "pods", "-l", "app=shop", "-o", "json"]));
    pods["items"][0]["metadata"]["name"]
        .as_str()
        .expect("a shop pod")
        .to_string()
}

#[test]
fn kubectl_exec_runs_the_registered_handler_with_its_exit_code() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pod = rolled_out(&k);
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    sim.on_exec_command(
        "default",
        "app=shop",
        &["migrate"],
        move |r: &ExecRequest| {
            seen.fetch_add(1, Ordering::SeqCst);
            let code = if r.command.iter().any(|a| a == "--fail") {
                3
            } else {
                0
            };
            ExecOutput::new(
                format!(
                    "migrated {} in {}/{}\n",
                    r.command[1..].join(" "),
                    r.pod,
                    r.container
                ),
                "some warning\n",
                code,
            )
        },
    )
    .expect("register");

    let ok = k.run(&["exec", "deploy/shop", "-c", "api", "--", "migrate", "up"]);
    assert_eq!(ok.code, 0, "{ok:?}");
    assert_eq!(ok.stdout, format!("migrated up in {pod}/api\n"));
    assert!(ok.stderr.contains("some warning"), "{ok:?}");

    let failed = k.run(&["exec", &pod, "-c", "api", "--", "migrate", "--fail"]);
    assert_eq!(
        failed.code, 3,
        "kubectl exits with the command's code: {failed:?}"
    );
    assert_eq!(failed.stdout, format!("migrated --fail in {pod}/api\n"));
    assert!(failed.stderr.contains("exit code 3"), "{failed:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // Other commands still reach the built-ins; other namespaces or labels do not match.
    let echo = k.run(&["exec", &pod, "-c", "api", "--", "echo", "hi", "there"]);
    assert_eq!((echo.code, echo.stdout.as_str()), (0, "hi there\n"));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[test]
fn kubectl_exec_built_ins_stdin_and_errors() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pod = rolled_out(&k);
    let exec = |args: &[&str]| {
        let mut all = vec!["exec", pod.as_str(), "-c", "api", "--"];
        all.extend_from_slice(args);
        k.run(&all)
    };
    let cat = k.run_stdin(
        &["exec", "-i", &pod, "-c", "api", "--", "cat"],
        Some("line one\nline two\n"),
    );
    assert_eq!(
        (cat.code, cat.stdout.as_str()),
        (0, "line one\nline two\n"),
        "{cat:?}"
    );
    assert_eq!(exec(&["hostname"]).stdout, format!("{pod}\n"));
    let env = exec(&["env"]).stdout;
    assert!(env.contains("MODE=simulated\n"), "{env}");
    assert!(!env.contains("FROM_SECRET"), "{env}");
    assert_eq!(exec(&["true"]).code, 0);
    assert_eq!(exec(&["false"]).code, 1);
    assert_eq!(exec(&["sh", "-c", "exit 42"]).code, 42);
    let missing = exec(&["no-such-tool", "--version"]);
    assert_eq!(missing.code, 127, "{missing:?}");
    assert!(missing.stderr.contains("no-such-tool"), "{missing:?}");

    let bad_container = k.run(&["exec", &pod, "-c", "nope", "--", "true"]);
    assert_ne!(bad_container.code, 0);
    assert!(bad_container.stderr.contains("nope"), "{bad_container:?}");
    let no_pod = k.run(&["exec", "ghost", "--", "true"]);
    assert_ne!(no_pod.code, 0);
    assert!(no_pod.stderr.contains("\"ghost\" not found"), "{no_pod:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_exec_reports_stdout_and_the_exit_status() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pod = tokio::task::block_in_place(|| rolled_out(&k));
    // Registered for every command of other pods: never reached here.
    sim.on_exec("", "app=other", |_: &ExecRequest| {
        ExecOutput::fail(99, "wrong pod")
    })
    .expect("register");
    sim.on_exec_command("default", "app=shop", &["check"], |r: &ExecRequest| {
        let code = r.command.last().and_then(|c| c.parse().ok()).unwrap_or(0);
        ExecOutput::new(format!("{}\n", r.command.join(" ")), "", code)
    })
    .expect("register");
    let pods: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    let params = AttachParams::default().container("api").stderr(true);

    for (code, status) in [(0, "Success"), (7, "Failure")] {
        let arg = code.to_string();
        let mut proc = pods
            .exec(&pod, ["check", arg.as_str()], &params)
            .await
            .expect("exec");
        let mut out = String::new();
        let mut stdout = proc.stdout().expect("stdout");
        tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut out)
            .await
            .expect("read stdout");
        let st = proc.take_status().expect("status").await.expect("a status");
        proc.join().await.expect("session ends");
        assert_eq!(out, format!("check {code}\n"));
        assert_eq!(st.status.as_deref(), Some(status));
        if code != 0 {
            assert_eq!(st.reason.as_deref(), Some("NonZeroExitCode"));
            let causes = st.details.and_then(|d| d.causes).unwrap_or_default();
            assert_eq!(causes[0].reason.as_deref(), Some("ExitCode"));
            assert_eq!(causes[0].message.as_deref(), Some("7"));
        }
    }
    // stdin through kube: the built-in sh runs the script it reads once stdin is closed.
    let mut cat = pods
        .exec(
            &pod,
            ["sh"],
            &AttachParams::default().container("api").stdin(true),
        )
        .await
        .expect("exec sh");
    let mut stdin = cat.stdin().expect("stdin");
    tokio::io::AsyncWriteExt::write_all(&mut stdin, b"echo from-script; exit 5\n")
        .await
        .expect("write");
    tokio::io::AsyncWriteExt::shutdown(&mut stdin)
        .await
        .expect("close stdin");
    let mut out = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut cat.stdout().expect("stdout"), &mut out)
        .await
        .expect("read");
    assert_eq!(out, "from-script\n");
    let st = cat.take_status().expect("status").await.expect("a status");
    assert_eq!(st.status.as_deref(), Some("Failure"));

    let err = pods
        .exec(&pod, ["true"], &AttachParams::default().container("nope"))
        .await
        .err()
        .expect("an unknown container is refused");
    assert!(
        format!("{err:?}").contains("is not valid for pod"),
        "{err:?}"
    );
}

#[test]
fn kubectl_logs_show_the_container_lifecycle_and_added_lines() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pod = rolled_out(&k);
    sim.append_log("default", &pod, "api", "listening on :8080\nserving")
        .expect("append");
    let logs = k.ok(&["logs", &pod, "-c", "api"]);
    let lines: Vec<&str> = logs.lines().collect();
    assert!(
        lines[0].contains("container api started (image shop:1.0)"),
        "{logs}"
    );
    assert!(lines.contains(&"listening on :8080"), "{logs}");
    assert_eq!(lines.last(), Some(&"serving"), "{logs}");

    let via_deploy = k.ok(&["logs", "deploy/shop", "-c", "api"]);
    assert_eq!(via_deploy, logs);
    let tail = k.ok(&["logs", &pod, "-c", "api", "--tail=1", "--timestamps"]);
    assert_eq!(tail.lines().count(), 1, "{tail}");
    assert!(
        tail.starts_with("20") && tail.trim_end().ends_with(" serving"),
        "{tail}"
    );
    let limited = k.ok(&["logs", &pod, "-c", "api", "--limit-bytes=5"]);
    assert_eq!(limited.len(), 5);
    let side = k.ok(&["logs", &pod, "-c", "side"]);
    assert!(
        side.contains("container side started") && !side.contains("serving"),
        "{side}"
    );

    let previous = k.run(&["logs", &pod, "-c", "api", "--previous"]);
    assert_ne!(previous.code, 0);
    assert!(
        previous.stderr.contains("previous terminated container"),
        "{previous:?}"
    );
    let unnamed = k.run(&["logs", "pod/ghost"]);
    assert!(
        unnamed.stderr.contains("\"ghost\" not found"),
        "{unnamed:?}"
    );
}

#[test]
fn kubectl_logs_follow_streams_new_lines_until_the_pod_goes() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pod = rolled_out(&k);
    let follow = Watching::start(&k, &["logs", "-f", &pod, "-c", "api"]);
    follow.wait_for("the start line", |l| l.contains("started"));
    sim.append_log("default", &pod, "api", "request 1")
        .expect("append");
    follow.wait_for("an added line", |l| l == "request 1");
    sim.append_log("default", &pod, "api", "request 2")
        .expect("append");
    follow.wait_for("a second added line", |l| l == "request 2");
    let printed = follow.stop();
    assert_eq!(
        printed.iter().filter(|l| l.starts_with("request")).count(),
        2
    );

    // Attach shows the container's output as it comes.
    let attached = Watching::start(&k, &["attach", &pod, "-c", "api"]);
    attached.wait_for("the earlier lines", |l| l == "request 2");
    sim.append_log("default", &pod, "api", "request 3")
        .expect("append");
    attached.wait_for("a new line", |l| l == "request 3");
    attached.stop();
}

#[test]
fn crash_looping_containers_have_previous_logs() {
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let f = k.file(
        "p.yaml",
        "apiVersion: v1
kind: Pod
metadata: {name: crashy, annotations: {sim.piceli.dev/behavior: crash-loop}}
spec:
  containers: [{name: app, image: busybox:1.36}]
",
    );
    k.ok(&["apply", "-f", &f]);
    eventually("a restart", 20, || {
        let p = json_of(&k.ok(&["get", "pod/crashy", "-o", "json"]));
        (p["status"]["containerStatuses"][0]["restartCount"].as_i64() >= Some(1)).then_some(())
    });
    let current = k.ok(&["logs", "crashy"]);
    assert!(current.contains("crashed with exit code 1"), "{current}");
    let previous = k.ok(&["logs", "crashy", "--previous"]);
    assert!(previous.contains("exited with code 1"), "{previous}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_logs_and_log_stream() {
    use futures::{AsyncBufReadExt, TryStreamExt};
    let sim = common::live_sim();
    let k = Kubectl::new(&sim);
    let pod = tokio::task::block_in_place(|| rolled_out(&k));
    sim.append_log("default", &pod, "api", "hello from the test")
        .expect("append");
    let pods: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    let params = LogParams {
        container: Some("api".into()),
        ..LogParams::default()
    };
    let text = pods.logs(&pod, &params).await.expect("logs");
    assert!(text.contains("hello from the test\n"), "{text}");

    let follow = LogParams {
        follow: true,
        tail_lines: Some(1),
        ..params.clone()
    };
    let mut lines = pods
        .log_stream(&pod, &follow)
        .await
        .expect("stream")
        .lines();
    let first = lines.try_next().await.expect("read").expect("a line");
    assert_eq!(first, "hello from the test");
    sim.append_log("default", &pod, "api", "later")
        .expect("append");
    let next = tokio::time::timeout(Duration::from_secs(10), lines.try_next())
        .await
        .expect("in time")
        .expect("read");
    assert_eq!(next.as_deref(), Some("later"));
    // Deleting the pod ends the stream.
    pods.delete(&pod, &Default::default())
        .await
        .expect("delete");
    let end = tokio::time::timeout(Duration::from_secs(10), async {
        while lines.try_next().await.ok().flatten().is_some() {}
    })
    .await;
    assert!(end.is_ok(), "the follow stream ends with the pod");

    let err = pods.logs(&pod, &params).await.expect_err("the pod is gone");
    assert!(format!("{err:?}").contains("not found"), "{err:?}");
}
