//! Simulated controllers (kwok-like, no containers): one loop per process that reconciles the whole
//! cluster whenever the store's event hub reports a change of a kind it manages, and on a timer for
//! timed transitions (pod readiness, crash-loop restarts, progress deadlines). A periodic wake-up
//! finding nothing published since the last turn and no timer due is skipped, and the controllers
//! read their objects from lists shared per kind (`informer.rs`), so an idle cluster costs nothing.
//!
//! Writes go through the API's own write pipeline (`object::write`, `delete::delete`) with the field
//! managers the real components use (`kube-controller-manager`, `kube-scheduler`, `kubelet`), so
//! watches, resourceVersions and managedFields stay right.
//!
//! Leadership: processes serving one directory share its SQLite database; a row in its `leader`
//! table (holder, expiry) elects the one process whose controllers act. The leader renews it every
//! loop turn; a stopping server releases it; a killed one's row is freed at once when its pid no
//! longer exists on this machine (Linux `/proc`), and otherwise expires after
//! [`ControllerConfig::lease_duration`]. In-memory simulators always lead.

pub(crate) mod cluster_defaults;
mod clusterrole_aggregation;
mod cronjob;
mod daemonset;
mod deployment;
mod gc;
pub(crate) mod informer;
mod job;
mod namespace;
pub(crate) mod namespace_deletion;
mod node;
mod replicaset;
mod service;
mod statefulset;
pub(crate) mod util;
mod volume;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::app::App;

pub use crate::kubelet::pod::BEHAVIOR_ANNOTATION;
pub use cronjob::SCHEDULE_EVERY_ANNOTATION;
pub(crate) use node::NODE_IP;

/// The field manager of the Deployment, ReplicaSet and garbage-collection controllers.
pub const MANAGER: &str = "kube-controller-manager";

/// The simulated node every pod is scheduled to.
pub const NODE_NAME: &str = "piceli-sim-node";

/// Timing and switches of the simulated controllers (part of [`crate::SimConfig`]).
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// Whether controllers run at all (off: a plain API server that only stores objects).
    pub enabled: bool,
    /// How long a scheduled pod takes to become Running and Ready (default 30 ms).
    pub pod_ready_delay: Duration,
    /// How long a pod with restartPolicy Never/OnFailure runs before it succeeds (default 50 ms).
    pub pod_run_duration: Duration,
    /// How often a crash-looping container restarts (default 1 s).
    pub crash_restart_interval: Duration,
    /// The longest the loop sleeps without an event or a timer due (default 1 s; a follower process
    /// tries to take leadership this often).
    pub resync: Duration,
    /// How long a process's leadership lasts without renewal (default 5 s).
    pub lease_duration: Duration,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            enabled: true,
            pod_ready_delay: Duration::from_millis(30),
            pod_run_duration: Duration::from_millis(50),
            crash_restart_interval: Duration::from_secs(1),
            resync: Duration::from_secs(1),
            lease_duration: Duration::from_secs(5),
        }
    }
}

/// What the controllers remember between turns (timers only; everything else is in the store).
#[derive(Default)]
pub(crate) struct State {
    /// When each pod (by uid) was first seen scheduled.
    pub scheduled_at: HashMap<String, Instant>,
    /// When each crash-looping pod last restarted.
    pub last_restart: HashMap<String, Instant>,
    /// Running pods (by uid) whose status was in line with their behaviour, at the resourceVersion
    /// and port-mapping changes it was checked at.
    pub settled: HashMap<String, (String, u64)>,
    /// The earliest time something timed is due.
    pub wake: Option<Instant>,
    /// HTTP readiness probes of pods whose probed port is mapped.
    pub probes: crate::kubelet::probe::Probes,
    /// Image pulls from loopback registries (pods of images pinned there).
    pub pulls: crate::kubelet::image_pull::ImagePulls,
    /// Objects in foreground deletion (store key, namespace, name) the garbage collector works on.
    pub foreground: HashSet<(String, String, String)>,
    /// Whether every kind was scanned for foreground deletions (at start, and after missed events).
    pub foreground_scanned: bool,
    /// When every namespaced kind was last swept for objects whose owners are gone.
    pub last_full_sweep: Option<Instant>,
    /// What the last turn started from (the hub's last resourceVersion and the port mappings'
    /// changes); `None` forces the next turn (at start, after missed events, on taking the lead).
    pub last_seen: Option<(u64, u64)>,
}

impl State {
    /// Asks for a turn no later than `at`.
    pub fn wake_at(&mut self, at: Instant) {
        self.wake = Some(self.wake.map_or(at, |w| w.min(at)));
    }
}

/// How many controller turns ran and how many were skipped because nothing changed and no timer
/// was due, and how many lists the controllers read from the store (see [`crate::RunningSim`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ControllerStats {
    /// Turns that ran the controllers.
    pub turns: u64,
    /// Turns skipped: no change since the last one, no timer due.
    pub skipped: u64,
    /// Lists read and parsed from the store (the others came from the informer cache).
    pub list_reads: u64,
}

/// The turn counters behind [`ControllerStats`].
#[derive(Default)]
pub(crate) struct Turns {
    run: AtomicU64,
    skipped: AtomicU64,
}

impl App {
    /// The controllers' counters so far.
    pub(crate) fn controller_stats(&self) -> ControllerStats {
        ControllerStats {
            turns: self.turns.run.load(Ordering::Relaxed),
            skipped: self.turns.skipped.load(Ordering::Relaxed),
            list_reads: self.informers.reads(),
        }
    }
}

/// Whether a turn can be skipped: it would start from what the last one started from (no event
/// published since, no port mapping changed) and no timer is due. Nothing a controller reads
/// changed, so the last turn's writes (if any) already triggered the turn that saw them.
fn can_skip(app: &App, st: &mut State, now: Instant) -> bool {
    let seen = (app.store.hub().last_published(), app.hooks.port_changes());
    let due = st.wake.is_some_and(|w| now >= w);
    if !due && st.last_seen == Some(seen) {
        return true;
    }
    st.last_seen = Some(seen);
    false
}

/// The controllers of one process; dropping it does not stop them (the runtime does).
pub struct Controllers {
    holder: String,
    app: Arc<App>,
}

impl Controllers {
    /// Starts the controller loop on the current Tokio runtime.
    pub fn start(app: Arc<App>, config: ControllerConfig) -> Controllers {
        let holder = format!(
            "{}-{}",
            std::process::id(),
            &crate::registry::object::new_uid()[..8]
        );
        let me = Controllers {
            holder: holder.clone(),
            app: app.clone(),
        };
        if config.enabled {
            tokio::spawn(run(app, config, holder));
        }
        me
    }

    /// Gives up leadership (called on shutdown).
    pub fn release(&self) {
        if self.app.store.file_backed() {
            self.app.store.release_lead(&self.holder);
        }
    }
}

/// Frees leadership held by a process of this machine that no longer exists (killed without
/// releasing it), so the others need not wait for the row to expire. Holders are `<pid>-<random>`.
fn take_over_from_dead(app: &App) {
    let Some(holder) = app.store.lead_holder() else {
        return;
    };
    let Some(pid) = holder.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        return;
    };
    let proc = std::path::Path::new("/proc");
    if pid != std::process::id()
        && proc.join("self").exists()
        && !proc.join(pid.to_string()).exists()
    {
        app.store.release_lead(&holder);
    }
}

/// Store keys whose changes start a turn.
fn relevant(rk: &str) -> bool {
    matches!(
        rk,
        "apps/deployments"
            | "apps/replicasets"
            | "/pods"
            | "/nodes"
            | "batch/jobs"
            | "batch/cronjobs"
    ) || clusterrole_aggregation::WATCHES.contains(&rk)
}

/// Notes an object put in foreground deletion for the garbage collector; whether it was one.
fn note_foreground(state: &Mutex<State>, e: &crate::storage::Event) -> bool {
    if !crate::registry::delete::foreground_pending(&e.object) {
        return false;
    }
    if let Ok(mut st) = state.lock() {
        st.foreground
            .insert((e.rk.clone(), e.ns.clone(), e.name.clone()));
    }
    true
}

async fn run(app: Arc<App>, config: ControllerConfig, holder: String) {
    let mut rx = app.store.hub().subscribe();
    let state = Arc::new(Mutex::new(State::default()));
    let mut node_ready = false;
    loop {
        let (a, c, h, s) = (app.clone(), config.clone(), holder.clone(), state.clone());
        let turn = tokio::task::spawn_blocking(move || {
            if a.store.file_backed() {
                take_over_from_dead(&a);
            }
            let leading = !a.store.file_backed()
                || a.store
                    .try_lead(
                        &h,
                        crate::time::now_millis(),
                        c.lease_duration.as_millis() as i64,
                    )
                    .unwrap_or(false);
            let Ok(mut st) = s.lock() else {
                return (leading && node_ready, None);
            };
            if !leading {
                st.last_seen = None;
                return (false, None);
            }
            if node_ready && can_skip(&a, &mut st, Instant::now()) {
                a.turns.skipped.fetch_add(1, Ordering::Relaxed);
                return (true, st.wake);
            }
            a.turns.run.fetch_add(1, Ordering::Relaxed);
            st.wake = None;
            if !node_ready {
                node_ready = node::ensure(&a).is_ok() && volume::ensure_class(&a).is_ok();
            }
            crate::kubelet::pod_termination::reconcile(&a);
            crate::kubelet::pod::reconcile(&a, &c, &mut st);
            replicaset::reconcile(&a, &mut st);
            deployment::reconcile(&a, &mut st);
            statefulset::reconcile(&a, &mut st);
            daemonset::reconcile(&a, &mut st);
            cronjob::reconcile(&a, &mut st);
            job::reconcile(&a, &mut st);
            service::reconcile(&a);
            namespace::reconcile(&a);
            volume::reconcile(&a);
            gc::reconcile(&a, &mut st);
            clusterrole_aggregation::reconcile(&a);
            if a.cert_manager {
                crate::certmanager::reconcile(&a, &mut |at| st.wake_at(at));
            }
            (node_ready, st.wake)
        })
        .await;
        let (ready, wake) = turn.unwrap_or((false, None));
        node_ready = ready;
        let now = Instant::now();
        let mut until = now + config.resync;
        if let Some(w) = wake {
            until = until.min(w.max(now));
        }
        // Sleep until something relevant changes or something timed is due.
        let deadline = tokio::time::sleep_until(until.into());
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                _ = &mut deadline => break,
                got = rx.recv() => match got {
                    Ok(e) => {
                        if note_foreground(&state, &e)
                            || relevant(&e.rk)
                            || (app.cert_manager && crate::certmanager::triggers(&e.rk))
                            || namespace::triggers(&e.rk, &e.name)
                        {
                            break;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if let Ok(mut st) = state.lock() {
                            st.foreground_scanned = false;
                            st.last_seen = None;
                        }
                        break;
                    }
                    Err(_) => return,
                }
            }
        }
        // Coalesce the burst of events that usually follows.
        loop {
            match rx.try_recv() {
                Ok(e) => {
                    note_foreground(&state, &e);
                }
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {
                    if let Ok(mut st) = state.lock() {
                        st.foreground_scanned = false;
                        st.last_seen = None;
                    }
                }
                Err(_) => break,
            }
        }
    }
}
