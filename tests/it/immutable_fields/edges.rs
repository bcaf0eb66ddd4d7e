//! A kill after a replace's delete finished by `resume`, a claim whose class changes refused, and an immutable change only the server refuses replaced too.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_after_a_replace_deleted_is_finished_by_resume_with_one_backup() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());
    let first = Session::open(v1::imm_test::app(), &opts)
        .await
        .expect("session");
    let plan = first.plan(vec![], false).await.expect("plan 1");
    first.apply(&plan.hash).await.expect("release 1");
    let old_settings = uid_of::<ConfigMap>(&cluster, "settings").await;

    // Killed right after the first replace's delete (the ConfigMap's: config comes before workloads).
    let mut second = Session::open(v2::imm_test::app(), &opts)
        .await
        .expect("session");
    let plan = second.plan(vec![], false).await.expect("plan 2");
    second.set_fault_hook(Some(std::sync::Arc::new(|at: &str| {
        !at.ends_with(" deleted")
    })));
    let err = second.apply(&plan.hash).await.expect_err("killed");
    assert!(matches!(err, EngineError::Killed(_)), "{err}");
    let maps = api::<ConfigMap>(&cluster, NS);
    assert!(
        maps.get_opt("settings").await.expect("get").is_none(),
        "deleted, not yet created"
    );
    drop(second);

    let third = Session::open(v2::imm_test::app(), &opts)
        .await
        .expect("session");
    let resumed = third.resume().await.expect("resume");
    let release = resumed.release.expect("a release");
    let cm = maps.get("settings").await.expect("created by resume");
    assert_eq!(
        cm.data.and_then(|d| d.get("mode").cloned()).as_deref(),
        Some("b")
    );
    let backups = third
        .state()
        .journal
        .backups(Some(ReleaseId(release)))
        .expect("backups");
    let of_settings: Vec<_> = backups.iter().filter(|b| b.kind == "ConfigMap").collect();
    assert_eq!(of_settings.len(), 1, "{backups:?}");
    assert_eq!(of_settings[0].uid, old_settings);
    assert_eq!(of_settings[0].object["data"]["mode"], "a");
    assert_eq!(backups.len(), 3, "every replaced object, once");
    assert!(
        third
            .state()
            .journal
            .unfinished()
            .expect("journal")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_class_changes_is_refused_and_left_as_it_is() {
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());
    let first = Session::open(claim_v1::imm_claim::app(), &opts)
        .await
        .expect("session");
    let plan = first.plan(vec![], false).await.expect("plan 1");
    first.apply(&plan.hash).await.expect("release 1");
    let claims = api::<PersistentVolumeClaim>(&cluster, "imm-claim");
    let uid = claims.get("data").await.expect("claim").metadata.uid;

    let second = Session::open(claim_v2::imm_claim::app(), &opts)
        .await
        .expect("session");
    let err = second
        .plan(vec![], false)
        .await
        .expect_err("a claim is never replaced");
    assert!(matches!(err, EngineError::ImmutableData { .. }), "{err}");
    assert_eq!(err.code().as_str(), "PCL0223");
    let message = err.to_string();
    assert!(
        message.starts_with("PersistentVolumeClaim/imm-claim/data cannot change spec in place"),
        "{message}"
    );
    assert!(message.contains("its data is gone"), "{message}");
    assert!(err.help().contains("Keep the live value"), "{}", err.help());
    let live = claims.get("data").await.expect("claim");
    assert_eq!(live.metadata.uid, uid, "left as it was");
    assert_eq!(
        live.spec.and_then(|s| s.storage_class_name).as_deref(),
        Some("standard")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_table_leaves_to_the_server_is_replaced_too() {
    // A key dropped from a ConfigMap marked immutable: the app owned every key, so the table cannot tell
    // a key it dropped from one the server would keep; the dry run refuses, and the plan replaces.
    let cluster = Cluster::start();
    let state = tempfile::tempdir().expect("state dir");
    let opts = options(&cluster, state.path());
    let first = Session::open(marked_v1::imm_marked::app(), &opts)
        .await
        .expect("session");
    let plan = first.plan(vec![], false).await.expect("plan 1");
    first.apply(&plan.hash).await.expect("release 1");
    let maps = api::<ConfigMap>(&cluster, "imm-marked");
    let uid = maps.get("marked").await.expect("marked").metadata.uid;

    let second = Session::open(marked_v2::imm_marked::app(), &opts)
        .await
        .expect("session");
    let plan = second.plan(vec![], false).await.expect("plan 2");
    let cm = action(&plan, "ConfigMap");
    assert_eq!(cm.action, ActionKind::Replace, "{cm:?}");
    let why = cm.reason.as_deref().expect("a reason");
    assert!(why.starts_with("ConfigMap data is immutable"), "{why}");
    assert!(
        cm.diff
            .iter()
            .any(|c| c.path == "data.extra" && c.after.is_none()),
        "{:?}",
        cm.diff
    );
    second.apply(&plan.hash).await.expect("release 2");
    let live = maps.get("marked").await.expect("marked");
    assert_ne!(live.metadata.uid, uid);
    let keys: Vec<String> = live.data.unwrap_or_default().into_keys().collect();
    assert_eq!(keys, ["mode"]);
}
