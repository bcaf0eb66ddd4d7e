//! Per-object retry after a failed reconcile: exponential backoff with jitter, capped, reset by a success
//! (the delays are [`crate::retry::Policy`]'s, the runtime's one retry policy).
//!
//! kube's `Controller` calls an error policy with the object and the error but keeps no count; this keeps
//! one failure count per object (namespace/name), so one failing object backs off without slowing others.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How failed reconciles are retried: `base * factor^(failures-1)`, each delay spread by ±`jitter`
/// (a fraction), never more than `cap`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first retry's delay.
    pub base: Duration,
    /// Growth per consecutive failure.
    pub factor: f64,
    /// The longest delay.
    pub cap: Duration,
    /// Random spread of each delay, as a fraction of it (0.2 = ±20%).
    pub jitter: f64,
}

impl Default for Backoff {
    /// 200 ms, doubling, ±20%, at most 5 minutes.
    fn default() -> Self {
        Backoff {
            base: Duration::from_millis(200),
            factor: 2.0,
            cap: Duration::from_secs(300),
            jitter: 0.2,
        }
    }
}

impl Backoff {
    /// The delay after `failures` consecutive failures (1 = the first), for a uniform sample `unit` in
    /// [0, 1): the runtime's one retry policy ([`crate::retry::Policy`]) with no limit on attempts.
    pub fn delay(&self, failures: u32, unit: f64) -> Duration {
        crate::retry::Policy {
            base: self.base,
            factor: self.factor,
            cap: self.cap,
            jitter: self.jitter,
            attempts: None,
        }
        .delay(failures, unit)
    }
}

/// Failure counts per object, and the random source of the jitter.
#[derive(Debug)]
pub(crate) struct Failures {
    policy: Backoff,
    state: Mutex<(HashMap<String, u32>, u64)>,
}

impl Failures {
    pub fn new(policy: Backoff) -> Self {
        let mut seed = [0u8; 8];
        // A fixed seed only makes the jitter predictable; it never fails the controller.
        let _ = getrandom::fill(&mut seed);
        Failures {
            policy,
            state: Mutex::new((HashMap::new(), u64::from_le_bytes(seed) | 1)),
        }
    }

    /// Counts a failure of `key`: how long to wait before retrying it, and whether it is its first.
    pub fn failed(&self, key: &str) -> (Duration, bool) {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (counts, rng) = &mut *guard;
        let n = counts.entry(key.to_string()).or_insert(0);
        *n = n.saturating_add(1);
        let failures = *n;
        // xorshift64: enough for spreading retries.
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        let unit = (*rng >> 11) as f64 / (1u64 << 53) as f64;
        (self.policy.delay(failures, unit), failures == 1)
    }

    /// A success of `key`: its next failure starts again at the base delay. Returns whether it had
    /// failed before.
    pub fn succeeded(&self, key: &str) -> bool {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.remove(key).is_some()
    }

    /// How many consecutive failures `key` has now.
    #[cfg(test)]
    pub fn count(&self, key: &str) -> u32 {
        let guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.get(key).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_until_the_cap_and_jitter_stays_within_its_spread() {
        let b = Backoff {
            base: Duration::from_millis(100),
            factor: 2.0,
            cap: Duration::from_secs(1),
            jitter: 0.2,
        };
        assert_eq!(b.delay(1, 0.5), Duration::from_millis(100));
        assert_eq!(b.delay(2, 0.5), Duration::from_millis(200));
        assert_eq!(b.delay(4, 0.5), Duration::from_millis(800));
        assert_eq!(b.delay(5, 0.5), Duration::from_secs(1));
        assert_eq!(
            b.delay(500, 0.99),
            Duration::from_secs(1),
            "never above the cap"
        );
        assert_eq!(b.delay(1, 0.0), Duration::from_millis(80));
        assert!(b.delay(1, 0.999) <= Duration::from_millis(120));
    }

    #[test]
    fn each_object_has_its_own_count_and_a_success_resets_it() {
        let f = Failures::new(Backoff {
            jitter: 0.0,
            ..Backoff::default()
        });
        assert_eq!(f.failed("ns/a").0, Duration::from_millis(200));
        assert_eq!(f.failed("ns/a").0, Duration::from_millis(400));
        assert_eq!(f.failed("ns/b").0, Duration::from_millis(200));
        assert_eq!(f.count("ns/a"), 2);
        f.succeeded("ns/a");
        assert_eq!(f.count("ns/a"), 0);
        assert_eq!(f.failed("ns/a").0, Duration::from_millis(200));
    }

    #[test]
    fn jittered_delays_vary_but_stay_in_bounds() {
        let f = Failures::new(Backoff::default());
        let delays: Vec<Duration> = (0..50)
            .map(|i| {
                f.succeeded("k");
                let _ = i;
                f.failed("k").0
            })
            .collect();
        assert!(
            delays
                .iter()
                .all(|d| *d >= Duration::from_millis(160) && *d <= Duration::from_millis(240))
        );
        assert!(
            delays.iter().any(|d| *d != delays[0]),
            "jitter spreads retries"
        );
    }
}
