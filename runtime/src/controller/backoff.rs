//! Per-object retry after a failed reconcile: exponential backoff with jitter, capped, reset by a success
//! (the delays are [`crate::retry::Policy`]'s, the runtime's one retry policy), or the app's own function
//! of the error and the attempt.
//!
//! kube's `Controller` calls an error policy with the object and the error but keeps no count; this keeps
//! one failure count per object (namespace/name), so one failing object backs off without slowing others.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::handler::HandlerError;
use crate::retry::Policy;

/// How a controller's failed reconciles are retried, per object.
#[derive(Clone)]
pub enum Backoff {
    /// Exponential delays by the runtime's retry policy (`base * factor^(failures-1)`, ±`jitter`, at most
    /// `cap`); its `attempts` limit is ignored: a controller never gives up on an object.
    Policy(Policy),
    /// The app's own function (`backoff: ops::my_backoff`): the delay after the `attempt`-th consecutive
    /// failure of one object (1 = the first), given that failure's error.
    Function(DelayFn),
}

/// The app's backoff function, erased.
pub type DelayFn = Arc<dyn Fn(&HandlerError, u32) -> Duration + Send + Sync>;

impl Backoff {
    /// The default: 200 ms, doubling, ±20%, at most 5 minutes.
    pub const DEFAULT: Policy = Policy {
        base: Duration::from_millis(200),
        factor: 2.0,
        cap: Duration::from_secs(300),
        jitter: 0.2,
        attempts: None,
    };

    /// Doubling from `base` up to `cap`, ±20% (what `backoff: { base, max }` declares).
    pub fn exponential(base: Duration, cap: Duration) -> Backoff {
        Backoff::Policy(Policy {
            base,
            cap,
            ..Backoff::DEFAULT
        })
    }

    /// The app's function of the error and the attempt.
    pub fn function(f: impl Fn(&HandlerError, u32) -> Duration + Send + Sync + 'static) -> Backoff {
        Backoff::Function(Arc::new(f))
    }

    /// The delay after `failures` consecutive failures (1 = the first) with `error`, for a uniform sample
    /// `unit` in [0, 1) (the policy's jitter; a function has its own).
    pub fn delay(&self, error: &HandlerError, failures: u32, unit: f64) -> Duration {
        match self {
            Backoff::Policy(policy) => policy.delay(failures, unit),
            Backoff::Function(f) => f(error, failures),
        }
    }
}

impl Default for Backoff {
    /// [`Backoff::DEFAULT`].
    fn default() -> Self {
        Backoff::Policy(Backoff::DEFAULT)
    }
}

impl fmt::Debug for Backoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backoff::Policy(p) => f.debug_tuple("Policy").field(p).finish(),
            Backoff::Function(_) => f.write_str("Function(..)"),
        }
    }
}

/// Two functions are equal when they are the same one.
impl PartialEq for Backoff {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Backoff::Policy(a), Backoff::Policy(b)) => a == b,
            (Backoff::Function(a), Backoff::Function(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
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

    /// Counts a failure of `key` with `error`: how long to wait before retrying it, and whether it is its
    /// first.
    pub fn failed(&self, key: &str, error: &HandlerError) -> (Duration, bool) {
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
        // Outside the lock: the app's function may take its time.
        drop(guard);
        (self.policy.delay(error, failures, unit), failures == 1)
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

    const E: HandlerError = HandlerError(String::new());

    #[test]
    fn delays_double_until_the_cap_and_jitter_stays_within_its_spread() {
        let b = Backoff::exponential(Duration::from_millis(100), Duration::from_secs(1));
        let e = &HandlerError("boom".into());
        assert_eq!(b.delay(e, 1, 0.5), Duration::from_millis(100));
        assert_eq!(b.delay(e, 2, 0.5), Duration::from_millis(200));
        assert_eq!(b.delay(e, 4, 0.5), Duration::from_millis(800));
        assert_eq!(b.delay(e, 5, 0.5), Duration::from_secs(1));
        assert_eq!(
            b.delay(e, 500, 0.99),
            Duration::from_secs(1),
            "never above the cap"
        );
        assert_eq!(b.delay(e, 1, 0.0), Duration::from_millis(80));
        assert!(b.delay(e, 1, 0.999) <= Duration::from_millis(120));
    }

    #[test]
    fn each_object_has_its_own_count_and_a_success_resets_it() {
        let f = Failures::new(Backoff::Policy(Policy {
            jitter: 0.0,
            ..Backoff::DEFAULT
        }));
        assert_eq!(f.failed("ns/a", &E).0, Duration::from_millis(200));
        assert_eq!(f.failed("ns/a", &E).0, Duration::from_millis(400));
        assert_eq!(f.failed("ns/b", &E).0, Duration::from_millis(200));
        assert_eq!(f.count("ns/a"), 2);
        f.succeeded("ns/a");
        assert_eq!(f.count("ns/a"), 0);
        assert_eq!(f.failed("ns/a", &E).0, Duration::from_millis(200));
    }

    #[test]
    fn jittered_delays_vary_but_stay_in_bounds() {
        let f = Failures::new(Backoff::default());
        let delays: Vec<Duration> = (0..50)
            .map(|i| {
                f.succeeded("k");
                let _ = i;
                f.failed("k", &E).0
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

    #[test]
    fn a_function_is_given_the_error_and_the_attempt_of_each_object() {
        let f = Failures::new(Backoff::function(|e, attempt| {
            let per = if e.0.contains("conflict") { 10 } else { 1000 };
            Duration::from_millis(per * u64::from(attempt))
        }));
        let conflict = HandlerError("409 conflict".into());
        assert_eq!(
            f.failed("ns/a", &conflict),
            (Duration::from_millis(10), true)
        );
        assert_eq!(
            f.failed("ns/a", &conflict),
            (Duration::from_millis(20), false)
        );
        assert_eq!(f.failed("ns/b", &E), (Duration::from_millis(1000), true));
        f.succeeded("ns/a");
        assert_eq!(f.failed("ns/a", &E).0, Duration::from_millis(1000));
    }
}
