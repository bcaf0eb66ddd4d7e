//! The controllers of the loop, in the order a turn runs them, each declaring what it watches: the
//! store keys whose changes call for it (client-go's informers of its kinds), or a filter of change
//! events for the few that look at any kind (the garbage collector) or at some names only (the
//! namespace defaults), and whether the port mappings matter to it (the kubelet). The loop
//! (`mod.rs`) derives from these declarations which controllers a batch of changes calls for; a
//! controller also runs when a timer it set is due, and every controller runs at start, after missed
//! events and on taking the lead.

use super::{ControllerConfig, Host, State};
use super::{
    clusterrole_aggregation, cronjob, daemonset, deployment, gc, job, namespace, replicaset,
    service, statefulset, volume,
};
use crate::cluster::Cluster;
use crate::kubelet::{self, pod, pod_termination};
use crate::storage::{Event, EventType};

/// What a controller watches.
pub(crate) enum Watches {
    /// Changes of objects stored under these keys (`GROUP/PLURAL`, `/PLURAL` for the core group).
    Kinds(&'static [&'static str]),
    /// Changes of these keys and of the port mappings (`src/hooks/`).
    KindsAndPorts(&'static [&'static str]),
    /// The changes this filter picks.
    Events(fn(&Event) -> bool),
}

/// One controller of the loop.
pub(crate) struct Controller {
    /// Its name, as [`crate::RunningSim::controller_runs`] reports its turns.
    pub name: &'static str,
    /// What calls for a turn of it.
    pub watches: Watches,
    /// Whether it runs in this simulator at all (the built-in cert-manager is optional): the loop's
    /// decision from the server's switches, so it sees the [`Host`].
    pub enabled: fn(&dyn Host) -> bool,
    /// One turn of it, seeing the cluster through the narrow handle; timers it needs go through
    /// [`State::wake_at`].
    pub run: fn(&Cluster, &ControllerConfig, &mut State),
}

impl Controller {
    /// Whether this change calls for a turn of this controller.
    pub fn watches(&self, e: &Event) -> bool {
        match &self.watches {
            Watches::Kinds(keys) | Watches::KindsAndPorts(keys) => keys.contains(&e.rk.as_str()),
            Watches::Events(pick) => pick(e),
        }
    }

    /// Whether a change of the port mappings calls for a turn of it.
    pub fn watches_ports(&self) -> bool {
        matches!(self.watches, Watches::KindsAndPorts(_))
    }
}

impl Controller {
    /// Runs one turn of it on this thread, telling the handle what it declared it lists (debug
    /// builds check its lists against it: [`crate::cluster::declared`]).
    pub fn run_turn(&'static self, cluster: &Cluster, config: &ControllerConfig, st: &mut State) {
        let keys = match &self.watches {
            Watches::Kinds(keys) | Watches::KindsAndPorts(keys) => Some(*keys),
            Watches::Events(_) => None,
        };
        crate::cluster::declared::running(Some((self.name, keys)));
        (self.run)(cluster, config, st);
        crate::cluster::declared::running(None);
    }
}

fn always(_: &dyn Host) -> bool {
    true
}

/// One turn of the kubelet, with its timing from the controllers' configuration; the timers it
/// sets become the loop's.
fn kubelet_turn(cluster: &Cluster, config: &ControllerConfig, st: &mut State) {
    let timing = kubelet::Timing {
        pod_ready_delay: config.pod_ready_delay,
        pod_run_duration: config.pod_run_duration,
        crash_restart_interval: config.crash_restart_interval,
    };
    pod::reconcile(cluster, &timing, &mut st.kubelet);
    if let Some(at) = st.kubelet.wake.take() {
        st.wake_at(at);
    }
}

/// How many controllers there are.
pub(crate) const COUNT: usize = 14;

/// The controllers, in the order a turn runs them (the kubelet first, the garbage collector after
/// the workload controllers).
pub(crate) static CONTROLLERS: [Controller; COUNT] = [
    Controller {
        name: "kubelet-pod-termination",
        watches: Watches::Kinds(pod_termination::WATCHES),
        enabled: always,
        run: |a, _, _| pod_termination::reconcile(a),
    },
    Controller {
        name: "kubelet",
        watches: Watches::KindsAndPorts(pod::WATCHES),
        enabled: always,
        run: kubelet_turn,
    },
    Controller {
        name: "replicaset",
        watches: Watches::Kinds(replicaset::WATCHES),
        enabled: always,
        run: |a, _, st| replicaset::reconcile(a, st),
    },
    Controller {
        name: "deployment",
        watches: Watches::Kinds(deployment::WATCHES),
        enabled: always,
        run: |a, _, st| deployment::reconcile(a, st),
    },
    Controller {
        name: "statefulset",
        watches: Watches::Kinds(statefulset::WATCHES),
        enabled: always,
        run: |a, _, st| statefulset::reconcile(a, st),
    },
    Controller {
        name: "daemonset",
        watches: Watches::Kinds(daemonset::WATCHES),
        enabled: always,
        run: |a, _, st| daemonset::reconcile(a, st),
    },
    Controller {
        name: "cronjob",
        watches: Watches::Kinds(cronjob::WATCHES),
        enabled: always,
        run: |a, _, st| cronjob::reconcile(a, st),
    },
    Controller {
        name: "job",
        watches: Watches::Kinds(job::WATCHES),
        enabled: always,
        run: |a, _, st| job::reconcile(a, st),
    },
    Controller {
        name: "endpoints",
        watches: Watches::Kinds(service::WATCHES),
        enabled: always,
        run: |a, _, _| service::reconcile(a),
    },
    Controller {
        name: "namespace-defaults",
        watches: Watches::Events(|e| namespace::triggers(&e.rk, &e.name)),
        enabled: always,
        run: |a, _, _| namespace::reconcile(a),
    },
    Controller {
        name: "persistentvolume",
        watches: Watches::Kinds(volume::WATCHES),
        enabled: always,
        run: |a, _, _| volume::reconcile(a),
    },
    Controller {
        name: "garbage-collector",
        watches: Watches::Events(gc_watches),
        enabled: always,
        run: |a, _, st| gc::reconcile(a, st),
    },
    Controller {
        name: "clusterrole-aggregation",
        watches: Watches::Kinds(clusterrole_aggregation::WATCHES),
        enabled: always,
        run: |a, _, _| clusterrole_aggregation::reconcile(a),
    },
    Controller {
        name: "cert-manager",
        watches: Watches::Kinds(crate::certmanager::WATCHES),
        enabled: |a| a.cert_manager(),
        run: |a, _, st| crate::certmanager::reconcile(a, &mut |at| st.wake_at(at)),
    },
];

/// The garbage collector looks at every kind (as its graph builder watches every resource): a
/// deletion may leave dependents without owners, an object naming owners may name gone ones, and an
/// owner put in foreground deletion has dependents to delete first. Other changes are not its
/// business.
fn gc_watches(e: &Event) -> bool {
    e.kind == EventType::Deleted
        || e.object
            .pointer("/metadata/ownerReferences")
            .is_some_and(|r| r.as_array().is_some_and(|r| !r.is_empty()))
        || crate::registry::delete::foreground_pending(&e.object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn event(rk: &str, name: &str, kind: EventType, object: serde_json::Value) -> Event {
        Event {
            rv: 1,
            rk: rk.into(),
            ns: "default".into(),
            name: name.into(),
            kind,
            object: Arc::new(object),
            prev: None,
        }
    }

    fn called_for(e: &Event) -> Vec<&'static str> {
        CONTROLLERS
            .iter()
            .filter(|c| c.watches(e))
            .map(|c| c.name)
            .collect()
    }

    #[test]
    fn changes_call_for_the_controllers_that_watch_them() {
        let plain = serde_json::json!({"metadata": {"name": "x"}});
        let cm = event("/configmaps", "settings", EventType::Added, plain.clone());
        assert!(called_for(&cm).is_empty(), "{:?}", called_for(&cm));
        let root_ca = event(
            "/configmaps",
            "kube-root-ca.crt",
            EventType::Modified,
            plain,
        );
        assert_eq!(called_for(&root_ca), ["namespace-defaults"]);
        let deployment = event(
            "apps/deployments",
            "web",
            EventType::Modified,
            serde_json::json!({"metadata": {"name": "web"}}),
        );
        assert_eq!(called_for(&deployment), ["deployment"]);
        let gone = event(
            "/configmaps",
            "settings",
            EventType::Deleted,
            serde_json::json!({}),
        );
        assert_eq!(called_for(&gone), ["garbage-collector"]);
        let owned = event(
            "/configmaps",
            "child",
            EventType::Added,
            serde_json::json!({"metadata": {"ownerReferences": [{"uid": "u"}]}}),
        );
        assert_eq!(called_for(&owned), ["garbage-collector"]);
        let pod = event("/pods", "p", EventType::Modified, serde_json::json!({}));
        let names = called_for(&pod);
        for c in ["kubelet", "replicaset", "job", "endpoints"] {
            assert!(names.contains(&c), "{c}: {names:?}");
        }
        assert!(!names.contains(&"deployment"), "{names:?}");
        assert_eq!(CONTROLLERS.len(), COUNT);
    }
}
