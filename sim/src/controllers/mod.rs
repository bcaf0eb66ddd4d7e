//! Simulated controllers (kwok-like, no containers): one loop per process whose turns run the
//! controllers that the changes since the last turn call for — each declares what it watches
//! (`table.rs`), as the store's event hub reports changes — and those whose timers are due (pod
//! readiness, crash-loop restarts, progress deadlines). A ConfigMap write runs no workload
//! controller; a periodic wake-up with nothing changed and no timer due is skipped; and the
//! controllers read their objects from lists shared per kind (`cluster/informer.rs`), so an idle cluster
//! costs nothing.
//!
//! The controllers and the kubelet see the cluster only through a narrow handle
//! ([`crate::cluster::Cluster`]), as kube-controller-manager's controllers see only a client and
//! informers: the served types, the shared lists, reads of one object, and writes through the API's
//! own write pipeline (`object::write`, `delete::delete`) with the field managers the real
//! components use (`kube-controller-manager`, `kube-scheduler`, `kubelet`), so watches,
//! resourceVersions and managedFields stay right. Only this loop sees more of the server it runs in
//! ([`Host`], which the API server's state implements): it keeps the leadership row in the store, catches the informer cache up with the
//! store's events, counts turns, and decides from the server's switches which controllers run
//! (`table.rs`); each turn it hands the controllers a handle made from it.
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
mod job;
mod namespace;
mod node;
mod replicaset;
mod service;
mod statefulset;
pub(crate) mod table;
mod template;
mod volume;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::cluster::informer::Informers;
use crate::storage::Store;

pub use crate::kubelet::pod::BEHAVIOR_ANNOTATION;
pub use cronjob::SCHEDULE_EVERY_ANNOTATION;

/// The field manager of the Deployment, ReplicaSet and garbage-collection controllers.
pub const MANAGER: &str = "kube-controller-manager";

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
    /// What the kubelet remembers (its pods' timers, probes and image pulls).
    pub kubelet: crate::kubelet::Memory,
    /// The earliest time something timed is due, as the running controller asks for it
    /// ([`State::wake_at`]); the loop keeps each controller's in `wakes`.
    pub wake: Option<Instant>,
    /// When each controller (by its index in [`table::CONTROLLERS`]) asked for its next turn.
    pub wakes: [Option<Instant>; table::COUNT],
    /// Objects in foreground deletion (store key, namespace, name) the garbage collector works on.
    pub foreground: HashSet<(String, String, String)>,
    /// Whether every kind was scanned for foreground deletions (at start, and after missed events).
    pub foreground_scanned: bool,
    /// When every namespaced kind was last swept for objects whose owners are gone.
    pub last_full_sweep: Option<Instant>,
    /// The port mappings' change count the kubelet last ran at.
    pub ports_seen: Option<u64>,
    /// Whether the controllers ran since the last missed events; `false` (at start, after missed
    /// events, on taking the lead) runs every controller in the next turn.
    pub synced: bool,
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

/// The turn counters behind [`ControllerStats`], and each controller's turns.
#[derive(Default)]
pub(crate) struct Turns {
    run: AtomicU64,
    skipped: AtomicU64,
    of: [AtomicU64; table::COUNT],
}

impl Turns {
    /// The counters so far, with the lists the informers read from the store.
    pub(crate) fn stats(&self, informers: &Informers) -> ControllerStats {
        ControllerStats {
            turns: self.run.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
            list_reads: informers.reads(),
        }
    }

    /// How many turns each controller ran, by name.
    pub(crate) fn runs(&self) -> std::collections::BTreeMap<&'static str, u64> {
        table::CONTROLLERS
            .iter()
            .zip(&self.of)
            .map(|(c, n)| (c.name, n.load(Ordering::Relaxed)))
            .collect()
    }
}

/// What the loop needs of the server it runs in (the API server's state implements it): the
/// narrow handle it gives the controllers, and for itself the store (the leadership row and the
/// change events), the informer cache it keeps current, its turn counters and the server's
/// switches.
pub(crate) trait Host: Send + Sync + 'static {
    /// The handle the controllers see the cluster through.
    fn cluster(&self) -> Cluster<'_>;
    /// The store: the leadership row, the change events.
    fn store(&self) -> &Store;
    /// The shared informer cache.
    fn informers(&self) -> &Informers;
    /// The turn counters.
    fn turns(&self) -> &Turns;
    /// Whether the built-in cert-manager runs (`--cert-manager`).
    fn cert_manager(&self) -> bool;
}

/// The controllers of one process; dropping it does not stop them (the runtime does).
pub struct Controllers {
    holder: String,
    app: Arc<dyn Host>,
}

impl Controllers {
    /// Starts the controller loop on the current Tokio runtime.
    pub(crate) fn start(app: Arc<dyn Host>, config: ControllerConfig) -> Controllers {
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
        if self.app.store().file_backed() {
            self.app.store().release_lead(&self.holder);
        }
    }
}

/// Frees leadership held by a process of this machine that no longer exists (killed without
/// releasing it), so the others need not wait for the row to expire. Holders are `<pid>-<random>`.
fn take_over_from_dead(store: &Store) {
    let Some(holder) = store.lead_holder() else {
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
        store.release_lead(&holder);
    }
}

/// The controllers (by index) a batch of changes called for.
type Due = [bool; table::COUNT];

/// Marks the controllers `e` calls for.
fn mark(app: &dyn Host, due: &mut Due, e: &crate::storage::Event) {
    for (c, d) in table::CONTROLLERS.iter().zip(due.iter_mut()) {
        if (c.enabled)(app) && c.watches(e) {
            *d = true;
        }
    }
}

/// Forgets what was seen: the next turn runs every controller (after missed events, or when
/// another process led).
fn unsync(state: &Mutex<State>) {
    if let Ok(mut st) = state.lock() {
        st.foreground_scanned = false;
        st.synced = false;
    }
}

/// One turn (the leader's): the controllers the changes called for, those whose timers are due,
/// and the kubelet when the port mappings changed — every one when not `synced`. Returns whether
/// any ran and when the next timer is due.
fn turn(
    app: &dyn Host,
    config: &ControllerConfig,
    st: &mut State,
    due: &Due,
) -> (bool, Option<Instant>) {
    let now = Instant::now();
    let ports = app.cluster().hooks().port_changes();
    let all = !st.synced;
    let mut ran = false;
    for (i, c) in table::CONTROLLERS.iter().enumerate() {
        let timer = st.wakes[i].is_some_and(|w| now >= w);
        let ports_changed = c.watches_ports() && st.ports_seen != Some(ports);
        if !(c.enabled)(app) || !(all || due[i] || timer || ports_changed) {
            continue;
        }
        st.wake = None;
        c.run_turn(&app.cluster(), config, st);
        st.wakes[i] = st.wake;
        app.turns().of[i].fetch_add(1, Ordering::Relaxed);
        ran = true;
    }
    st.ports_seen = Some(ports);
    st.synced = true;
    st.wake = st.wakes.iter().flatten().min().copied();
    (ran, st.wake)
}

/// Events between two catch-ups of the informer cache (what it lets the hub hold for it).
const INFORMER_CATCH_UP_EVERY: u32 = 256;

/// What the loop takes from the hub's events between turns and while a turn runs: the controllers
/// they call for (the next turn's), objects put in foreground deletion and whether events were
/// missed. Noted here rather than in [`State`], which a running turn holds locked.
#[derive(Default)]
struct Received {
    due: Due,
    foreground: Vec<(String, String, String)>,
    lagged: bool,
    since_catch_up: u32,
}

impl Received {
    /// Takes one event. Every [`INFORMER_CATCH_UP_EVERY`] events the informer cache takes in its
    /// own (unless a controller is listing, which does it).
    fn take(&mut self, app: &dyn Host, e: &crate::storage::Event) {
        self.since_catch_up += 1;
        if self.since_catch_up >= INFORMER_CATCH_UP_EVERY {
            self.since_catch_up = 0;
            app.informers().catch_up(app.store());
        }
        if crate::registry::delete::foreground_pending(&e.object) {
            self.foreground
                .push((e.rk.clone(), e.ns.clone(), e.name.clone()));
        }
        mark(app, &mut self.due, e)
    }

    /// Whether something calls for a turn now.
    fn calls(&self) -> bool {
        self.lagged || self.due.iter().any(|d| *d)
    }

    /// Hands what was noted to the state (when no turn holds it); the controllers called for.
    fn settle(&mut self, state: &Mutex<State>) -> Due {
        if !self.foreground.is_empty()
            && let Ok(mut st) = state.lock()
        {
            st.foreground.extend(self.foreground.drain(..));
        }
        if std::mem::take(&mut self.lagged) {
            unsync(state);
        }
        std::mem::replace(&mut self.due, [false; table::COUNT])
    }
}

async fn run(app: Arc<dyn Host>, config: ControllerConfig, holder: String) {
    let mut rx = app.store().hub().subscribe();
    let mut got = Received::default();
    let state = Arc::new(Mutex::new(State::default()));
    let mut node_ready = false;
    loop {
        let (a, c, h, s) = (app.clone(), config.clone(), holder.clone(), state.clone());
        let called = got.settle(&state);
        let ready = node_ready;
        let turn = tokio::task::spawn_blocking(move || {
            let mut node_ready = ready;
            if a.store().file_backed() {
                take_over_from_dead(a.store());
            }
            let leading = !a.store().file_backed()
                || a.store()
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
                st.synced = false;
                return (false, None);
            }
            if !node_ready {
                let cluster = a.cluster();
                node_ready =
                    node::ensure(&cluster).is_ok() && volume::ensure_class(&cluster).is_ok();
                st.synced = false;
            }
            let (ran, wake) = turn(&*a, &c, &mut st, &called);
            let counter = if ran {
                &a.turns().run
            } else {
                &a.turns().skipped
            };
            counter.fetch_add(1, Ordering::Relaxed);
            (node_ready, wake)
        });
        tokio::pin!(turn);
        // Read the hub while the turn runs: a turn that writes a thousand pods would otherwise leave
        // every event of it (objects and their previous states) held by the hub for this receiver
        // until it ends (tokio's broadcast frees an event once every receiver has read it; issue 34).
        let turned = loop {
            tokio::select! {
                done = &mut turn => break done,
                next = rx.recv() => match next {
                    Ok(e) => got.take(&*app, &e),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => got.lagged = true,
                    Err(_) => return,
                }
            }
        };
        let (ready, wake) = turned.unwrap_or((false, None));
        node_ready = ready;
        let now = Instant::now();
        let mut until = now + config.resync;
        if let Some(w) = wake {
            until = until.min(w.max(now));
        }
        // Sleep until a change calls for a controller or something timed is due (at once when one
        // came while the turn ran).
        let deadline = tokio::time::sleep_until(until.into());
        tokio::pin!(deadline);
        while !got.calls() {
            tokio::select! {
                _ = &mut deadline => break,
                next = rx.recv() => match next {
                    Ok(e) => got.take(&*app, &e),
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => got.lagged = true,
                    Err(_) => return,
                }
            }
        }
        // Coalesce the burst of events that usually follows.
        loop {
            match rx.try_recv() {
                Ok(e) => got.take(&*app, &e),
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => got.lagged = true,
                Err(_) => break,
            }
        }
    }
}
