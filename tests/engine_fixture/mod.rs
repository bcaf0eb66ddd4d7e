//! What the engine-guarantee tests share: the `guard-test` app (its Deployment's image chosen per session),
//! a local cluster and state directories in one temporary directory, sessions against them, fault hooks
//! that kill an apply at a named point, and the edits someone who can write the state directory makes.

#![allow(dead_code)]

use piceli::runtime::engine::plan::Plan;
use piceli::runtime::engine::session::{Session, SessionOptions};
use piceli::runtime::engine::target::ConnectOptions;
use piceli_sim::SimConfig;
use piceli_test_support::Cluster;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

thread_local! {
    static IMAGE: RefCell<String> = RefCell::new(image("1.27"));
}

pub fn image(tag: &str) -> String {
    format!("docker.io/library/nginx:{tag}@sha256:{}", "ab".repeat(32))
}

pub fn current_image() -> String {
    IMAGE.with(|i| i.borrow().clone())
}

pub fn app_with_image(tag: &str) -> piceli::__private::App {
    IMAGE.with(|i| *i.borrow_mut() = image(tag));
    guard_test::app()
}

piceli::app! {
    app guard-test;
    target local = local(namespace: "g-one");
    target staging = local(namespace: "g-stage");
    secret api { key: from_env("GUARD_TEST_API_KEY") }
    deployment web {
        image: (current_image()),
        replicas: 1,
        ports: { http: 80 },
        env: { KEY: secret(api.key) },
    }
    service web -> web { port: 80 => http }
}

pub struct Fixture {
    pub sim: Cluster,
    pub dirs: tempfile::TempDir,
}

impl Fixture {
    /// The test's cluster: the local one, or the real one of `PICELI_REAL_KUBECONFIG`.
    pub fn new() -> Fixture {
        Fixture {
            sim: Cluster::start(),
            dirs: tempfile::tempdir().expect("temp dir"),
        }
    }

    /// A local cluster started with `config` (its controllers' timing, …): for tests on the local
    /// cluster only.
    pub fn with_config(config: SimConfig) -> Fixture {
        Fixture {
            sim: Cluster::start_sim(config),
            dirs: tempfile::tempdir().expect("temp dir"),
        }
    }

    pub fn state(&self, name: &str) -> PathBuf {
        self.dirs.path().join(name)
    }

    pub fn options(&self, state: &str) -> SessionOptions {
        self.options_with(state, self.sim.kubeconfig_path())
    }

    pub fn options_with(&self, state: &str, kubeconfig: &Path) -> SessionOptions {
        SessionOptions {
            target: None,
            namespace: None,
            connect: ConnectOptions {
                kubeconfig: Some(kubeconfig.to_path_buf()),
                context: Some(self.sim.context().into()),
            },
            state_dir: Some(self.state(state)),
            wait: None,
            wait_lock: None,
            env_files: vec![self.env_file()],
        }
    }

    /// The secret source's variable, as `--env-file` gives it (the process environment is not touched).
    pub fn env_file(&self) -> PathBuf {
        let path = self.dirs.path().join("test.env");
        std::fs::write(&path, "GUARD_TEST_API_KEY=first-value\n").expect("env file");
        path
    }

    pub async fn session(&self, opts: &SessionOptions) -> Session {
        Session::open(app_with_image("1.27"), opts)
            .await
            .expect("session")
    }
}

pub fn kill_at(point: &'static str) -> Arc<piceli::runtime::engine::apply::FaultHook> {
    Arc::new(move |at: &str| at != point)
}

pub async fn deployment_image(sim: &Cluster, namespace: &str) -> Option<String> {
    use piceli::k8s_openapi::api::apps::v1::Deployment;
    let api: kube::Api<Deployment> =
        kube::Api::namespaced(sim.client().expect("client"), namespace);
    let d = api.get_opt("web").await.expect("get")?;
    d.spec?.template.spec?.containers.first()?.image.clone()
}

/// Rewrites the stored plan `hash` as someone who can edit the state directory would: the Deployment's
/// image replaced and its desired digest recomputed. With `rehash`, the plan's hash is recomputed too and
/// the plan row and the running release are moved to it.
pub fn tamper(state: &Path, hash: &str, new_image: &str, rehash: bool) -> String {
    let db = rusqlite::Connection::open(state.join("journal.db")).expect("journal");
    let json: String = db
        .query_row("SELECT plan_json FROM plans WHERE hash = ?1", [hash], |r| {
            r.get(0)
        })
        .expect("stored plan");
    let mut plan: Plan = serde_json::from_str(&json).expect("plan json");
    for o in &mut plan.objects {
        if o["kind"] == "Deployment" {
            o["spec"]["template"]["spec"]["containers"][0]["image"] = new_image.into();
        }
    }
    let edited = plan
        .objects
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .cloned()
        .expect("deployment");
    for a in &mut plan.actions {
        if a.object.kind == "Deployment" {
            a.desired_digest = Some(piceli::runtime::engine::hash::digest(&edited));
        }
    }
    if rehash {
        plan.hash = plan.compute_hash();
    }
    let new_hash = plan.hash.clone();
    let json = serde_json::to_string(&plan).expect("json");
    if rehash {
        db.execute(
            "INSERT INTO plans (hash, target, plan_json, created_at) \
             SELECT ?1, target, ?2, created_at FROM plans WHERE hash = ?3",
            rusqlite::params![new_hash, json, hash],
        )
        .expect("store the edited plan");
        db.execute(
            "UPDATE releases SET plan_hash = ?1 WHERE plan_hash = ?2",
            rusqlite::params![new_hash, hash],
        )
        .expect("point the release at it");
    } else {
        db.execute(
            "UPDATE plans SET plan_json = ?1 WHERE hash = ?2",
            rusqlite::params![json, hash],
        )
        .expect("edit plan");
    }
    new_hash
}

/// `deploy --approve HASH` (`approve`), `deploy --resume` (`resume`) or a plain `deploy`, as the engine
/// takes them (no images to build).
pub fn deploy_options(
    approve: Option<String>,
    resume: bool,
) -> piceli::runtime::engine::deploy::DeployOptions {
    piceli::runtime::engine::deploy::DeployOptions {
        approve,
        resume,
        images: None,
    }
}
