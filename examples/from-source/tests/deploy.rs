//! The app binary run as a user would (`from-source deploy …`), against the local cluster and a real
//! registry (Debian's docker-registry on 127.0.0.1): the first deploy builds and waits for approval with
//! the digest in its plan; approved, it pushes and runs the image by digest (pulled back and compared with
//! the build); a second deploy builds and pushes nothing, nor does one from another state directory (the
//! registry has the digest); a changed source gives a new digest and a plan of one field, the image. `--oci-dir` writes an OCI layout instead.

#[path = "../../../image/tests/support/mod.rs"]
mod support;

#[path = "../../support/deploy_events.rs"]
mod deploy_events;

use std::path::PathBuf;

use assert_cmd::Command;
use deploy_events::{event, lines, stages};
use piceli_image::{Digest, RegistryClient, Repository};
use piceli_sim::{Sim, SimConfig};

struct Env {
    dir: tempfile::TempDir,
    work: PathBuf,
    state: PathBuf,
    kubeconfig: String,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().expect("temp dir");
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("src")).expect("mkdir");
        for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
            std::fs::copy(support::fixture_dir().join(file), work.join(file)).expect("copy");
        }
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
        std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
        let state = dir.path().join("state");
        Env {
            dir,
            work,
            state,
            kubeconfig: String::new(),
        }
    }

    /// `from-source ARGS --kubeconfig … --state-dir … [--workspace …] -o json`, run in the temp dir.
    fn run(&self, args: &[&str]) -> Command {
        let mut cmd = self.command(args);
        if args.first() == Some(&"deploy") {
            cmd.arg("--workspace").arg(&self.work);
        }
        cmd
    }

    fn command(&self, args: &[&str]) -> Command {
        let home = self.dir.path().join("home");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_from-source"));
        cmd.current_dir(self.dir.path())
            .env("HOME", &home)
            .env("KUBECONFIG", home.join(".kube/config"))
            .env("DOCKER_CONFIG", home.join(".docker"))
            // cargo builds the fixture incrementally between runs.
            .env(
                "CARGO_TARGET_DIR",
                support::fixture_target().join("from-source"),
            )
            .args(args)
            .args(["--kubeconfig", &self.kubeconfig, "--context", "piceli-sim"])
            .arg("--state-dir")
            .arg(&self.state)
            .args(["-o", "json", "--timeout", "30"])
            .timeout(std::time::Duration::from_secs(600));
        cmd
    }
}

fn uploaded(lines: &[serde_json::Value]) -> u64 {
    lines
        .iter()
        .filter(|l| l["event"] == "deliver")
        .map(|l| l["uploaded"].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn deploy_from_source_through_the_app_binary() {
    let registry = support::LocalRegistry::start();
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let mut env = Env::new();
    env.kubeconfig = sim.kubeconfig_path().display().to_string();
    let registry_flag = format!("{}/fs", registry.addr);
    let deploy = |env: &Env, extra: &[&str]| {
        let mut args = vec!["deploy", "--registry", registry_flag.as_str()];
        args.extend_from_slice(extra);
        env.run(&args)
    };

    // Built, waiting for approval: the plan shows the digest, nothing is pushed.
    let out = deploy(&env, &[]).assert().code(3);
    let first = lines(&out);
    assert_eq!(
        stages(&first),
        ["inputs:done", "build:done", "plan:done", "approve:waiting"]
    );
    let digest = event(&first, "build")["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let digest = Digest::parse(&digest).expect("a digest");
    let hash = event(&first, "plan")["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let repo = Repository::parse(&format!("{registry_flag}/tiny-app")).expect("repo");
    let client = RegistryClient::new(repo, None).expect("client");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    assert!(!rt.block_on(client.has_manifest(&digest)).expect("head"));

    // Approved: pushed, applied, ready (the sim's kubelet pulls by digest), checked.
    let out = deploy(&env, &["--approve", &hash]).assert().success();
    let done = lines(&out);
    assert_eq!(
        stages(&done),
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:done",
            "deliver:done",
            "apply:done",
            "ready:done",
            "checks:done"
        ]
    );
    assert_eq!(
        event(&done, "build")["cached"],
        true,
        "built once, before approval"
    );
    assert!(uploaded(&done) >= 3, "{done:#?}");
    let reference = event(&done, "deliver")["reference"]
        .as_str()
        .expect("reference")
        .to_string();
    assert_eq!(reference, format!("{registry_flag}/tiny-app@{digest}"));
    assert_eq!(event(&done, "result")["release"], 1);

    // Pulled back by digest: exactly the image built (the build cache's copy).
    let pulled = rt.block_on(client.pull(&digest)).expect("pull");
    let built =
        piceli_image::layout::read_image(&env.state.join("builds"), &digest).expect("cache");
    assert_eq!(pulled, built);

    // The rendered objects carry the image by digest and the source identity (no git here: dirty).
    let out = env.run(&["render"]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains(&reference), "{text}");
    assert!(
        text.contains("\"piceli.dev/source-revision\": \"none\"")
            || text.contains("\"piceli.dev/source-revision\":\"none\""),
        "{text}"
    );

    // No change: nothing built, nothing pushed, nothing to approve.
    let out = deploy(&env, &[]).assert().success();
    let again = lines(&out);
    assert_eq!(
        stages(&again)[..6],
        [
            "inputs:done",
            "build:skipped",
            "plan:done",
            "approve:skipped",
            "deliver:skipped",
            "apply:skipped"
        ]
    );
    assert_eq!(uploaded(&again), 0);
    assert_eq!(event(&again, "inputs")["unchanged"], true);

    // Another state directory (a colleague's machine, CI) builds the same source: the same digest, which
    // the registry already has (a HEAD of its manifest), so there is nothing to push or approve.
    let first_state = std::mem::replace(&mut env.state, env.dir.path().join("state-2"));
    let out = deploy(&env, &[]).assert().success();
    let other = lines(&out);
    assert_eq!(event(&other, "inputs")["unchanged"], false, "{other:#?}");
    assert_eq!(event(&other, "build")["digest"], digest.to_string());
    assert_eq!(
        stages(&other)[2..5],
        ["plan:done", "approve:skipped", "deliver:skipped"],
        "{other:#?}"
    );
    assert_eq!(uploaded(&other), 0);
    env.state = first_state;

    // One line of source changed: a new digest and a plan of one field, the image.
    let main = env.work.join("src/main.rs");
    let text = std::fs::read_to_string(&main)
        .expect("read")
        .replace("says hello", "says hello, changed");
    std::fs::write(&main, text).expect("write");
    let out = deploy(&env, &[]).assert().code(3);
    let changed = lines(&out);
    let new_digest = event(&changed, "build")["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    assert_ne!(new_digest, digest.to_string());
    assert_eq!(
        event(&changed, "plan")["fields"],
        serde_json::json!([
            "Deployment/from-source/tiny: spec.template.spec.containers[tiny].image"
        ])
    );
    let hash = event(&changed, "plan")["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let out = deploy(&env, &["--approve", &hash]).assert().success();
    let applied = lines(&out);
    assert_eq!(
        uploaded(&applied),
        2,
        "the binary's layer and the config: {applied:#?}"
    );
    assert_eq!(event(&applied, "result")["release"], 2);
    drop(sim);
    drop(registry);
}

#[test]
fn oci_dir_writes_a_layout_after_approval() {
    let sim = Sim::start(SimConfig::default()).expect("sim");
    let mut env = Env::new();
    env.kubeconfig = sim.kubeconfig_path().display().to_string();
    let layout = env.dir.path().join("layout");
    let layout_flag = layout.display().to_string();
    let out = env
        .run(&["deploy", "--oci-dir", &layout_flag])
        .assert()
        .code(3);
    let first = lines(&out);
    assert!(!layout.exists(), "nothing written before approval");
    let hash = event(&first, "plan")["hash"]
        .as_str()
        .expect("hash")
        .to_string();
    let digest = event(&first, "build")["digest"]
        .as_str()
        .expect("digest")
        .to_string();
    let out = env
        .run(&["deploy", "--oci-dir", &layout_flag, "--approve", &hash])
        .assert()
        .success();
    let done = lines(&out);
    assert_eq!(
        event(&done, "deliver")["reference"],
        format!("tiny-app@{digest}").as_str()
    );
    let index = std::fs::read_to_string(layout.join("index.json")).expect("index.json");
    assert!(index.contains(&digest), "{index}");
    let image = piceli_image::layout::read_image(&layout, &Digest::parse(&digest).expect("digest"))
        .expect("the layout holds the image");
    assert_eq!(image.digest.to_string(), digest);
}
