//! One retry policy for the runtime: exponential delays, capped, with an optional limit on attempts and an
//! optional jitter — the writes of an apply step and a replace's delete, and a controller's per-object
//! backoff, all count their attempts and compute their pauses here (as kube-runtime's backoff does).

use std::time::Duration;

/// How a failed operation is tried again: the pause after the `n`-th failure is `base * factor^(n-1)`,
/// spread by ±`jitter` (a fraction), never more than `cap`; with `attempts`, no pause after that many
/// attempts in all (the caller gives up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Policy {
    /// The first pause.
    pub base: Duration,
    /// Growth per consecutive failure.
    pub factor: f64,
    /// The longest pause.
    pub cap: Duration,
    /// Random spread of each pause, as a fraction of it (0.2 = ±20%; 0 = none).
    pub jitter: f64,
    /// How many attempts in all (`None`: no limit).
    pub attempts: Option<u32>,
}

impl Policy {
    /// A cluster write that failed for a reason that may pass (a lost connection, 5xx, 429): five
    /// attempts in all, pausing 250 ms, 500 ms, 1 s and 2 s between them (at most 4 s), no jitter.
    pub const WRITES: Policy = Policy {
        base: Duration::from_millis(250),
        factor: 2.0,
        cap: Duration::from_secs(4),
        jitter: 0.0,
        attempts: Some(5),
    };

    /// The pause after `failures` consecutive failures (1 = the first), for a uniform sample `unit` in
    /// [0, 1) spreading it by the jitter.
    pub fn delay(&self, failures: u32, unit: f64) -> Duration {
        let exponent = i32::try_from(failures.saturating_sub(1)).unwrap_or(i32::MAX);
        let raw = self.base.as_secs_f64() * self.factor.max(1.0).powi(exponent);
        let spread = 1.0 + self.jitter.clamp(0.0, 1.0) * (2.0 * unit.clamp(0.0, 1.0) - 1.0);
        let secs = (raw.min(self.cap.as_secs_f64()) * spread).min(self.cap.as_secs_f64());
        Duration::try_from_secs_f64(secs.max(0.0)).unwrap_or(self.cap)
    }

    /// The attempts of one operation under this policy, the first one under way.
    pub fn start(self) -> Attempts {
        Attempts {
            policy: self,
            attempt: 1,
        }
    }
}

/// The attempts of one operation: which one runs now, and the pause before the next, if any is left.
#[derive(Debug, Clone)]
pub struct Attempts {
    policy: Policy,
    attempt: u32,
}

impl Attempts {
    /// The attempt under way (1 = the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// After a success that ends a run of failures: the next failure pauses as the first did.
    pub fn reset(&mut self) {
        self.attempt = 1;
    }
}

/// Each item is the pause before the next attempt (and counts it); none when the attempts are spent.
impl Iterator for Attempts {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.policy.attempts.is_some_and(|n| self.attempt >= n) {
            return None;
        }
        let pause = self.policy.delay(self.attempt, 0.5);
        self.attempt += 1;
        Some(pause)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_pause_250_500_1000_2000_ms_then_give_up_at_the_fifth_attempt() {
        let mut a = Policy::WRITES.start();
        let pauses: Vec<u128> = a.by_ref().map(|d| d.as_millis()).collect();
        assert_eq!(pauses, [250, 500, 1000, 2000]);
        assert_eq!(a.attempt(), 5);
        a.reset();
        assert_eq!(a.next(), Some(Duration::from_millis(250)));
    }

    #[test]
    fn the_cap_and_the_jitter_bound_every_pause() {
        let p = Policy {
            base: Duration::from_secs(1),
            factor: 10.0,
            cap: Duration::from_secs(30),
            jitter: 0.2,
            attempts: None,
        };
        assert_eq!(p.delay(1, 0.5), Duration::from_secs(1));
        assert_eq!(p.delay(1, 0.0), Duration::from_millis(800));
        assert_eq!(p.delay(9, 0.99), Duration::from_secs(30));
        assert!(
            p.start().take(100).count() == 100,
            "no limit without `attempts`"
        );
    }
}
