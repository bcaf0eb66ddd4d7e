//! Checks and `deploy` in process, against the local API server: the code checks `app!` registers
//! (`code_checks()`) get a working `CheckContext`, a deploy emits its stages in order and journals the
//! results, and a code check the binary did not register fails with PCL0132 instead of passing.

use piceli::checks::{CheckContext, CheckError};
use piceli::runtime::engine::deploy::{DeployEvent, DeployOptions};
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli_sim::{Sim, SimConfig};

mod app_checks {
    use super::*;

    /// The pod answers through the context's own forward, and the context knows where it runs.
    pub async fn front_page(cx: CheckContext) -> Result<(), CheckError> {
        if cx.namespace() != "inproc" || cx.app().name.v != "inproc" {
            return Err(CheckError::new(format!("wrong context: {cx:?}")));
        }
        let page = cx.http_get("web", "/").await?;
        if page.status != 200 || !page.body.starts_with("web-") {
            return Err(CheckError::new(format!("{} {:?}", page.status, page.body)));
        }
        Ok(())
    }

    /// Fails unless a release is live.
    pub async fn released(cx: CheckContext) -> Result<(), String> {
        cx.release()
            .map(|_| ())
            .ok_or_else(|| "no release is live".to_string())
    }
}

piceli::app! {
    app inproc;
    target local = local(namespace: "inproc");

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 80 },
    }
    service web -> web { port: 80 => http }

    check http(web, "/", expect: 200, retries: 1);
    check front = code(app_checks::front_page, retries: 1);
    check live = code(app_checks::released, retries: 1);
}

#[test]
fn deploy_runs_registered_code_checks_and_journals_them() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let state = tempfile::tempdir().expect("temp dir");
    let opts = SessionOptions {
        connect: ConnectOptions {
            kubeconfig: Some(sim.kubeconfig_path().to_path_buf()),
            context: Some("piceli-sim".into()),
        },
        state_dir: Some(state.path().to_path_buf()),
        wait: Some(std::time::Duration::from_secs(30)),
        wait_lock: None,
        ..SessionOptions::default()
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let code = inproc::code_checks();
        let paths: Vec<&str> = code.iter().map(|c| c.path).collect();
        assert_eq!(paths, ["app_checks::front_page", "app_checks::released"]);

        let mut session = Session::open(inproc::app(), &opts).await.expect("session");
        let first = session
            .deploy(&DeployOptions::default(), &code, |_| {})
            .await
            .expect("plan");
        assert!(first.approval_required);
        let approve = DeployOptions {
            approve: first.hash.clone(),
            resume: false,
            images: None,
        };
        let mut stages = Vec::new();
        let report = session
            .deploy(&approve, &code, |e| {
                let event = serde_json::to_value(e).expect("event");
                let name = match event["event"].as_str().unwrap_or_default() {
                    "stage" => format!(
                        "{}:{}",
                        event["stage"].as_str().unwrap_or_default(),
                        event["outcome"].as_str().unwrap_or_default()
                    ),
                    other => other.to_string(),
                };
                stages.push(name);
                if let DeployEvent::Check {
                    passed, message, ..
                } = e
                {
                    assert!(passed, "{message}");
                }
            })
            .await
            .expect("deploy");
        assert_eq!(
            stages,
            [
                "inputs:skipped",
                "build:skipped",
                "plan",
                "plan:done",
                "approve:done",
                "deliver:skipped",
                "apply",
                "apply:done",
                "ready",
                "ready:done",
                "check",
                "check",
                "check",
                "checks:done"
            ]
        );
        assert_eq!(report.release, Some(1));
        assert!(report.failed().is_empty(), "{:?}", report.checks);
        let journaled = session
            .state()
            .journal
            .last_check_results()
            .expect("results");
        let names: Vec<&str> = journaled.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["http-web", "front", "live"]);

        // Without the registry (a hand-written main), code checks fail loudly.
        let report = session.check(&[], |_| {}).await.expect("check");
        assert_eq!(report.failed(), ["front", "live"]);
        assert!(
            report.checks[1].message.contains("PCL0132"),
            "{:?}",
            report.checks[1]
        );
    });
}
