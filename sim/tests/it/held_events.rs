//! The change events the server holds while its controllers write in bulk: a ReplicaSet of 400
//! replicas makes the ReplicaSet controller create 400 pods and 400 Events in one turn. The event hub
//! frees an event once every receiver has read it; the controllers' loop reads its receiver while the
//! turn runs and catches the informer cache up every 256 events, so the hub holds a bounded number
//! of them, not the whole turn's (each an object and its previous state: the transient of a 1,000-pod
//! rollout's memory peak, issue 34).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{Kubectl, eventually, live_sim};

const REPLICAS: usize = 400;

/// Two catch-ups' worth (`controllers::INFORMER_CATCH_UP_EVERY` is 256): the turn alone writes
/// twice `REPLICAS`.
const MOST_HELD: usize = 512;

fn replica_set() -> String {
    format!(
        "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: many
  namespace: default
spec:
  replicas: {REPLICAS}
  selector:
    matchLabels: {{app: many}}
  template:
    metadata:
      labels: {{app: many}}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10
"
    )
}

#[test]
fn a_bulk_controller_turn_leaves_a_bounded_number_of_events_held() {
    let sim = Arc::new(live_sim());
    let k = Kubectl::new(&sim);
    let f = k.file("rs.yaml", &replica_set());
    let done = Arc::new(AtomicBool::new(false));
    let most = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (sim, done, most) = (sim.clone(), done.clone(), most.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(sim.held_events(), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let rv_before = sim.resource_version().expect("rv");
    k.ok(&["apply", "-f", &f]);
    eventually("every replica created", 120, || {
        let out = k.ok(&["get", "rs", "many", "-o", "jsonpath={.status.replicas}"]);
        (out.trim() == REPLICAS.to_string()).then_some(())
    });
    done.store(true, Ordering::Relaxed);
    sampler.join().expect("sampler");
    let written = sim.resource_version().expect("rv") - rv_before;
    let most = most.load(Ordering::Relaxed);
    assert!(
        written as usize >= 2 * REPLICAS,
        "{written} changes written"
    );
    eprintln!("the hub held up to {most} events of the {written} written");
    assert!(
        most <= MOST_HELD,
        "the hub held up to {most} events of the {written} written (at most {MOST_HELD} allowed)"
    );
    match Arc::try_unwrap(sim) {
        Ok(sim) => sim.stop(),
        Err(_) => panic!("the sampler still holds the simulator"),
    }
}
