//! The simulated kubelet of the one node: it runs pods (no containers: phases, readiness, restarts
//! and image pulls from the pod spec and timing), probes their mapped ports and finishes graceful
//! deletion. Like the controllers, it sees the cluster through their narrow handle
//! ([`crate::cluster::Cluster`]); the controller loop runs its turns, handing it its timing and what
//! it remembers between turns ([`Memory`]). The pod subresources a kubelet serves (exec, attach,
//! logs, port-forward) are HTTP handlers of the API server (`apiserver/stream/`).

pub(crate) mod image_pull;
pub(crate) mod pod;
pub(crate) mod pod_termination;
pub(crate) mod probe;

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The simulated node every pod is scheduled to.
pub const NODE_NAME: &str = "piceli-sim-node";

/// The node's internal IP.
pub const NODE_IP: &str = "10.0.0.10";

/// The kubelet's timing (from the controllers' configuration).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// How long a scheduled pod takes to become Running and Ready.
    pub pod_ready_delay: Duration,
    /// How long a pod with restartPolicy Never/OnFailure runs before it succeeds.
    pub pod_run_duration: Duration,
    /// How often a crash-looping container restarts.
    pub crash_restart_interval: Duration,
}

/// What the kubelet remembers between turns (timers only; everything else is in the store).
#[derive(Default)]
pub(crate) struct Memory {
    /// When each pod (by uid) was first seen scheduled.
    pub scheduled_at: HashMap<String, Instant>,
    /// When each crash-looping pod last restarted.
    pub last_restart: HashMap<String, Instant>,
    /// Running pods (by uid) whose status was in line with their behaviour, at the resourceVersion
    /// and port-mapping changes it was checked at.
    pub settled: HashMap<String, (String, u64)>,
    /// HTTP readiness probes of pods whose probed port is mapped.
    pub probes: probe::Probes,
    /// Image pulls from loopback registries (pods of images pinned there).
    pub pulls: image_pull::ImagePulls,
    /// The earliest time something timed is due, as this turn asks for it (the loop takes it).
    pub wake: Option<Instant>,
}

impl Memory {
    /// Asks for a turn no later than `at`.
    pub fn wake_at(&mut self, at: Instant) {
        self.wake = Some(self.wake.map_or(at, |w| w.min(at)));
    }
}
