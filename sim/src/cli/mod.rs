//! The `piceli sim ...` commands: `serve` runs a cluster in the foreground; `start`, `stop` and
//! `status` manage one in the background through `DIR/sim.pid`.

mod route;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use piceli_core::{Code, Coded};

use crate::{Sim, SimConfig, SimError};

/// `piceli sim <command>`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SimCommand {
    /// Run a local Kubernetes API server in the foreground (writes DIR/kubeconfig).
    Serve {
        /// Cluster directory: state database, CA, token and kubeconfig.
        #[arg(long)]
        dir: PathBuf,
        /// Port on 127.0.0.1 (default: a free one).
        #[arg(long)]
        port: Option<u16>,
        /// Which built-in controllers run.
        #[command(flatten)]
        controllers: ControllerArgs,
    },
    /// Start `serve` in the background and wait until it is ready.
    Start {
        /// Cluster directory: state database, CA, token and kubeconfig.
        #[arg(long)]
        dir: PathBuf,
        /// Port on 127.0.0.1 (default: a free one).
        #[arg(long)]
        port: Option<u16>,
        /// Which built-in controllers run.
        #[command(flatten)]
        controllers: ControllerArgs,
    },
    /// Stop a background server started with `start`.
    Stop {
        /// Cluster directory.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Compact the cluster's watch history now, as an etcd compaction does: every watch that
    /// resumes from an older resourceVersion gets 410 Gone and must re-list (for testing clients'
    /// relist paths). Prints the resourceVersion compacted to.
    Compact {
        /// Cluster directory.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Route a Service port to a process on this machine: webhooks (and other calls the API server
    /// makes) to NAMESPACE/SERVICE:PORT reach ADDRESS, TLS verified for SERVICE.NAMESPACE.svc.
    /// `--delete` removes the route; no target lists the routes.
    Route {
        /// Cluster directory.
        #[arg(long)]
        dir: PathBuf,
        /// The Service port: NAMESPACE/SERVICE[:PORT] (port 443 by default).
        target: Option<String>,
        /// Where it is served on this machine, e.g. 127.0.0.1:8443.
        address: Option<std::net::SocketAddr>,
        /// Remove the route instead.
        #[arg(long)]
        delete: bool,
    },
    /// Report whether a server is running for the directory (exit code 1, PCL0214, when it is not).
    Status {
        /// Cluster directory.
        #[arg(long)]
        dir: PathBuf,
    },
}

/// How the simulated controllers run (`serve` and `start`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ControllerArgs {
    /// Run no controllers: a plain API server (no rollouts, pods stay as written).
    #[arg(long)]
    pub no_controllers: bool,
    /// Milliseconds from a pod's scheduling to Running and Ready (default 30).
    #[arg(long, value_name = "MS")]
    pub pod_ready_delay_ms: Option<u64>,
    /// Milliseconds a connection may take for its TLS handshake and each request's headers, from the
    /// request's first byte (default 10000); slower ones are closed.
    #[arg(long, value_name = "MS")]
    pub header_timeout_ms: Option<u64>,
    /// Milliseconds a keep-alive connection may stay idle between requests (default 90000, as
    /// kube-apiserver); idler ones are closed.
    #[arg(long, value_name = "MS")]
    pub idle_timeout_ms: Option<u64>,
    /// Turn RBAC off: every authenticated request is allowed (the admin token always is).
    #[arg(long)]
    pub no_rbac: bool,
    /// How many change events watches can resume from (default 20000); older ones are compacted.
    #[arg(long, value_name = "EVENTS")]
    pub watch_history: Option<u64>,
    /// Compact the watch history every SECONDS, as kube-apiserver's `--etcd-compaction-interval`
    /// (each tick drops the events older than the previous tick); default: by count only.
    #[arg(long, value_name = "SECONDS")]
    pub compaction_interval: Option<u64>,
    /// Run the built-in cert-manager: cert-manager.io/v1 Issuers, ClusterIssuers and Certificates
    /// (selfSigned and CA issuers write the Secrets, renew them) and CA injection into webhook
    /// configurations annotated `cert-manager.io/inject-ca-from`.
    #[arg(long)]
    pub cert_manager: bool,
    /// Milliseconds between the bookmarks of a watch that asked for them (default 60000, as
    /// kube-apiserver's watch cache); for tests that need them sooner.
    #[arg(long, value_name = "MS", hide = true)]
    pub bookmark_interval_ms: Option<u64>,
}

impl ControllerArgs {
    fn config(&self) -> crate::controllers::ControllerConfig {
        let mut c = crate::controllers::ControllerConfig {
            enabled: !self.no_controllers,
            ..Default::default()
        };
        if let Some(ms) = self.pod_ready_delay_ms {
            c.pod_ready_delay = Duration::from_millis(ms);
        }
        c
    }

    fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.no_controllers {
            out.push("--no-controllers".to_string());
        }
        if let Some(ms) = self.pod_ready_delay_ms {
            out.extend(["--pod-ready-delay-ms".to_string(), ms.to_string()]);
        }
        if let Some(ms) = self.header_timeout_ms {
            out.extend(["--header-timeout-ms".to_string(), ms.to_string()]);
        }
        if let Some(ms) = self.idle_timeout_ms {
            out.extend(["--idle-timeout-ms".to_string(), ms.to_string()]);
        }
        if self.no_rbac {
            out.push("--no-rbac".to_string());
        }
        if let Some(n) = self.watch_history {
            out.extend(["--watch-history".to_string(), n.to_string()]);
        }
        if self.cert_manager {
            out.push("--cert-manager".to_string());
        }
        if let Some(s) = self.compaction_interval {
            out.extend(["--compaction-interval".to_string(), s.to_string()]);
        }
        if let Some(ms) = self.bookmark_interval_ms {
            out.extend(["--bookmark-interval-ms".to_string(), ms.to_string()]);
        }
        out
    }
}

/// Errors of the sim commands.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The server could not start or keep running.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// `start` found a live server for the directory.
    #[error("a server is already running for {dir} (pid {pid})")]
    AlreadyRunning {
        /// The cluster directory.
        dir: PathBuf,
        /// The live server's pid.
        pid: u32,
    },
    /// `status` or `stop` found no live server for the directory.
    #[error("no server is running for {}", .0.display())]
    NotRunning(PathBuf),
    /// Starting or stopping the background process, or using the cluster, failed.
    #[error("{0}")]
    Other(String),
    /// An argument is missing or malformed.
    #[error("{0}")]
    Usage(String),
}

impl Coded for CliError {
    fn code(&self) -> Code {
        match self {
            CliError::Sim(e) => e.code(),
            CliError::AlreadyRunning { .. } => Code::SimAlreadyRunning,
            CliError::NotRunning(_) => Code::SimNotRunning,
            CliError::Other(_) => Code::SimFailed,
            CliError::Usage(_) => Code::SimUsage,
        }
    }

    fn help(&self) -> String {
        match self {
            CliError::Sim(e) => e.help(),
            CliError::AlreadyRunning { dir, .. } => format!(
                "use it (kubeconfig: {}), or stop it first with `piceli sim stop --dir {}`",
                dir.join("kubeconfig").display(),
                dir.display()
            ),
            CliError::NotRunning(dir) => {
                format!("start one with `piceli sim start --dir {}`", dir.display())
            }
            CliError::Other(_) | CliError::Usage(_) => self.code().info().explanation.to_string(),
        }
    }
}

/// Prints an error the way every Piceli binary does (`error[CODE]: message`, then `help:`) and gives
/// the exit code of its class.
fn report(e: &CliError) -> ExitCode {
    eprintln!("error[{}]: {e}\n  help: {}", e.code(), e.help());
    ExitCode::from(e.exit_class().exit_code())
}

/// Runs a command and reports errors on stderr.
pub fn run(cmd: SimCommand) -> ExitCode {
    let result = match cmd {
        SimCommand::Serve {
            dir,
            port,
            controllers,
        } => serve(&dir, port, &controllers),
        SimCommand::Start {
            dir,
            port,
            controllers,
        } => start(&dir, port, &controllers),
        SimCommand::Stop { dir } => stop(&dir),
        SimCommand::Compact { dir } => compact(&dir),
        SimCommand::Route {
            dir,
            target,
            address,
            delete,
        } => route::run(&dir, target.as_deref(), address, delete),
        SimCommand::Status { dir } => match status(&dir) {
            Ok(true) => Ok(()),
            Ok(false) => Err(CliError::NotRunning(dir)),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(&e),
    }
}

fn pid_file(dir: &Path) -> PathBuf {
    dir.join("sim.pid")
}

/// The pid and URL of the running server, if its process is alive (a killed server, even one left
/// as a zombie, is not: a new server takes its pid file over).
fn running(dir: &Path) -> Option<(u32, String)> {
    let text = std::fs::read_to_string(pid_file(dir)).ok()?;
    let mut lines = text.lines();
    let pid: u32 = lines.next()?.trim().parse().ok()?;
    let url = lines.next().unwrap_or("").to_string();
    crate::process::alive(pid).then_some((pid, url))
}

fn serve(dir: &Path, port: Option<u16>, controllers: &ControllerArgs) -> Result<(), CliError> {
    // Several servers may share a directory; the pid file names the one `stop` and `status` manage.
    let sharing = running(dir).filter(|(pid, _)| *pid != std::process::id());
    crate::apiserver::filters::request_log::install_from_env();
    let sim = Sim::start(SimConfig {
        dir: Some(dir.to_path_buf()),
        port,
        controllers: controllers.config(),
        header_timeout: controllers.header_timeout_ms.map(Duration::from_millis),
        idle_timeout: controllers.idle_timeout_ms.map(Duration::from_millis),
        no_rbac: controllers.no_rbac,
        watch_history: controllers.watch_history,
        compaction_interval: controllers.compaction_interval.map(Duration::from_secs),
        cert_manager: controllers.cert_manager,
        bookmark_interval: controllers.bookmark_interval_ms.map(Duration::from_millis),
    })?;
    println!(
        "piceli-sim serving {} (kubeconfig: {})",
        sim.url(),
        sim.kubeconfig_path().display()
    );
    match &sharing {
        Some((pid, url)) => println!(
            "piceli-sim sharing {} with pid {pid} at {url}",
            dir.display()
        ),
        None => crate::apiserver::tls::write_private(
            &pid_file(dir),
            &format!("{}\n{}\n", std::process::id(), sim.url()),
        )?,
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Other(e.to_string()))?;
    rt.block_on(async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {}
        }
    });
    sim.stop();
    if running(dir).is_some_and(|(pid, _)| pid == std::process::id()) {
        let _ = std::fs::remove_file(pid_file(dir));
    }
    Ok(())
}

/// `piceli sim compact`: compacts the shared state database of the cluster in `dir` (the servers
/// read watch history from it, so their watches from before now get 410 Gone).
fn compact(dir: &Path) -> Result<(), CliError> {
    if !dir.join("state.db").exists() {
        return Err(CliError::NotRunning(dir.to_path_buf()));
    }
    let store = crate::storage::Store::open(Some(dir))?;
    let rv = store.compact_now().map_err(SimError::from)?;
    println!("compacted {} to resourceVersion {rv}", dir.display());
    Ok(())
}

fn start(dir: &Path, port: Option<u16>, controllers: &ControllerArgs) -> Result<(), CliError> {
    std::fs::create_dir_all(dir).map_err(|e| SimError::io(dir, e))?;
    if let Some((pid, _)) = running(dir) {
        return Err(CliError::AlreadyRunning {
            dir: dir.to_path_buf(),
            pid,
        });
    }
    let _ = std::fs::remove_file(pid_file(dir));
    // Re-run this same program with `serve` in place of `start`.
    let exe = std::env::current_exe()
        .map_err(|e| CliError::Other(format!("cannot find the current executable: {e}")))?;
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().position(|a| a == "start") {
        Some(i) => args[i] = "serve".into(),
        None => {
            args = vec!["serve".into(), "--dir".into(), dir.display().to_string()];
            if let Some(p) = port {
                args.extend(["--port".into(), p.to_string()]);
            }
            args.extend(controllers.args());
        }
    }
    let log_path = dir.join("sim.log");
    let log = std::fs::File::create(&log_path).map_err(|e| SimError::io(&log_path, e))?;
    let log2 = log.try_clone().map_err(|e| SimError::io(&log_path, e))?;
    let mut command = std::process::Command::new(exe);
    // mimalloc (the binaries' allocator) gives freed pages back to the system at once rather than after a
    // delay that only passes when the thread allocates again: a background cluster's resident set then
    // returns near its baseline after a burst of big requests (sim/tests/it/memory.rs). A value the user set
    // is kept.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        command.env("MIMALLOC_PURGE_DELAY", "0");
    }
    let mut child = command
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(log2)
        .spawn()
        .map_err(|e| CliError::Other(format!("cannot start the server: {e}")))?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Some((pid, url)) = running(dir)
            && pid == child.id()
        {
            println!(
                "piceli-sim running at {url} (pid {pid}, kubeconfig: {})",
                dir.join("kubeconfig").display()
            );
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(CliError::Other(format!(
                "the server exited ({status}): {}",
                log.trim()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(CliError::Other(format!(
        "the server did not become ready; see {}",
        log_path.display()
    )))
}

fn stop(dir: &Path) -> Result<(), CliError> {
    let Some((pid, _)) = running(dir) else {
        return Err(CliError::NotRunning(dir.to_path_buf()));
    };
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .map_err(|e| CliError::Other(format!("cannot run kill: {e}")))?
        .success();
    if !ok {
        return Err(CliError::Other(format!("could not signal pid {pid}")));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if running(dir).is_none() {
            println!("piceli-sim stopped (pid {pid})");
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(CliError::Other(format!("pid {pid} did not exit")))
}

fn status(dir: &Path) -> Result<bool, CliError> {
    match running(dir) {
        Some((pid, url)) => {
            println!(
                "running at {url} (pid {pid}, kubeconfig: {})",
                dir.join("kubeconfig").display()
            );
            Ok(true)
        }
        None => {
            println!("not running");
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: SimCommand,
    }

    #[test]
    fn the_hidden_bookmark_interval_reaches_serve_and_is_passed_on_by_start() {
        let cli = Cli::try_parse_from([
            "sim",
            "start",
            "--dir",
            "d",
            "--bookmark-interval-ms",
            "250",
        ])
        .expect("parses");
        let SimCommand::Start { controllers, .. } = cli.cmd else {
            panic!("not start");
        };
        assert_eq!(controllers.bookmark_interval_ms, Some(250));
        let args = controllers.args();
        assert!(
            args.windows(2)
                .any(|w| w == ["--bookmark-interval-ms", "250"]),
            "{args:?}"
        );
        let mut help = Vec::new();
        let mut command = Cli::command();
        let serve = command.find_subcommand_mut("serve").expect("serve");
        serve.write_long_help(&mut help).expect("help");
        let help = String::from_utf8_lossy(&help);
        assert!(help.contains("--idle-timeout-ms"), "{help}");
        assert!(!help.contains("bookmark"), "{help}");
    }
}
