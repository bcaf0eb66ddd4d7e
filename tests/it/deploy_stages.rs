//! `deploy` as journaled stages, against the local cluster and a real registry: a run killed while
//! delivering resumes from `deliver` (nothing rebuilt), and editing the state directory — the journal's
//! images, the build cache, `images.json` — never changes what is pushed or deployed without a new approval.

use crate::deploy_fixture;
use crate::support;

use deploy_fixture::{Fixture, built, digest_of, live_image, stages, uploaded};
use piceli::core::Coded;
use piceli::runtime::engine::deploy::DeployEvent;
use piceli::runtime::engine::error::EngineError;
use piceli::runtime::journal::DeployStage;
use piceli_image::{ImageSpec, assemble};

piceli::app! {
    app stage-test;
    target local = local(namespace: "stg") { registry: "127.0.0.1:1/unused" };
    deployment tiny { image: build(package: "tiny-app"), replicas: 1 }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deploy_killed_while_delivering_resumes_there_and_edits_to_the_state_dir_are_refused() {
    let f = Fixture::new(stage_test::app);
    let client = f.client();

    // No approval: inputs, build and plan run, the run waits at `approve`, nothing is journaled or pushed.
    let (first, events, session) = f.deploy(None, false, None).await;
    let first = first.expect("deploy");
    assert_eq!(
        stages(&events),
        ["inputs:done", "build:done", "plan:done", "approve:waiting"]
    );
    assert!(first.approval_required && first.run.is_none());
    let reference = session.app().workloads[0].containers[0].image.v.clone();
    let digest = digest_of(&reference);
    assert!(!client.has_manifest(&digest).await.expect("head"));
    let hash = first.hash.expect("hash");
    drop(session);

    // Approved, and killed as delivery begins: the journaled run stops at `deliver`, from the build cache.
    let (killed, events, session) = f
        .deploy(Some(hash.clone()), false, Some("delivering"))
        .await;
    assert!(matches!(killed, Err(EngineError::Killed(_))), "{killed:?}");
    assert!(
        !built(&events),
        "the approved run takes the build cache: {events:?}"
    );
    let run = session
        .state()
        .journal
        .unfinished_deploy()
        .expect("journal")
        .expect("a run");
    assert_eq!(
        (run.stage, run.plan_hash.as_str()),
        (DeployStage::Deliver, hash.as_str())
    );
    let images = session
        .state()
        .journal
        .deploy_images(run.id)
        .expect("images");
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].reference, reference);
    assert!(
        images[0].dirty && images[0].commit.is_none(),
        "{:?}",
        images[0]
    );
    drop(session);

    // The journal's image edited to another digest: refused (PCL0117), nothing pushed, nothing applied.
    let other = format!(
        "{}/stg/tiny-app@sha256:{}",
        f.registry.addr,
        "ab".repeat(32)
    );
    let db = f.journal();
    db.execute("UPDATE deploy_images SET reference = ?1", [&other])
        .expect("edit");
    let (refused, _, session) = f.deploy(None, true, None).await;
    let err = refused.expect_err("an edited journal image");
    assert_eq!(err.code().as_str(), "PCL0117", "{err}");
    assert!(!client.has_manifest(&digest).await.expect("head"));
    assert!(
        session
            .state()
            .journal
            .releases()
            .expect("releases")
            .is_empty()
    );
    db.execute("UPDATE deploy_images SET reference = ?1", [&reference])
        .expect("restore");
    drop(session);

    // A cached blob edited: its content no longer hashes to the approved digest (PCL0117).
    let blobs = f.state.path().join("builds/blobs/sha256");
    let manifest_path = blobs.join(digest.hex());
    let manifest = std::fs::read(&manifest_path).expect("the cached manifest");
    std::fs::write(&manifest_path, b"{}").expect("edit");
    let (refused, _, session) = f.deploy(None, true, None).await;
    let err = refused.expect_err("an edited cache");
    assert_eq!(err.code().as_str(), "PCL0117", "{err}");
    assert!(!client.has_manifest(&digest).await.expect("head"));
    std::fs::write(&manifest_path, manifest).expect("restore");
    drop(session);

    // images.json claiming another reference changes nothing a resumed run delivers or applies.
    std::fs::write(
        f.state.path().join("images.json"),
        format!(
            r#"{{"images":{{"build:tiny-app":{{"reference":"{other}","destination":"x","identity":{{"commit":null,"dirty":true,"inputs":"sha256:{}","toolchain":"t"}},"package_dir":""}}}}}}"#,
            "cd".repeat(32)
        ),
    )
    .expect("edit images.json");

    // Resumed: from `deliver`, nothing rebuilt, the approved digest pushed and running.
    let (resumed, events, session) = f.deploy(None, true, None).await;
    let resumed = resumed.expect("resume");
    assert!(matches!(
        events.first(),
        Some(DeployEvent::Resume {
            stage: "deliver",
            ..
        })
    ));
    assert!(!built(&events));
    assert_eq!(
        stages(&events),
        ["deliver:done", "apply:done", "ready:done", "checks:done"]
    );
    assert!(uploaded(&events) >= 3, "{events:?}");
    assert_eq!(resumed.release, Some(1));
    assert_eq!(live_image(&session).await, reference);
    assert_eq!(client.pull(&digest).await.expect("pull").digest, digest);
    drop(session);

    // No change: every image stage says it skipped; nothing is built or pushed.
    let (again, events, _session) = f.deploy(None, false, None).await;
    assert!(!again.expect("deploy").approval_required);
    assert_eq!(
        stages(&events),
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:skipped",
            "deliver:skipped",
            "apply:skipped",
            "ready:done",
            "checks:done"
        ]
    );
    assert_eq!(uploaded(&events), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_json_edited_before_approval_needs_a_new_approval() {
    let f = Fixture::new(stage_test::app);
    let client = f.client();
    let (first, _, session) = f.deploy(None, false, None).await;
    let hash = first.expect("deploy").hash.expect("hash");
    let reference = session.app().workloads[0].containers[0].image.v.clone();
    assert!(
        session
            .state()
            .journal
            .deploy_runs()
            .expect("runs")
            .is_empty(),
        "no run is journaled before approval"
    );
    drop(session);

    // Someone pushes another image and writes images.json to say it is these inputs' delivered build.
    let other = assemble(
        &{
            let mut spec = ImageSpec::new(support::tiny_app(), "tiny-app");
            spec.annotations.insert("edited".into(), "yes".into());
            spec
        },
        None,
    )
    .expect("assemble");
    client.push(&other, None).await.expect("push");
    let other_ref = format!("{}/stg/tiny-app@{}", f.registry.addr, other.digest);
    let store = f.state.path().join("images.json");
    let identity = {
        let db = f.journal();
        let inputs: String = db
            .query_row("SELECT inputs FROM image_builds", [], |r| r.get(0))
            .expect("the build index");
        inputs
    };
    std::fs::write(
        &store,
        format!(
            r#"{{"images":{{"build:tiny-app":{{"reference":"{other_ref}","destination":"{}/stg/tiny-app","identity":{{"commit":null,"dirty":true,"inputs":"{identity}","toolchain":"t"}},"package_dir":""}}}}}}"#,
            f.registry.addr
        ),
    )
    .expect("edit images.json");

    // The approved hash no longer matches the plan (it runs the other digest): refused, nothing written.
    let (refused, events, session) = f.deploy(Some(hash), false, None).await;
    let err = refused.expect_err("the plan changed");
    assert_eq!(err.code().as_str(), "PCL0131", "{err}");
    assert!(stages(&events).contains(&"plan:done".to_string()));
    assert!(!stages(&events).iter().any(|s| s.starts_with("deliver")));
    assert!(
        session
            .state()
            .journal
            .releases()
            .expect("releases")
            .is_empty()
    );
    assert!(
        !client
            .has_manifest(&digest_of(&reference))
            .await
            .expect("head")
    );
    assert!(
        session
            .state()
            .journal
            .unfinished_deploy()
            .expect("journal")
            .is_none(),
        "the refused run is finished, not left to resume"
    );
}
