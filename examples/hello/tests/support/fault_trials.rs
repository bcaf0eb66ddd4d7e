//! Commit-exact fault trials, shared by the hello and fleet tests: for N = 1, 2, … run an app binary's
//! `apply --approve H` (or `deploy --approve H`) with `PICELI_FAULT_ABORT_AFTER_COMMIT=N`, so the process
//! aborts right after its N-th journal commit (feature `fault-injection`), then recover the way a user
//! would (`resume`, resp. `deploy --resume`, and when that finds nothing to resume, `apply --approve H`,
//! resp. `deploy --approve H`, again),
//! call the recovery a second time, and prove convergence:
//!
//! - the recoveries exit 0, and the second one writes nothing (no object's version changes);
//! - a new `plan` shows no changes (exit 0);
//! - every Deployment is at `metadata.generation` 1 (never written twice with different content);
//! - the release record ConfigMap `piceli-release-<app>` exists and names the journal's live release and
//!   the approved hash.
//!
//! The loop ends at the first N whose run completes without being killed (that run is checked the same
//! way). Each trial has its own namespace (deleted after it) and state directory. Every problem of every
//! trial is collected, so one failing N does not hide the others.

#![allow(dead_code)] // each test crate uses a part

use super::cluster_state::{delete_namespace, generations, release_record, versions};
use assert_cmd::Command;
use piceli_sim::RunningSim;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The variable the `fault-injection` seam reads.
pub use piceli::runtime::journal::fault::ABORT_AFTER_COMMIT;
/// SIGABRT on Linux: what `std::process::abort` ends a process with.
const SIGABRT: i32 = 6;
/// No trial loop runs longer than this many kill points.
const MAX_TRIALS: u64 = 1000;

/// Which command is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `plan`, then `apply --approve H` killed; recovery `resume`.
    Apply,
    /// `deploy` (for the hash), then `deploy --approve H` killed; recovery `deploy --resume`.
    Deploy,
}

/// One kill point's result.
#[derive(Debug)]
pub struct Trial {
    /// The commit after which the process was to abort.
    pub n: u64,
    /// Whether it was killed (`false`: the run completed; the last trial).
    pub killed: bool,
    /// What the recovery did, in brief.
    pub recovery: String,
    /// Objects written again by a recovery that should have written nothing, plus Deployments above
    /// generation 1.
    pub double_writes: usize,
    /// Everything that did not hold.
    pub problems: Vec<String>,
}

/// All trials of one loop.
#[derive(Debug)]
pub struct Summary {
    /// What was driven (`hello apply`).
    pub what: String,
    /// Every trial, in N order.
    pub trials: Vec<Trial>,
}

impl Summary {
    /// Trials whose every check held.
    pub fn converged(&self) -> usize {
        self.trials.iter().filter(|t| t.problems.is_empty()).count()
    }

    /// Double writes over all trials.
    pub fn double_writes(&self) -> usize {
        self.trials.iter().map(|t| t.double_writes).sum()
    }

    /// One line per failing trial, and a total.
    pub fn report(&self) -> String {
        let mut out = format!(
            "{}: {} kill trial(s) (N = 1..={}), {} converged, {} double write(s)\n",
            self.what,
            self.trials.len(),
            self.trials.len(),
            self.converged(),
            self.double_writes()
        );
        for t in self.trials.iter().filter(|t| !t.problems.is_empty()) {
            out.push_str(&format!(
                "  N={} ({}; recovery: {}):\n",
                t.n,
                if t.killed { "killed" } else { "not killed" },
                t.recovery
            ));
            for p in &t.problems {
                out.push_str(&format!("    - {p}\n"));
            }
        }
        out
    }

    /// Panics with the report unless every trial converged without a double write.
    pub fn assert_all_converged(&self) {
        if self.converged() == self.trials.len() && self.double_writes() == 0 {
            eprintln!("{}", self.report());
        }
        assert!(
            self.converged() == self.trials.len() && self.double_writes() == 0,
            "{}",
            self.report()
        );
    }
}

/// What the trials drive.
pub struct Trials<'a> {
    /// The app binary (`env!("CARGO_BIN_EXE_…")`).
    pub bin: &'a Path,
    /// The app's name (for the release record's name).
    pub app: &'a str,
    /// The local cluster.
    pub sim: &'a RunningSim,
    /// Which command is killed.
    pub mode: Mode,
    /// Namespace prefix (`PREFIX-N`), distinct per loop.
    pub prefix: &'a str,
    /// `--timeout` for the readiness waits.
    pub timeout_secs: u32,
    /// How many trials run at once.
    pub parallel: usize,
}

/// The last line of stdout as JSON (`deploy` streams JSON lines ending with its `result`).
/// Whether `history -o json` lists a release of the plan `hash`.
fn released(history: &Output, hash: &str) -> bool {
    last_json(history)["releases"]
        .as_array()
        .is_some_and(|list| list.iter().any(|r| r["plan"] == hash))
}

fn last_json(out: &Output) -> serde_json::Value {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// How a process ended, with its error if it printed one.
fn describe(out: &Output) -> String {
    let status = match (out.status.code(), out.status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(SIGABRT)) => "aborted".to_string(),
        (None, Some(9)) => "timed out (killed)".to_string(),
        (None, Some(s)) => format!("signal {s}"),
        (None, None) => "ended".to_string(),
    };
    let error = &last_json(out)["error"];
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stderr = stderr.trim();
    if error.is_object() {
        format!(
            "{status}: {}",
            error["message"].as_str().unwrap_or_default()
        )
    } else if !stderr.is_empty() {
        let tail: String = stderr
            .chars()
            .rev()
            .take(300)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{status}: {tail}")
    } else {
        status
    }
}

impl Trials<'_> {
    /// Runs the loop: N = 1, 2, … until a run completes without being killed, `parallel` trials at a time
    /// (each is independent: its own namespace and state directory). Trials past the first completed run
    /// of a batch are dropped.
    pub fn run(&self, what: &str) -> Summary {
        let rt = tokio::runtime::Runtime::new().expect("runtime");
        let work = tempfile::tempdir().expect("temp dir");
        let parallel = self.parallel.max(1) as u64;
        let mut trials = Vec::new();
        let mut next = 1;
        'batches: while next <= MAX_TRIALS {
            let batch: Vec<Trial> = std::thread::scope(|scope| {
                let running: Vec<_> = (next..next + parallel)
                    .map(|n| {
                        let rt = &rt;
                        let work = work.path();
                        scope.spawn(move || self.trial(rt, work, n))
                    })
                    .collect();
                running
                    .into_iter()
                    .map(|t| t.join().expect("a trial panicked"))
                    .collect()
            });
            next += parallel;
            for trial in batch {
                let done = !trial.killed;
                trials.push(trial);
                if done {
                    break 'batches;
                }
            }
        }
        Summary {
            what: what.to_string(),
            trials,
        }
    }

    fn cmd(&self, dir: &Path, namespace: &str, state: &Path) -> Command {
        let home = dir.join("home");
        std::fs::create_dir_all(home.join(".kube")).expect("mkdir");
        std::fs::write(home.join(".kube/config"), "this: [is not a kubeconfig").expect("poison");
        let mut cmd = Command::new(self.bin);
        cmd.current_dir(dir)
            .env("HOME", &home)
            .env("KUBECONFIG", home.join(".kube/config"))
            .env_remove(ABORT_AFTER_COMMIT)
            .arg("--kubeconfig")
            .arg(self.sim.kubeconfig_path())
            .args(["--context", "piceli-sim", "--namespace", namespace])
            .arg("--state-dir")
            .arg(state)
            .args(["-o", "json", "--timeout", &self.timeout_secs.to_string()])
            .timeout(std::time::Duration::from_secs(300));
        cmd
    }

    fn run_cmd(&self, dir: &Path, namespace: &str, state: &Path, args: &[&str]) -> Output {
        self.cmd(dir, namespace, state)
            .args(args)
            .output()
            .expect("run the app binary")
    }

    fn trial(&self, rt: &tokio::runtime::Runtime, work: &Path, n: u64) -> Trial {
        let namespace = format!("{}-{n}", self.prefix);
        let state: PathBuf = work.join(format!("state-{n}"));
        let mut problems = Vec::new();
        let mut recovery = String::new();
        let mut double_writes = 0;
        let run = |args: &[&str]| self.run_cmd(work, &namespace, &state, args);

        // The hash to approve.
        let first = match self.mode {
            Mode::Apply => run(&["plan"]),
            Mode::Deploy => run(&["deploy"]),
        };
        // The plan's line (deploy streams a `stage` line as each stage ends, before and after it).
        let hash = String::from_utf8_lossy(&first.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["event"] != "stage")
            .and_then(|v| v["hash"].as_str().map(str::to_string));
        let Some(hash) = hash.filter(|_| first.status.code() == Some(3)) else {
            problems.push(format!("planning: {}", describe(&first)));
            return Trial {
                n,
                killed: false,
                recovery,
                double_writes,
                problems,
            };
        };

        // The run, killed right after commit N.
        let verb = match self.mode {
            Mode::Apply => "apply",
            Mode::Deploy => "deploy",
        };
        let killed_run = self
            .cmd(work, &namespace, &state)
            .args([verb, "--approve", &hash])
            .env(ABORT_AFTER_COMMIT, n.to_string())
            .output()
            .expect("run the app binary");
        let killed = killed_run.status.signal() == Some(SIGABRT);
        if !killed && !killed_run.status.success() {
            problems.push(format!("the run itself: {}", describe(&killed_run)));
        }

        // Recovery (only after a kill), then the second call that must write nothing.
        if killed {
            match self.mode {
                Mode::Apply => {
                    let out = run(&["resume"]);
                    let v = last_json(&out);
                    recovery =
                        format!("resume: release {}, {} written", v["release"], v["written"]);
                    if !out.status.success() {
                        problems.push(format!("`resume`: {}", describe(&out)));
                    } else if v["release"].is_null() && !released(&run(&["history"]), &hash) {
                        // Killed before the release began: nothing to resume, and the same hash can be
                        // approved again (its preconditions still hold, since nothing was written).
                        let again = run(&["apply", "--approve", &hash]);
                        recovery
                            .push_str(&format!("; apply --approve again: {}", describe(&again)));
                        if !again.status.success() {
                            problems.push(format!(
                                "`apply --approve` after nothing to resume: {}",
                                describe(&again)
                            ));
                        }
                    }
                }
                Mode::Deploy => {
                    let out = run(&["deploy", "--resume"]);
                    let v = last_json(&out);
                    recovery = format!(
                        "deploy --resume: run {}, release {}",
                        v["run"], v["release"]
                    );
                    if !out.status.success() {
                        problems.push(format!("`deploy --resume`: {}", describe(&out)));
                    } else if v["run"].is_null() {
                        // Nothing to resume: the same hash can be approved again.
                        let again = run(&["deploy", "--approve", &hash]);
                        recovery
                            .push_str(&format!("; deploy --approve again: {}", describe(&again)));
                        if !again.status.success() {
                            problems.push(format!(
                                "`deploy --approve` after nothing to resume: {}",
                                describe(&again)
                            ));
                        }
                    }
                }
            }
        } else {
            recovery = "none needed".into();
        }
        let before = rt.block_on(versions(self.sim, &namespace));
        let second = match self.mode {
            Mode::Apply => run(&["resume"]),
            Mode::Deploy => run(&["deploy", "--resume"]),
        };
        let v = last_json(&second);
        if !second.status.success() {
            problems.push(format!("second recovery call: {}", describe(&second)));
        } else {
            let did_something = match self.mode {
                Mode::Apply => !v["release"].is_null() || v["written"].as_u64().unwrap_or(0) > 0,
                Mode::Deploy => !v["run"].is_null(),
            };
            if did_something {
                problems.push(format!("the second recovery call still had work: {v}"));
            }
        }
        let after = rt.block_on(versions(self.sim, &namespace));
        for (key, version) in &before {
            match after.get(key) {
                Some(now) if now == version => {}
                Some(now) => {
                    double_writes += 1;
                    problems.push(format!(
                        "the second recovery call rewrote {key} ({version} → {now})"
                    ));
                }
                None => problems.push(format!("the second recovery call removed {key}")),
            }
        }

        // Convergence.
        let plan = run(&["plan"]);
        if plan.status.code() != Some(0) {
            let v = last_json(&plan);
            let changes: Vec<String> = v["actions"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter(|a| a["action"] != "unchanged")
                        .map(|a| {
                            format!(
                                "{} {}/{}",
                                a["action"].as_str().unwrap_or("?"),
                                a["kind"].as_str().unwrap_or("?"),
                                a["name"].as_str().unwrap_or("?")
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            problems.push(format!(
                "a new plan is not a no-op ({}): {}",
                describe(&plan),
                changes.join(", ")
            ));
        }
        let generations = rt.block_on(generations(self.sim, &namespace));
        for (name, generation) in &generations {
            if *generation != 1 {
                double_writes += 1;
                problems.push(format!("Deployment {name} is at generation {generation}"));
            }
        }
        let history = last_json(&run(&["history"]));
        let live = history["releases"].as_array().and_then(|r| {
            r.iter()
                .find(|r| r["state"] == "succeeded")
                .and_then(|r| r["release"].as_u64())
        });
        let record = rt.block_on(release_record(self.sim, &namespace, self.app));
        match (live, record) {
            (None, _) => problems.push(format!("the journal has no succeeded release: {history}")),
            (_, None) => problems.push(format!(
                "the release record piceli-release-{} is missing",
                self.app
            )),
            (Some(live), Some((release, plan))) => {
                if release != live.to_string() || plan != hash {
                    problems.push(format!(
                        "the release record names release {release} plan {plan}, the journal release {live} plan {hash}"
                    ));
                }
            }
        }
        rt.block_on(delete_namespace(self.sim, &namespace));
        Trial {
            n,
            killed,
            recovery,
            double_writes,
            problems,
        }
    }
}
