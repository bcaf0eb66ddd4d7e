//! [`Cluster`]: the one handle a test holds, on the local cluster or on a real control plane.

use std::path::Path;
use std::process::Command;

use piceli_sim::{RunningSim, Sim, SimConfig};

use crate::real::RealCluster;

/// The environment variable that points the end-to-end suites at a real cluster's kubeconfig.
pub const REAL_KUBECONFIG: &str = "PICELI_REAL_KUBECONFIG";

/// The cluster one test runs against. Dropping it stops the local cluster, or gives the real one to the
/// next test.
pub enum Cluster {
    /// The local cluster, in this process.
    Sim(RunningSim),
    /// A real control plane, shared with other tests in turn.
    Real(RealCluster),
}

/// An error starting or reaching a test cluster (the tests `expect` it).
pub type Error = Box<dyn std::error::Error + Send + Sync>;

impl Cluster {
    /// The cluster for a test that runs on both: the real one when [`REAL_KUBECONFIG`] is set, else a
    /// fresh local cluster with its default configuration (controllers on).
    pub fn start() -> Cluster {
        Cluster::start_with(SimConfig::default())
    }

    /// Like [`Cluster::start`], with `config` for the local cluster (a real cluster runs as it is): for a
    /// test that runs on both and wants, say, the local cluster's controllers off.
    pub fn start_with(config: SimConfig) -> Cluster {
        match std::env::var_os(REAL_KUBECONFIG).filter(|path| !path.is_empty()) {
            Some(path) => Cluster::Real(
                RealCluster::acquire(Path::new(&path))
                    .unwrap_or_else(|e| panic!("the real cluster of {REAL_KUBECONFIG}: {e}")),
            ),
            None => Cluster::start_sim(config),
        }
    }

    /// The local cluster with a given configuration, for a test that runs on the local cluster only
    /// (its name or doc comment says why).
    pub fn start_sim(config: SimConfig) -> Cluster {
        Cluster::Sim(Sim::start(config).expect("the local cluster starts"))
    }

    /// Stops the cluster: the local one shuts down; the real one goes to the next test.
    pub fn stop(self) {
        if let Cluster::Sim(sim) = self {
            sim.stop();
        }
    }

    /// Whether this is a real control plane.
    pub fn is_real(&self) -> bool {
        matches!(self, Cluster::Real(_))
    }

    /// The local cluster, for what only it offers; `None` on a real cluster.
    pub fn sim(&self) -> Option<&RunningSim> {
        match self {
            Cluster::Sim(sim) => Some(sim),
            Cluster::Real(_) => None,
        }
    }

    /// The kubeconfig file that reaches this cluster.
    pub fn kubeconfig_path(&self) -> &Path {
        match self {
            Cluster::Sim(sim) => sim.kubeconfig_path(),
            Cluster::Real(real) => real.kubeconfig_path(),
        }
    }

    /// The kubeconfig's contents.
    pub fn kubeconfig_yaml(&self) -> &str {
        match self {
            Cluster::Sim(sim) => sim.kubeconfig_yaml(),
            Cluster::Real(real) => real.kubeconfig_yaml(),
        }
    }

    /// The kubeconfig context to use (`piceli-sim`, or the real kubeconfig's current context unless
    /// `PICELI_REAL_CONTEXT` names another).
    pub fn context(&self) -> &str {
        match self {
            Cluster::Sim(_) => piceli_sim::kubeconfig::CONTEXT,
            Cluster::Real(real) => real.context(),
        }
    }

    /// The API server's URL.
    pub fn url(&self) -> String {
        match self {
            Cluster::Sim(sim) => sim.url(),
            Cluster::Real(real) => real.url().to_string(),
        }
    }

    /// The API server's address (host and port of [`Cluster::url`]), for a proxy in front of it.
    pub fn addr(&self) -> std::net::SocketAddr {
        use std::net::ToSocketAddrs;
        match self {
            Cluster::Sim(sim) => sim.addr(),
            Cluster::Real(real) => {
                let url = real.url();
                let authority = url
                    .split("://")
                    .nth(1)
                    .unwrap_or(url)
                    .split('/')
                    .next()
                    .unwrap_or_default();
                authority
                    .to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .unwrap_or_else(|| panic!("the real cluster's server `{url}` has no address"))
            }
        }
    }

    /// A `kube::Client` for this cluster (never from the environment). Call it inside a Tokio runtime.
    pub fn client(&self) -> Result<kube::Client, Error> {
        match self {
            Cluster::Sim(sim) => Ok(sim.client()?),
            Cluster::Real(real) => real.client(),
        }
    }

    /// `kubectl` aimed at this cluster only: `--kubeconfig` and `--context` set, `KUBECONFIG` removed, a
    /// discovery cache of this cluster's own (`KUBECACHEDIR`).
    pub fn kubectl(&self) -> Command {
        match self {
            Cluster::Sim(sim) => {
                let mut cmd = sim.kubectl();
                cmd.arg("--context").arg(piceli_sim::kubeconfig::CONTEXT);
                cmd
            }
            Cluster::Real(real) => real.kubectl(),
        }
    }
}
