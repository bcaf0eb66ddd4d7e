//! OTLP export end to end, on the test's cluster (the local one, or the real control plane of
//! `PICELI_REAL_KUBECONFIG`): an app process (this test binary run again as `export::app_process`, so its
//! global subscriber and environment are its own) installs the exporter, starts its logging as `serve`
//! does and runs a controller; the stand-in collector must receive the `reconcile` span of the
//! ConfigMap it reconciled, with its controller and object, under the service name of
//! `OTEL_SERVICE_NAME`, as protobuf at `/v1/traces`. An endpoint that is not a URL is a PCL0232 warning,
//! and the app runs on without export.

use crate::collector::{Collector, attribute};

use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use piceli_runtime::controller::{Action, Context, ControllerOptions, Controllers, RunOptions};
use piceli_runtime::logging::{self, LogFormat};
use piceli_test_support::Cluster;

/// The variables the parent sets for the app process.
const KUBECONFIG_VAR: &str = "PICELI_OTLP_TEST_KUBECONFIG";
const CONTEXT_VAR: &str = "PICELI_OTLP_TEST_CONTEXT";
const OBJECT: &str = "otlp-lamp";

/// Runs the app process with `endpoint` as `OTEL_EXPORTER_OTLP_ENDPOINT`.
fn app_process(cluster: &Cluster, endpoint: &str) -> Output {
    let exe = std::env::current_exe().expect("this test binary");
    let mut child = Command::new(exe)
        .args([
            "export::app_process_runs_a_controller_with_export",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .args(["--test-threads", "1"])
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_SERVICE_NAME", "otlp-shop")
        .env(KUBECONFIG_VAR, cluster.kubeconfig_path())
        .env(CONTEXT_VAR, cluster.context())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the app process");
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the app process did not end within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().expect("its output")
}

#[test]
fn reconcile_spans_reach_the_collector_with_their_controller_and_object() {
    let cluster = Cluster::start();
    let collector = Collector::start();
    let out = app_process(&cluster, &format!("http://{}", collector.addr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the app process failed:\n{stderr}");
    assert!(
        !stderr.contains("PCL0232"),
        "the exporter was set up:\n{stderr}"
    );
    let received = collector.received();
    assert!(!received.is_empty(), "nothing was exported:\n{stderr}");
    for r in &received {
        assert_eq!(r.path, "/v1/traces");
        assert_eq!(r.content_type, "application/x-protobuf");
    }
    let spans = collector.spans();
    let reconcile = spans
        .iter()
        .find(|(_, s)| {
            s.name == "reconcile"
                && attribute(&s.attributes, "object").is_some_and(|o| o.ends_with(OBJECT))
        })
        .unwrap_or_else(|| {
            panic!(
                "no reconcile span of {OBJECT} among {:?}",
                spans.iter().map(|(_, s)| &s.name).collect::<Vec<_>>()
            )
        });
    assert_eq!(
        reconcile.0, "otlp-shop",
        "OTEL_SERVICE_NAME names the service"
    );
    assert_eq!(
        attribute(&reconcile.1.attributes, "controller").as_deref(),
        Some("paint")
    );
    assert_eq!(reconcile.1.trace_id.len(), 16, "a trace id");
    assert!(
        reconcile.1.end_time_unix_nano >= reconcile.1.start_time_unix_nano
            && reconcile.1.start_time_unix_nano > 0,
        "timed"
    );
}

#[test]
fn an_endpoint_that_is_not_a_url_is_a_warning_and_the_app_runs_on() {
    let cluster = Cluster::start();
    let out = app_process(&cluster, "not a url");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the app runs on without export:\n{stderr}"
    );
    let warning = stderr
        .lines()
        .find(|l| l.contains("PCL0232"))
        .unwrap_or_else(|| panic!("a PCL0232 warning:\n{stderr}"));
    let line: serde_json::Value = serde_json::from_str(warning).expect("a JSON log line");
    assert_eq!(line["level"], "WARN");
    assert!(
        line["error"]
            .as_str()
            .is_some_and(|e| e.contains("not a url")),
        "{line}"
    );
}

/// The app process (run by the tests above with their environment; it does nothing useful alone).
#[test]
#[ignore = "the app process of export:: tests, run by them as a child"]
fn app_process_runs_a_controller_with_export() {
    let kubeconfig = std::env::var(KUBECONFIG_VAR).expect("run by the export:: tests");
    let context = std::env::var(CONTEXT_VAR).expect("run by the export:: tests");
    assert!(piceli_otlp::install(), "the exporter registers once");
    let guard = logging::init(LogFormat::Json, "info").expect("logging");
    let bad_endpoint = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").is_ok_and(|e| e == "not a url");
    assert_eq!(guard.exporting(), !bad_endpoint);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(reconcile_one(&kubeconfig, &context));
    drop(runtime);
    // Dropping the guard exports what is still queued.
    drop(guard);
}

async fn reconcile_one(kubeconfig: &str, context: &str) {
    piceli_net::tls::install_default();
    let kc = kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig");
    let options = kube::config::KubeConfigOptions {
        context: Some(context.to_string()),
        ..Default::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kc, &options)
        .await
        .expect("client config");
    let client = kube::Client::try_from(config).expect("client");
    let (seen_tx, seen_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let controllers = Controllers::new("otlp-test").reconcile(
        "paint",
        ControllerOptions::default(),
        move |cm: Arc<ConfigMap>, _cx: Context| {
            let _ = seen_tx.send(cm.name_any());
            async move { Ok::<_, kube::Error>(Action::await_change()) }
        },
    );
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(controllers.run(
        client.clone(),
        RunOptions {
            operator_namespace: "default".into(),
            identity: "otlp-test".into(),
            leader: None,
        },
        async move {
            let _ = stop_rx.await;
        },
    ));
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let _ = api.delete(OBJECT, &DeleteParams::default()).await;
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(OBJECT.into());
    api.create(&PostParams::default(), &cm)
        .await
        .expect("create the ConfigMap");
    let mut seen_rx = seen_rx;
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(name) = seen_rx.recv().await {
            if name == OBJECT {
                return;
            }
        }
    })
    .await
    .expect("the controller reconciles the ConfigMap within 30 s");
    let _ = stop_tx.send(());
    run.await
        .expect("the controllers' task")
        .expect("the controllers stop cleanly");
    let _ = api.delete(OBJECT, &DeleteParams::default()).await;
}
