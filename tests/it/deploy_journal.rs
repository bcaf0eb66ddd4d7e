//! What `deploy` journals and what it may do without a fresh approval, against the local cluster and a
//! real registry: an image the registry lost is pushed again only once the plan that runs it is approved
//! (the push is part of what is approved), a deploy run pointed at another stored plan is refused
//! (PCL0124: the journal records which plan each run was approved for), a succeeded run leaves in the
//! build cache only the images the live release runs, and a git checkout's commit and dirtiness reach the
//! journal and the workload's annotations.

use crate::deploy_fixture;

use deploy_fixture::{Fixture, delete_manifest, digest_of, edit_source, live_image, stages};
use piceli::core::Coded;
use piceli::runtime::engine::deploy::DeployEvent;
use piceli::runtime::engine::error::EngineError;
use piceli::runtime::images::{ImageEvent, SOURCE_DIRTY, SOURCE_REVISION};
use piceli::runtime::journal::{ApprovalKind, DeployStage};

piceli::app! {
    app stage-test;
    target local = local(namespace: "stg") { registry: "127.0.0.1:1/unused" };
    deployment tiny { image: build(package: "tiny-app"), replicas: 1 }
}

/// `deploy`, then `deploy --approve` of the hash it printed: the first release, succeeded.
async fn first_release(f: &Fixture) -> (String, String) {
    let (first, _, session) = f.deploy(None, false, None).await;
    let hash = first.expect("deploy").hash.expect("hash");
    let reference = session.app().workloads[0].containers[0].image.v.clone();
    drop(session);
    let (done, _, _) = f.deploy(Some(hash.clone()), false, None).await;
    assert_eq!(done.expect("approved deploy").release, Some(1));
    (hash, reference)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_the_registry_lost_is_pushed_again_only_with_approval() {
    let f = Fixture::new(stage_test::app);
    let client = f.client();
    let (_, reference) = first_release(&f).await;
    let digest = digest_of(&reference);
    delete_manifest(&f.registry.addr, "stg/tiny-app", &digest);
    assert!(!client.has_manifest(&digest).await.expect("head"));

    // No object changes, but the image must be pushed: that waits for approval, and nothing is pushed.
    let (waiting, events, session) = f.deploy(None, false, None).await;
    let waiting = waiting.expect("deploy");
    assert!(waiting.approval_required, "{events:?}");
    assert_eq!(
        stages(&events),
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:waiting"
        ]
    );
    let changes = events.iter().find_map(|e| match e {
        DeployEvent::Plan { changes, .. } => Some(*changes),
        _ => None,
    });
    assert_eq!(changes, Some(false), "the plan changes no object");
    assert!(
        !client.has_manifest(&digest).await.expect("head"),
        "pushed without approval"
    );
    assert_eq!(live_image(&session).await, reference);
    drop(session);

    // Approved: pushed (the same digest), nothing applied.
    let hash = waiting.hash.expect("hash");
    let (pushed, events, session) = f.deploy(Some(hash.clone()), false, None).await;
    let pushed = pushed.expect("approved deploy");
    assert_eq!(
        stages(&events),
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:done",
            "deliver:done",
            "apply:skipped",
            "ready:done",
            "checks:done"
        ]
    );
    assert!(client.has_manifest(&digest).await.expect("head"));
    assert_eq!(pushed.release, Some(1), "no new release");
    let approval = session
        .state()
        .journal
        .approval(&hash, pushed.run)
        .expect("journal")
        .expect("the run's approval");
    assert_eq!(approval.kind, ApprovalKind::Approved);
    assert_eq!(approval.command, format!("deploy --approve {hash}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deploy_run_pointed_at_a_plan_nobody_approved_is_not_resumed() {
    let f = Fixture::new(stage_test::app);
    let client = f.client();
    let (approved, _) = first_release(&f).await;

    // A changed source, planned and approved, killed as delivery begins.
    edit_source(f.work.path(), "says hello, once");
    let (planned, _, _) = f.deploy(None, false, None).await;
    let hash = planned.expect("deploy").hash.expect("hash");
    let (killed, _, session) = f
        .deploy(Some(hash.clone()), false, Some("delivering"))
        .await;
    assert!(matches!(killed, Err(EngineError::Killed(_))), "{killed:?}");
    let run = session
        .state()
        .journal
        .unfinished_deploy()
        .expect("journal")
        .expect("a run");
    assert_eq!(run.stage, DeployStage::Deliver);
    drop(session);

    // Another change, planned (stored, built into the cache) and never approved.
    edit_source(f.work.path(), "says hello, twice");
    let (other, _, session) = f.deploy(None, false, None).await;
    let other = other.expect("deploy");
    assert!(other.approval_required);
    let other_hash = other.hash.expect("hash");
    let other_ref = session.app().workloads[0].containers[0].image.v.clone();
    drop(session);

    // The interrupted run pointed at it (plan and images, consistently): `--resume` refuses it.
    let db = f.journal();
    db.execute(
        "UPDATE deploy_runs SET plan_hash = ?1 WHERE id = ?2",
        rusqlite::params![other_hash, run.id],
    )
    .expect("edit");
    db.execute(
        "UPDATE deploy_images SET reference = ?1 WHERE run = ?2",
        rusqlite::params![other_ref, run.id],
    )
    .expect("edit");
    let (refused, events, session) = f.deploy(None, true, None).await;
    let err = refused.expect_err("a run of a plan nobody approved");
    assert_eq!(err.code().as_str(), "PCL0124", "{err}");
    assert!(err.to_string().contains(&other_hash), "{err}");
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, DeployEvent::Image(ImageEvent::Deliver { .. })))
    );
    assert!(
        !client
            .has_manifest(&digest_of(&other_ref))
            .await
            .expect("head")
    );
    assert_eq!(
        session.state().journal.releases().expect("releases").len(),
        1
    );
    let live = live_image(&session).await;
    assert_ne!(live, other_ref);
    drop(session);

    // Every approval the journal holds was given by a command, for the plan it names.
    let approvals: Vec<(String, String)> = {
        let mut stmt = db
            .prepare("SELECT plan_hash, command FROM approvals ORDER BY id")
            .expect("approvals");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query");
        rows.map(|r| r.expect("row")).collect()
    };
    assert_eq!(
        approvals,
        [
            (approved.clone(), format!("deploy --approve {approved}")),
            (hash.clone(), format!("deploy --approve {hash}")),
        ]
    );
    assert!(!approvals.iter().any(|(h, _)| *h == other_hash));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_succeeded_deploy_keeps_in_the_build_cache_only_what_the_live_release_runs() {
    let f = Fixture::new(stage_test::app);
    let (_, first) = first_release(&f).await;
    let blobs = f.state.path().join("builds/blobs/sha256");
    let first = digest_of(&first);
    assert!(
        blobs.join(first.hex()).exists(),
        "the live release's image is kept"
    );

    // A change built, approved and deployed: the first image leaves the cache, the new one stays.
    edit_source(f.work.path(), "says hello, changed");
    let (planned, _, session) = f.deploy(None, false, None).await;
    let hash = planned.expect("deploy").hash.expect("hash");
    let second = digest_of(&session.app().workloads[0].containers[0].image.v);
    drop(session);
    let (done, events, _) = f.deploy(Some(hash), false, None).await;
    assert_eq!(done.expect("approved deploy").release, Some(2));
    let collected = events.iter().find_map(|e| match e {
        DeployEvent::Image(ImageEvent::Collect {
            kept,
            removed,
            bytes,
        }) => Some((*kept, *removed, *bytes)),
        _ => None,
    });
    let (kept, removed, bytes) = collected.expect("a collect event");
    assert_eq!(kept, 1);
    assert!(removed >= 2 && bytes > 0, "{removed} {bytes}");
    assert!(!blobs.join(first.hex()).exists(), "the old image is gone");
    let image = piceli_image::layout::read_image(&f.state.path().join("builds"), &second)
        .expect("the live image is whole");
    assert_eq!(image.digest, second);
    let index: Vec<String> = {
        let db = f.journal();
        let mut stmt = db
            .prepare("SELECT digest FROM image_builds")
            .expect("index");
        let rows = stmt.query_map([], |r| r.get(0)).expect("query");
        rows.map(|r| r.expect("row")).collect()
    };
    assert_eq!(index, [second.to_string()]);
}

/// `git ARGS` in `dir` with no user or system configuration: its trimmed stdout.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=piceli test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git is needed (the test fails, not skips, without it)");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The values of the source annotations on the app's first workload.
fn source_annotations(app: &piceli::core::model::App) -> (String, String) {
    let get = |key: &str| {
        app.workloads[0]
            .annotations
            .iter()
            .find(|(k, _)| k.v == key)
            .map(|(_, v)| v.v.clone())
            .unwrap_or_else(|| panic!("no {key} annotation"))
    };
    (get(SOURCE_REVISION), get(SOURCE_DIRTY))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_checkouts_commit_and_dirtiness_are_journaled_and_annotated() {
    let f = Fixture::new(stage_test::app);
    let work = f.work.path();
    git(work, &["init", "-q"]);
    git(work, &["add", "."]);
    git(work, &["commit", "-q", "-m", "the tiny app"]);
    let head = git(work, &["rev-parse", "HEAD"]);
    assert_eq!(head.len(), 40, "{head}");

    // Clean: the commit, not dirty, in the inputs event, the workload's annotations and the journal.
    let (planned, events, session) = f.deploy(None, false, None).await;
    let hash = planned.expect("deploy").hash.expect("hash");
    let inputs = events.iter().find_map(|e| match e {
        DeployEvent::Image(ImageEvent::Inputs { commit, dirty, .. }) => {
            Some((commit.clone(), *dirty))
        }
        _ => None,
    });
    assert_eq!(inputs, Some((Some(head.clone()), false)));
    assert_eq!(
        source_annotations(session.app()),
        (head.clone(), "false".into())
    );
    drop(session);
    let (done, _, session) = f.deploy(Some(hash), false, None).await;
    let done = done.expect("approved deploy");
    let images = session
        .state()
        .journal
        .deploy_images(done.run.expect("run"))
        .expect("journal");
    assert_eq!(
        (images[0].commit.as_deref(), images[0].dirty),
        (Some(head.as_str()), false)
    );
    let resource = kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        "apps",
        "v1",
        "Deployment",
    ));
    let api: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(session.conn().client.clone(), "stg", &resource);
    let live = api.get("tiny").await.expect("the Deployment");
    let annotations = live.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations.get(SOURCE_REVISION), Some(&head));
    assert_eq!(
        annotations.get(SOURCE_DIRTY).map(String::as_str),
        Some("false")
    );
    drop(session);

    // A source file edited and not committed: the same commit, dirty.
    edit_source(work, "says hello, uncommitted");
    let (_, events, session) = f.deploy(None, false, None).await;
    let inputs = events.iter().find_map(|e| match e {
        DeployEvent::Image(ImageEvent::Inputs { commit, dirty, .. }) => {
            Some((commit.clone(), *dirty))
        }
        _ => None,
    });
    assert_eq!(inputs, Some((Some(head.clone()), true)));
    assert_eq!(source_annotations(session.app()), (head, "true".into()));
}
