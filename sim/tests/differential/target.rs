//! One side of the comparison: a cluster (an in-process sim, or the real control plane of
//! `PICELI_REAL_KUBECONFIG`) with what the runners need to reach it as different users.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use piceli_sim::{RunningSim, Sim, SimConfig};
use piceli_test_support::RealCluster;

/// Who a request is sent as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum User {
    /// The kubeconfig's own user (system:masters on both).
    Admin,
    /// The ServiceAccount token saved by a [`crate::differential::requests::Action::SaveToken`] step: no rights.
    Sa,
    /// A bearer token no authenticator knows.
    Bad,
    /// No credentials at all.
    Anonymous,
}

/// The token sent as [`User::Bad`].
pub const BAD_TOKEN: &str = "not-a-valid-token-at-all";

enum Hold {
    Sim(RunningSim),
    Real {
        /// Held for its turn on the cluster.
        _turn: RealCluster,
    },
}

/// A cluster under comparison.
pub struct Target {
    /// `sim` or `real` (the second sim is `real` too when no real cluster is given: it stands in).
    pub label: &'static str,
    hold: Hold,
    kubeconfig: PathBuf,
    context: String,
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// The node the cluster's pods run on (a name every cluster picks for itself).
    pub node: String,
    /// The admin user's name (each cluster's own).
    pub admin: String,
    cache: tempfile::TempDir,
    /// Scratch files (kubeconfigs of other users).
    pub work: tempfile::TempDir,
    /// The ServiceAccount token saved by the suite, once it is.
    pub sa_token: Mutex<Option<String>>,
}

impl Target {
    /// A fresh in-process sim with its default configuration (controllers on, as a real cluster).
    pub fn sim(label: &'static str) -> Target {
        let sim = Sim::start(SimConfig::default()).expect("the sim starts");
        let kubeconfig = sim.kubeconfig_path().to_path_buf();
        let url = sim.url();
        Target::new(
            label,
            Hold::Sim(sim),
            kubeconfig,
            piceli_sim::kubeconfig::CONTEXT.into(),
            url,
        )
    }

    /// The real control plane of `kubeconfig` (waits for its turn and resets it).
    pub fn real(kubeconfig: &Path) -> Target {
        let real = RealCluster::acquire(kubeconfig)
            .unwrap_or_else(|e| panic!("the real cluster of {}: {e}", kubeconfig.display()));
        let path = real.kubeconfig_path().to_path_buf();
        let context = real.context().to_string();
        let url = real.url().to_string();
        Target::new("real", Hold::Real { _turn: real }, path, context, url)
    }

    fn new(
        label: &'static str,
        hold: Hold,
        kubeconfig: PathBuf,
        context: String,
        url: String,
    ) -> Target {
        let mut t = Target {
            label,
            hold,
            kubeconfig,
            context,
            url,
            node: String::new(),
            admin: String::new(),
            cache: tempfile::tempdir().expect("cache dir"),
            work: tempfile::tempdir().expect("work dir"),
            sa_token: Mutex::new(None),
        };
        t.node = t.first_node();
        let out = t
            .kubectl_command(User::Admin)
            .args([
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}",
            ])
            .output()
            .expect("kubectl runs");
        t.admin = String::from_utf8_lossy(&out.stdout).trim().to_string();
        t
    }

    /// The in-process sim, if this is one.
    pub fn as_sim(&self) -> Option<&RunningSim> {
        match &self.hold {
            Hold::Sim(s) => Some(s),
            Hold::Real { .. } => None,
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn authority(&self) -> &str {
        self.url.trim_start_matches("https://")
    }

    fn first_node(&self) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let out = self
                .kubectl_command(User::Admin)
                .args(["get", "nodes", "-o", "name"])
                .output()
                .expect("kubectl runs");
            let text = String::from_utf8_lossy(&out.stdout);
            if let Some(n) = text.lines().next().and_then(|l| l.strip_prefix("node/")) {
                return n.to_string();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{}: no node",
                self.label
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// The kubeconfig and context that reach this cluster as `user`.
    pub fn kubeconfig_for(&self, user: User) -> (PathBuf, String) {
        if user == User::Admin {
            return (self.kubeconfig.clone(), self.context.clone());
        }
        let path = self.work.path().join(format!("{user:?}.kubeconfig"));
        let token = match user {
            User::Sa => self.sa_token.lock().expect("token").clone(),
            User::Bad => Some(BAD_TOKEN.to_string()),
            _ => None,
        };
        let (ca_key, ca) = self.ca();
        let user_body = match token {
            Some(t) => format!("{{token: {t}}}"),
            // A username and password make kubectl send Basic auth, which no authenticator of 1.33
            // takes: the request is anonymous (nothing at all would make it prompt).
            None => "{username: nobody, password: none}".to_string(),
        };
        let yaml = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: '{}', {ca_key}: '{ca}'}}\n\
             users:\n- name: u\n  user: {user_body}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u, namespace: default}}\n\
             current-context: x\n",
            self.url
        );
        std::fs::write(&path, yaml).expect("write kubeconfig");
        (path, "x".into())
    }

    /// The CA entry of the kubeconfig's cluster: (`certificate-authority-data` or `certificate-authority`, value).
    fn ca(&self) -> (&'static str, String) {
        let text = std::fs::read_to_string(&self.kubeconfig).expect("kubeconfig");
        for line in text.lines() {
            let l = line.trim();
            if let Some(v) = l.strip_prefix("certificate-authority-data:") {
                return ("certificate-authority-data", v.trim().to_string());
            }
            if let Some(v) = l.strip_prefix("certificate-authority:") {
                return ("certificate-authority", v.trim().to_string());
            }
        }
        panic!("{}: the kubeconfig names no CA", self.label)
    }

    /// `kubectl` reaching this cluster as `user`, with this target's own discovery cache.
    pub fn kubectl_command(&self, user: User) -> std::process::Command {
        let (kubeconfig, context) = self.kubeconfig_for(user);
        let mut cmd = std::process::Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--context")
            .arg(context)
            .env_remove("KUBECONFIG")
            .env("KUBECACHEDIR", self.cache.path().join(format!("{user:?}")))
            .current_dir(self.work.path());
        cmd
    }

    /// A `kube::Client` as `user` (call inside a Tokio runtime).
    pub fn client(&self, user: User) -> kube::Client {
        let (path, context) = self.kubeconfig_for(user);
        let yaml = std::fs::read_to_string(path).expect("kubeconfig");
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&yaml).expect("kubeconfig parses");
        let options = kube::config::KubeConfigOptions {
            context: Some(context),
            ..Default::default()
        };
        let mut config =
            futures::executor::block_on(kube::Config::from_custom_kubeconfig(kubeconfig, &options))
                .expect("kube config");
        if user == User::Anonymous {
            config.auth_info = Default::default();
        }
        kube::Client::try_from(config).expect("kube client")
    }

    /// The kubeconfig path and context for the admin user (the Python client's).
    pub fn admin_kubeconfig(&self) -> (&Path, &str) {
        (&self.kubeconfig, &self.context)
    }
}
