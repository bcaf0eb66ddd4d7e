//! What the deploy-stage tests share: a local cluster, a real registry (Debian's docker-registry on
//! 127.0.0.1), a state directory and a copy of the tiny-app fixture as the workspace; one `deploy` (or
//! `deploy --resume`) through the engine, killed at a named point when asked.

#![allow(dead_code)]

use std::path::Path;
use std::sync::Arc;

use piceli::core::model::App;
use piceli::runtime::engine::deploy::{DeployEvent, DeployOptions, DeployReport};
use piceli::runtime::engine::error::EngineError;
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli::runtime::images::{BuildOptions, ImageEvent};
use piceli_image::{Digest, RegistryClient, Repository};
use piceli_test_support::Cluster;

use crate::support;

pub struct Fixture {
    pub registry: support::LocalRegistry,
    _sim: Cluster,
    pub state: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub session: SessionOptions,
    pub build: BuildOptions,
    app: fn() -> App,
}

impl Fixture {
    /// A fixture deploying `app` (its images pushed under `REGISTRY/stg`).
    pub fn new(app: fn() -> App) -> Fixture {
        let registry = support::LocalRegistry::start();
        let sim = Cluster::start();
        let state = tempfile::tempdir().expect("state");
        let work = tempfile::tempdir().expect("workspace");
        std::fs::create_dir_all(work.path().join("src")).expect("mkdir");
        for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
            std::fs::copy(support::fixture_dir().join(file), work.path().join(file)).expect("copy");
        }
        let session = SessionOptions {
            target: None,
            namespace: None,
            connect: ConnectOptions {
                kubeconfig: Some(sim.kubeconfig_path().to_path_buf()),
                context: Some(sim.context().into()),
            },
            state_dir: Some(state.path().to_path_buf()),
            wait: Some(std::time::Duration::from_secs(30)),
            wait_lock: None,
            env_files: Vec::new(),
        };
        let build = BuildOptions {
            workspace: work.path().to_path_buf(),
            registry: Some(format!("{}/stg", registry.addr)),
            oci_dir: None,
            auth: None,
            state_dir: state.path().to_path_buf(),
            target_dir: Some(support::fixture_target().join("stages")),
            ca: None,
        };
        Fixture {
            registry,
            _sim: sim,
            state,
            work,
            session,
            build,
            app,
        }
    }

    pub fn client(&self) -> RegistryClient {
        let repo =
            Repository::parse(&format!("{}/stg/tiny-app", self.registry.addr)).expect("repo");
        RegistryClient::new(repo, None).expect("client")
    }

    /// One `deploy` (or `deploy --resume`), killed at `kill_at` when given.
    pub async fn deploy(
        &self,
        approve: Option<String>,
        resume: bool,
        kill_at: Option<&'static str>,
    ) -> (Result<DeployReport, EngineError>, Vec<DeployEvent>, Session) {
        let mut session = Session::open((self.app)(), &self.session)
            .await
            .expect("session");
        if let Some(at) = kill_at {
            session.set_fault_hook(Some(Arc::new(move |here: &str| here != at)));
        }
        let opts = DeployOptions {
            approve,
            resume,
            images: Some(self.build.clone()),
        };
        let mut events = Vec::new();
        let result = session.deploy(&opts, &[], |e| events.push(e.clone())).await;
        (result, events, session)
    }

    pub fn journal(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.state.path().join("journal.db")).expect("journal")
    }
}

/// `stage:outcome` of each stage event.
pub fn stages(events: &[DeployEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            DeployEvent::Stage { stage, outcome, .. } => Some(format!("{stage}:{outcome}")),
            _ => None,
        })
        .collect()
}

pub fn built(events: &[DeployEvent]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            DeployEvent::Image(ImageEvent::Build { skipped: false, .. })
        )
    })
}

pub fn uploaded(events: &[DeployEvent]) -> usize {
    events
        .iter()
        .map(|e| match e {
            DeployEvent::Image(ImageEvent::Deliver { uploaded, .. }) => *uploaded,
            _ => 0,
        })
        .sum()
}

pub fn digest_of(reference: &str) -> Digest {
    Digest::parse(reference.rsplit_once('@').expect("@").1).expect("digest")
}

/// The image the cluster's Deployment runs.
pub async fn live_image(session: &Session) -> String {
    let resource = kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        "apps",
        "v1",
        "Deployment",
    ));
    let api: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(session.conn().client.clone(), "stg", &resource);
    let d = api.get("tiny").await.expect("the Deployment");
    d.data["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .expect("image")
        .to_string()
}

/// Changes one line of the workspace's source (a new digest).
pub fn edit_source(work: &Path, to: &str) {
    let main = work.join("src/main.rs");
    let text = std::fs::read_to_string(&main)
        .expect("read")
        .replace("says hello", to);
    std::fs::write(&main, text).expect("write");
}

/// Deletes manifest `digest` of `repo` (`stg/tiny-app`) from the registry (storage deletes are enabled):
/// as if the registry's retention policy dropped it.
pub fn delete_manifest(addr: &str, repo: &str, digest: &Digest) {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).expect("connect to the registry");
    write!(
        conn,
        "DELETE /v2/{repo}/manifests/{digest} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("read");
    assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
}
