//! [`RealCluster`]: a real control plane shared by the tests in turn, reset before each test.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::cluster::Error;

/// Namespaces every cluster has, which a reset keeps.
const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Objects in `default` that belong to the cluster, which a reset keeps (by name, for every kind).
const DEFAULT_KEEPS: [&str; 3] = ["kubernetes", "kube-root-ca.crt", "default"];

/// Namespaced kinds a reset clears from the `default` namespace.
const DEFAULT_KINDS: &str = "deployments,statefulsets,daemonsets,replicasets,jobs,cronjobs,pods,services,\
configmaps,secrets,persistentvolumeclaims,serviceaccounts,roles,rolebindings,leases.coordination.k8s.io,\
ingresses,horizontalpodautoscalers,poddisruptionbudgets,networkpolicies,endpoints";

/// How long a reset waits for the namespaces it deleted to go (the namespace controller empties them).
const RESET_TIMEOUT: Duration = Duration::from_secs(180);

/// How long a reset lets finalizers run before it removes those of objects being deleted (an operator a
/// test killed never removes its own).
const FINALIZER_GRACE: Duration = Duration::from_secs(6);

/// A real cluster, held by one test at a time (an exclusive lock on a file named after its kubeconfig,
/// across threads and processes).
pub struct RealCluster {
    kubeconfig_path: PathBuf,
    kubeconfig_yaml: String,
    context: String,
    url: String,
    cache: tempfile::TempDir,
    _turn: File,
}

impl RealCluster {
    /// Waits for this process's turn on the cluster of `kubeconfig`, then resets it: every namespace but
    /// the system ones deleted (and gone), the test kinds in `default` deleted, and the cluster-scoped
    /// objects tests make (CRDs, webhook configurations, non-bootstrap cluster roles and bindings,
    /// persistent volumes) deleted.
    pub fn acquire(kubeconfig: &Path) -> Result<RealCluster, Error> {
        let kubeconfig_path = std::fs::canonicalize(kubeconfig)
            .map_err(|e| format!("{}: {e}", kubeconfig.display()))?;
        let kubeconfig_yaml = std::fs::read_to_string(&kubeconfig_path)
            .map_err(|e| format!("{}: {e}", kubeconfig_path.display()))?;
        let parsed = kube::config::Kubeconfig::from_yaml(&kubeconfig_yaml)?;
        let context = std::env::var("PICELI_REAL_CONTEXT")
            .ok()
            .filter(|c| !c.is_empty())
            .or(parsed.current_context.clone())
            .ok_or("the real kubeconfig has no current-context; set PICELI_REAL_CONTEXT")?;
        let url = server_of(&parsed, &context)?;
        let turn = take_turn(&kubeconfig_path)?;
        let real = RealCluster {
            kubeconfig_path,
            kubeconfig_yaml,
            context,
            url,
            cache: tempfile::tempdir()?,
            _turn: turn,
        };
        real.reset()?;
        Ok(real)
    }

    /// The kubeconfig file.
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// The kubeconfig's contents.
    pub fn kubeconfig_yaml(&self) -> &str {
        &self.kubeconfig_yaml
    }

    /// The context the tests use.
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The API server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A `kube::Client` from the kubeconfig and context (never from the environment).
    pub fn client(&self) -> Result<kube::Client, Error> {
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&self.kubeconfig_yaml)?;
        let options = kube::config::KubeConfigOptions {
            context: Some(self.context.clone()),
            ..Default::default()
        };
        // Reading a kubeconfig of certificates or tokens does no I/O that needs a runtime.
        let config = futures::executor::block_on(kube::Config::from_custom_kubeconfig(
            kubeconfig, &options,
        ))?;
        Ok(kube::Client::try_from(config)?)
    }

    /// `kubectl` aimed at this cluster and context, with this test's own discovery cache.
    pub fn kubectl(&self) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig")
            .arg(&self.kubeconfig_path)
            .arg("--context")
            .arg(&self.context)
            .env_remove("KUBECONFIG")
            .env("KUBECACHEDIR", self.cache.path());
        cmd
    }

    fn reset(&self) -> Result<(), Error> {
        let namespaces = self.run(&["get", "namespaces", "-o", "name"])?;
        let doomed: Vec<String> = namespaces
            .lines()
            .filter_map(|l| l.strip_prefix("namespace/"))
            .filter(|n| !SYSTEM_NAMESPACES.contains(n))
            .map(str::to_string)
            .collect();
        if !doomed.is_empty() {
            let mut args = vec!["delete", "namespaces", "--wait=false", "--ignore-not-found"];
            args.extend(doomed.iter().map(String::as_str));
            self.run(&args)?;
        }
        let keep = DEFAULT_KEEPS
            .iter()
            .map(|n| format!("metadata.name!={n}"))
            .collect::<Vec<_>>()
            .join(",");
        self.run(&[
            "delete",
            DEFAULT_KINDS,
            "-n",
            "default",
            "--field-selector",
            &keep,
            "--wait=false",
            "--ignore-not-found",
        ])?;
        self.run(&[
            "delete",
            "customresourcedefinitions,mutatingwebhookconfigurations,validatingwebhookconfigurations,\
             persistentvolumes",
            "--all",
            "--wait=false",
            "--ignore-not-found",
        ])?;
        self.run(&[
            "delete",
            "clusterroles,clusterrolebindings",
            "-l",
            "!kubernetes.io/bootstrapping",
            "--wait=false",
            "--ignore-not-found",
        ])?;
        // Pods go at once: a namespace's deletion otherwise waits out their grace period (the namespace
        // controller requeues after half of it), and kwok is the kubelet that would confirm them.
        let system_pods = SYSTEM_NAMESPACES[1..]
            .iter()
            .map(|n| format!("metadata.namespace!={n}"))
            .collect::<Vec<_>>()
            .join(",");
        self.run(&[
            "delete",
            "pods",
            "--all-namespaces",
            "--field-selector",
            &system_pods,
            "--grace-period=0",
            "--force",
            "--wait=false",
            "--ignore-not-found",
        ])?;
        self.wait_gone(&doomed)
    }

    /// Waits until none of `namespaces` exists, and no persistent volume or CRD is left terminating.
    fn wait_gone(&self, namespaces: &[String]) -> Result<(), Error> {
        let deadline = Instant::now() + RESET_TIMEOUT;
        let mut next_release = Instant::now() + FINALIZER_GRACE;
        loop {
            let now = self.run(&["get", "namespaces,crds,pv", "-o", "name"])?;
            let left: Vec<&str> = now
                .lines()
                .filter(|l| {
                    l.strip_prefix("namespace/")
                        .is_some_and(|n| namespaces.iter().any(|d| d == n))
                        || l.starts_with("customresourcedefinition")
                        || l.starts_with("persistentvolume/")
                })
                .collect();
            if left.is_empty() {
                return Ok(());
            }
            if Instant::now() >= next_release {
                self.release_finalizers()?;
                next_release = Instant::now() + FINALIZER_GRACE;
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the reset of the real cluster left {} after {} s",
                    left.join(", "),
                    RESET_TIMEOUT.as_secs()
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Removes the finalizers of every object being deleted (a terminating CRD's kinds are listed but no
    /// longer say they can be patched; patching a finalizer away still works), but for namespaces and CRDs (whose
    /// finalizers the control plane itself runs once their contents are gone).
    fn release_finalizers(&self) -> Result<(), Error> {
        let resources = self.run(&["api-resources", "--verbs=list", "-o", "name"])?;
        let resources: Vec<&str> = resources
            .lines()
            .filter(|r| {
                !r.is_empty()
                    && *r != "namespaces"
                    && *r != "events"
                    && *r != "events.events.k8s.io"
                    && !r.starts_with("customresourcedefinitions.")
            })
            .collect();
        let listed = self.run(&["get", &resources.join(","), "-A", "-o", "json"])?;
        let listed: serde_json::Value = serde_json::from_str(&listed)?;
        for item in listed["items"].as_array().into_iter().flatten() {
            let meta = &item["metadata"];
            let stuck = meta["deletionTimestamp"].is_string()
                && meta["finalizers"].as_array().is_some_and(|f| !f.is_empty());
            let namespace = meta["namespace"].as_str();
            if !stuck || namespace.is_some_and(|n| SYSTEM_NAMESPACES[1..].contains(&n)) {
                continue;
            }
            let (Some(kind), Some(api_version), Some(name)) = (
                item["kind"].as_str(),
                item["apiVersion"].as_str(),
                meta["name"].as_str(),
            ) else {
                continue;
            };
            let group = api_version.split_once('/').map(|(g, _)| g).unwrap_or("");
            let resource = if group.is_empty() {
                kind.to_string()
            } else {
                format!("{kind}.{group}")
            };
            let mut args = vec![
                "patch",
                resource.as_str(),
                name,
                "--type=merge",
                "-p",
                r#"{"metadata":{"finalizers":null}}"#,
            ];
            if let Some(ns) = namespace {
                args.extend(["-n", ns]);
            }
            // It may be gone by now: the next look tells.
            let _ = self.run(&args);
        }
        Ok(())
    }

    fn run(&self, args: &[&str]) -> Result<String, Error> {
        let out: Output = self.kubectl().args(args).output().map_err(|e| {
            format!("kubectl (needed by the tests on a real cluster) did not run: {e}")
        })?;
        if !out.status.success() {
            return Err(format!(
                "kubectl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The server URL of `context`'s cluster.
fn server_of(kubeconfig: &kube::config::Kubeconfig, context: &str) -> Result<String, Error> {
    let cluster = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.cluster.clone())
        .ok_or_else(|| format!("the real kubeconfig has no context `{context}`"))?;
    kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .and_then(|c| c.cluster.as_ref())
        .and_then(|c| c.server.clone())
        .ok_or_else(|| format!("the real kubeconfig's cluster `{cluster}` has no server").into())
}

/// An exclusive lock on a file in the temporary directory named after the kubeconfig: the tests of
/// every thread and process take turns on one cluster.
fn take_turn(kubeconfig: &Path) -> Result<File, Error> {
    let name: String = kubeconfig
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let path = std::env::temp_dir().join(format!("piceli-real-cluster{name}.lock"));
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file)
}
