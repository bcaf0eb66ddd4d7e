//! Deploy from source against the local cluster and a real registry (Debian's docker-registry): the first
//! deploy builds, shows the digest in the plan, pushes only after approval and the pod starts (the sim's
//! kubelet pulls by digest); a no-change deploy builds and pushes nothing; a one-line source change gives a
//! new digest and a plan of one update.

use crate::support;

use std::path::Path;

use piceli::runtime::engine::deploy::{DeployEvent, DeployOptions};
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli::runtime::images::{self, BuildOptions, ImageEvent};
use piceli_image::{Digest, RegistryClient, Repository};
use piceli_sim::{Sim, SimConfig};

piceli::app! {
    app img-test;
    target local = local(namespace: "img") { registry: "127.0.0.1:1/unused" };
    deployment tiny { image: build(package: "tiny-app"), replicas: 1 }
}

fn copy_fixture(to: &Path) {
    std::fs::create_dir_all(to.join("src")).expect("mkdir");
    for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
        std::fs::copy(support::fixture_dir().join(file), to.join(file)).expect("copy");
    }
}

struct Run {
    events: Vec<ImageEvent>,
    deploy: Vec<DeployEvent>,
    report: piceli::runtime::engine::deploy::DeployReport,
    reference: String,
}

async fn deploy(
    session_opts: &SessionOptions,
    build: &BuildOptions,
    approve: Option<String>,
) -> Run {
    let mut session = Session::open(img_test::app(), session_opts)
        .await
        .expect("session");
    let mut deploy_events = Vec::new();
    let opts = DeployOptions {
        approve,
        resume: false,
        images: Some(build.clone()),
    };
    let report = session
        .deploy(&opts, &[], |e| deploy_events.push(e.clone()))
        .await
        .expect("deploy");
    let events: Vec<ImageEvent> = deploy_events
        .iter()
        .filter_map(|e| match e {
            DeployEvent::Image(i) => Some(i.clone()),
            _ => None,
        })
        .collect();
    let digest = events
        .iter()
        .find_map(|e| match e {
            ImageEvent::Build { digest, .. } => Some(digest.clone()),
            _ => None,
        })
        .expect("a build event");
    // The session planned the app with the built image's reference in place of its placeholder.
    let reference = session.app().workloads[0].containers[0].image.v.clone();
    assert!(reference.ends_with(&digest), "{reference} runs {digest}");
    Run {
        events,
        deploy: deploy_events,
        report,
        reference,
    }
}

fn built(run: &Run) -> bool {
    run.events
        .iter()
        .any(|e| matches!(e, ImageEvent::Build { skipped: false, .. }))
}

fn uploaded(run: &Run) -> usize {
    run.events
        .iter()
        .map(|e| match e {
            ImageEvent::Deliver { uploaded, .. } => *uploaded,
            _ => 0,
        })
        .sum()
}

fn plan_counts(run: &Run) -> (usize, usize) {
    run.deploy
        .iter()
        .find_map(|e| match e {
            DeployEvent::Plan { create, update, .. } => Some((*create, *update)),
            _ => None,
        })
        .expect("a plan event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_from_source_builds_delivers_after_approval_and_skips_what_is_unchanged() {
    let registry = support::LocalRegistry::start();
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let state = tempfile::tempdir().expect("state");
    let work = tempfile::tempdir().expect("workspace");
    copy_fixture(work.path());
    let session_opts = SessionOptions {
        target: None,
        namespace: None,
        connect: ConnectOptions {
            kubeconfig: Some(sim.kubeconfig_path().to_path_buf()),
            context: Some("piceli-sim".into()),
        },
        state_dir: Some(state.path().to_path_buf()),
        wait: Some(std::time::Duration::from_secs(30)),
        wait_lock: None,
        env_files: Vec::new(),
    };
    let build = BuildOptions {
        workspace: work.path().to_path_buf(),
        registry: Some(format!("{}/img", registry.addr)),
        oci_dir: None,
        auth: None,
        state_dir: state.path().to_path_buf(),
        target_dir: Some(support::fixture_target().join("deploy")),
        ca: None,
    };
    let repo = Repository::parse(&format!("{}/img/tiny-app", registry.addr)).expect("repo");
    let client = RegistryClient::new(repo, None).expect("client");

    // Offline render before anything was delivered: the placeholder, with a note.
    let (rendered, notes) = images::for_render(img_test::app(), state.path());
    assert_eq!(
        rendered.workloads[0].containers[0].image.v,
        "build:tiny-app"
    );
    assert_eq!(notes.len(), 1, "{notes:?}");

    // First deploy without approval: built, digest in the plan, nothing pushed.
    let first = deploy(&session_opts, &build, None).await;
    assert!(built(&first), "{:?}", first.events);
    assert!(first.report.approval_required);
    assert!(
        first
            .reference
            .starts_with(&format!("{}/img/tiny-app@sha256:", registry.addr)),
        "{}",
        first.reference
    );
    let digest = Digest::parse(first.reference.rsplit_once('@').expect("@").1).expect("digest");
    assert!(
        !client.has_manifest(&digest).await.expect("head"),
        "nothing is pushed before approval"
    );
    let hash = first.report.hash.clone().expect("hash");

    // Approved: delivered, applied, the pod (pulled by digest) ready.
    let approved = deploy(&session_opts, &build, Some(hash)).await;
    assert_eq!(
        approved.reference, first.reference,
        "same sources, same digest"
    );
    assert!(
        uploaded(&approved) >= 3,
        "config, libraries and binary layers: {:?}",
        approved.events
    );
    assert!(approved.report.release.is_some(), "{:?}", approved.report);
    assert!(approved.report.failed().is_empty());
    assert!(client.has_manifest(&digest).await.expect("head"));
    assert_eq!(client.pull(&digest).await.expect("pull").digest, digest);

    // No change: nothing built, nothing pushed, nothing to approve.
    let again = deploy(&session_opts, &build, None).await;
    assert!(!built(&again), "{:?}", again.events);
    assert!(again.events.iter().any(|e| matches!(
        e,
        ImageEvent::Inputs {
            unchanged: true,
            ..
        }
    )));
    assert_eq!(uploaded(&again), 0);
    assert!(!again.report.approval_required);
    assert_eq!(plan_counts(&again), (0, 0));

    // One line changed: a new digest, a plan of one update (the Deployment's image).
    let main = work.path().join("src/main.rs");
    let text = std::fs::read_to_string(&main)
        .expect("read")
        .replace("says hello", "says hello, changed");
    std::fs::write(&main, text).expect("write");
    let changed = deploy(&session_opts, &build, None).await;
    assert!(built(&changed));
    assert_ne!(changed.reference, first.reference);
    assert!(changed.report.approval_required);
    assert_eq!(plan_counts(&changed), (0, 1));
    let hash = changed.report.hash.clone().expect("hash");
    let applied = deploy(&session_opts, &build, Some(hash)).await;
    assert_eq!(
        uploaded(&applied),
        2,
        "the binary's layer and the config: {:?}",
        applied.events
    );
    assert!(applied.report.release.is_some());

    // Render now shows the delivered digest, with no note.
    let (rendered, notes) = images::for_render(img_test::app(), state.path());
    assert_eq!(
        rendered.workloads[0].containers[0].image.v,
        changed.reference
    );
    assert!(notes.is_empty());
}
