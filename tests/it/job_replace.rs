//! A `job` whose pod template changes is replaced (in process, against the local API server): the plan
//! says `replace` with the reason, apply deletes the finished Job and creates the new one (a new uid, the
//! new image), a kill between the delete and the create — or after the create — is finished by `resume`,
//! an unchanged Job stays unchanged, a running Job is refused (PCL0221), a Job the app does not own is
//! never deleted, and a CronJob whose image changes is an ordinary update.

use crate::engine_fixture;

use engine_fixture::{Fixture, image};
use piceli::k8s_openapi::api::batch::v1::{CronJob, Job};
use piceli::runtime::Coded;
use piceli::runtime::engine::EngineError;
use piceli::runtime::engine::plan::{ActionKind, Plan};
use piceli::runtime::engine::session::Session;
use piceli::runtime::journal::ReleaseId;
use piceli_sim::{ControllerConfig, SimConfig};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

thread_local! {
    static TAG: RefCell<String> = RefCell::new("a".into());
}

fn job_image() -> String {
    TAG.with(|t| image(&t.borrow()))
}

fn cron_image() -> String {
    TAG.with(|t| image(&format!("cron-{}", t.borrow())))
}

piceli::app! {
    app job-test;
    target local = local(namespace: "jobs");
    job migrate {
        image: (job_image()),
        command: ["/migrate", "up"],
        backoff_limit: 2,
        restart: "Never",
    }
    cron_job report {
        schedule: "30 2 * * *",
        image: (cron_image()),
        command: ["/report"],
    }
}

const NS: &str = "jobs";

async fn session(fx: &Fixture, tag: &str) -> Session {
    TAG.with(|t| *t.borrow_mut() = tag.into());
    Session::open(job_test::app(), &fx.options("state"))
        .await
        .expect("session")
}

fn jobs(fx: &Fixture) -> kube::Api<Job> {
    kube::Api::namespaced(fx.sim.client().expect("client"), NS)
}

/// The live Job's uid and image, if it exists.
async fn live_job(fx: &Fixture) -> Option<(String, String)> {
    let job = jobs(fx).get_opt("migrate").await.expect("get job")?;
    let uid = job.metadata.uid.clone().expect("uid");
    let image = job.spec?.template.spec?.containers[0].image.clone()?;
    Some((uid, image))
}

/// The pods owned by the Job `uid`, and the pods with no owner (a Job deleted without a propagation
/// policy leaves its pods so: batch/v1's default is Orphan).
async fn pods_of(fx: &Fixture, uid: &str) -> (usize, usize) {
    use piceli::k8s_openapi::api::core::v1::Pod;
    let api: kube::Api<Pod> = kube::Api::namespaced(fx.sim.client().expect("client"), NS);
    let pods = api.list(&Default::default()).await.expect("pods").items;
    let owners = |p: &Pod| p.metadata.owner_references.clone().unwrap_or_default();
    let owned = pods
        .iter()
        .filter(|p| owners(p).iter().any(|o| o.uid == uid))
        .count();
    let orphans = pods.iter().filter(|p| owners(p).is_empty()).count();
    (owned, orphans)
}

async fn live_cron_image(fx: &Fixture) -> Option<String> {
    let api: kube::Api<CronJob> = kube::Api::namespaced(fx.sim.client().expect("client"), NS);
    let cron = api.get_opt("report").await.expect("get cronjob")?;
    cron.spec?
        .job_template
        .spec?
        .template
        .spec?
        .containers
        .first()?
        .image
        .clone()
}

/// Wait until the Job has the condition `Complete` (the local cluster's Job pods succeed after a moment).
async fn wait_complete(fx: &Fixture) {
    for _ in 0..200 {
        let job = jobs(fx).get("migrate").await.expect("get job");
        let complete = job
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Complete" && c.status == "True");
        if complete {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Job never completed");
}

fn action<'p>(plan: &'p Plan, kind: &str) -> &'p piceli::runtime::engine::plan::Action {
    plan.actions
        .iter()
        .find(|a| a.object.kind == kind)
        .unwrap_or_else(|| panic!("no {kind} in the plan"))
}

/// Apply the app with image `a` and wait until its Job completed; returns the Job's uid.
async fn deployed_and_complete(fx: &Fixture) -> String {
    let s = session(fx, "a").await;
    let plan = s.plan(vec![], false).await.expect("plan");
    s.apply(&plan.hash).await.expect("apply");
    wait_complete(fx).await;
    live_job(fx).await.expect("the Job").0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_job_whose_image_changes_is_replaced_and_a_cronjob_updated() {
    let fx = Fixture::new();
    let first_uid = deployed_and_complete(&fx).await;
    assert_eq!(pods_of(&fx, &first_uid).await.0, 1, "the Job's pod");

    // Unchanged: no replace churn for a Job the server defaulted, labelled and completed.
    let same = session(&fx, "a")
        .await
        .plan(vec![], false)
        .await
        .expect("plan");
    assert!(!same.has_changes(), "{:?}", same.actions);

    let s = session(&fx, "b").await;
    let plan = s.plan(vec![], false).await.expect("plan");
    let job = action(&plan, "Job");
    assert_eq!(job.action, ActionKind::Replace);
    let reason = job.reason.as_deref().expect("a reason");
    assert!(reason.contains("spec.template is immutable"), "{reason}");
    assert!(
        job.diff
            .iter()
            .any(|c| c.path == "spec.template.spec.containers[migrate].image"
                && c.after == Some(image("b").into())),
        "{:?}",
        job.diff
    );
    // A CronJob's jobTemplate is mutable: an ordinary update.
    assert_eq!(action(&plan, "CronJob").action, ActionKind::Update);
    // The new Job was validated by a dry-run create under a generated name: nothing was made.
    let all = jobs(&fx).list(&Default::default()).await.expect("jobs");
    assert_eq!(all.items.len(), 1, "the plan created nothing");
    // The plan's JSON (what is stored and hashed) says `replace` and why.
    let stored = serde_json::to_value(&plan).expect("json");
    let stored_job = stored["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["kind"] == "Job")
        .expect("job");
    assert_eq!(stored_job["action"], "replace");
    assert_eq!(stored_job["reason"], reason);
    let mut edited = plan.clone();
    edited.actions.iter_mut().for_each(|a| a.reason = None);
    assert_ne!(
        edited.compute_hash(),
        plan.hash,
        "the hash covers the reason"
    );

    let applied = s.apply(&plan.hash).await.expect("apply");
    let (uid, live_image) = live_job(&fx).await.expect("the new Job");
    assert_eq!(live_image, image("b"));
    assert_ne!(uid, first_uid, "a new Job, not the old one changed");
    assert_eq!(
        pods_of(&fx, &first_uid).await,
        (0, 0),
        "the old Job's pods went with it (Background), none orphaned"
    );
    assert_eq!(live_cron_image(&fx).await, Some(image("cron-b")));
    let steps = s
        .state()
        .journal
        .steps(ReleaseId(applied.release.expect("a release")))
        .expect("steps");
    let step = steps
        .iter()
        .find(|s| s.object.kind == "Job")
        .expect("a Job step");
    assert_eq!(step.action, "replace");
    assert_eq!(step.uid.as_deref(), Some(uid.as_str()));

    // The new Job runs to completion, and a plan of the same app afterwards changes nothing.
    wait_complete(&fx).await;
    let again = session(&fx, "b")
        .await
        .plan(vec![], false)
        .await
        .expect("plan");
    assert!(!again.has_changes(), "{:?}", again.actions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_between_the_delete_and_the_create_is_finished_by_resume() {
    let fx = Fixture::new();
    let first_uid = deployed_and_complete(&fx).await;

    let mut s = session(&fx, "b").await;
    let plan = s.plan(vec![], false).await.expect("plan");
    assert_eq!(action(&plan, "Job").action, ActionKind::Replace);
    s.set_fault_hook(Some(Arc::new(|at: &str| !at.ends_with(" deleted"))));
    let err = s.apply(&plan.hash).await.expect_err("killed");
    assert!(matches!(err, EngineError::Killed(_)), "{err}");
    assert_eq!(live_job(&fx).await, None, "deleted, not yet created");
    drop(s);

    let s = session(&fx, "b").await;
    s.resume().await.expect("resume");
    let (uid, live_image) = live_job(&fx).await.expect("created by resume");
    assert_eq!(live_image, image("b"));
    assert_ne!(uid, first_uid);
    assert!(s.state().journal.unfinished().expect("journal").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_after_the_create_is_resumed_without_a_second_replace() {
    let fx = Fixture::new();
    let first_uid = deployed_and_complete(&fx).await;

    let mut s = session(&fx, "b").await;
    let plan = s.plan(vec![], false).await.expect("plan");
    let index = plan
        .actions
        .iter()
        .filter(|a| a.changes())
        .position(|a| a.object.kind == "Job")
        .expect("the Job step");
    let point = format!("step {index} written");
    s.set_fault_hook(Some(Arc::new(move |at: &str| at != point)));
    let err = s.apply(&plan.hash).await.expect_err("killed");
    assert!(matches!(err, EngineError::Killed(_)), "{err}");
    let (created, live_image) = live_job(&fx).await.expect("created before the kill");
    assert_eq!(live_image, image("b"));
    assert_ne!(created, first_uid);
    drop(s);

    let s = session(&fx, "b").await;
    s.resume().await.expect("resume");
    let (uid, _) = live_job(&fx).await.expect("the Job");
    assert_eq!(uid, created, "the Job created before the kill is kept");
    assert!(s.state().journal.unfinished().expect("journal").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_job_is_refused_and_left_running_sim_only() {
    // Job pods that run for an hour (the local cluster's kubelet timing; a real cluster's kwok completes
    // Job pods at once): the Job is still running when its replacement is planned.
    let fx = Fixture::with_config(SimConfig {
        controllers: ControllerConfig {
            pod_run_duration: Duration::from_secs(3600),
            ..ControllerConfig::default()
        },
        ..SimConfig::default()
    });
    let s = session(&fx, "a").await;
    let plan = s.plan(vec![], false).await.expect("plan");
    s.apply(&plan.hash).await.expect("apply");
    let (uid, _) = live_job(&fx).await.expect("the Job");

    let err = session(&fx, "b")
        .await
        .plan(vec![], false)
        .await
        .expect_err("a running Job is not replaced");
    assert!(matches!(err, EngineError::JobRunning { .. }), "{err}");
    assert_eq!(err.code().as_str(), "PCL0221");
    assert!(err.to_string().contains("spec.template"), "{err}");
    assert!(
        err.help().contains("kubectl -n jobs wait"),
        "{}",
        err.help()
    );
    assert_eq!(
        live_job(&fx).await,
        Some((uid, image("a"))),
        "left as it was"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_the_app_does_not_own_is_never_deleted() {
    let fx = Fixture::new();
    // The namespace and a finished-looking Job made by someone else, with another image.
    let client = fx.sim.client().expect("client");
    let namespaces: kube::Api<piceli::k8s_openapi::api::core::v1::Namespace> =
        kube::Api::all(client);
    namespaces
        .create(
            &Default::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": NS}})).expect("ns"),
        )
        .await
        .expect("namespace");
    let theirs: Job = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "migrate"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "migrate", "image": image("theirs")}]}}}
    }))
    .expect("job");
    jobs(&fx)
        .create(&Default::default(), &theirs)
        .await
        .expect("their Job");
    wait_complete(&fx).await;
    let (uid, _) = live_job(&fx).await.expect("their Job");

    let err = session(&fx, "b")
        .await
        .plan(vec![], false)
        .await
        .expect_err("not the app's");
    assert!(matches!(err, EngineError::NotOwned { .. }), "{err}");
    assert_eq!(live_job(&fx).await, Some((uid, image("theirs"))));
}
