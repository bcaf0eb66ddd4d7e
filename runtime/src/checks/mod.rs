//! Post-deploy checks: `http`, `exec`, `metric` and `code`, each attempt bounded by its timeout and
//! retried at its interval.
//!
//! Defaults (overridable per check in `app!`: `timeout: "5s", retries: 5, interval: "1s"`):
//! [`DEFAULT_TIMEOUT`] per attempt, [`DEFAULT_RETRIES`] attempts in all, [`DEFAULT_INTERVAL`] between them.
//! Checks run one after another, in declaration order; [`run_all`] reports each result as it ends.

pub mod code;
pub mod exec;
pub mod http;
pub mod metric;

pub use code::{CheckContext, CheckError, CheckOutput, CodeCheck, code_check};

use piceli_core::model::{Check, CheckKind};
use std::time::{Duration, Instant};

/// How long one attempt may take unless the check says `timeout:`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Attempts in all unless the check says `retries:`.
pub const DEFAULT_RETRIES: u32 = 3;
/// The pause between attempts unless the check says `interval:`.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);

/// A check's timing, with the defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Per attempt.
    pub timeout: Duration,
    /// Attempts in all (at least 1).
    pub attempts: u32,
    /// Between attempts.
    pub interval: Duration,
}

impl Timing {
    /// The timing a check declares (values were checked at compile time; one that still does not parse
    /// falls back to the default).
    pub fn of(check: &Check) -> Timing {
        let duration = |v: &Option<piceli_core::spanned::Spanned<String>>, default| {
            v.as_ref()
                .and_then(|d| piceli_core::rules::misc::duration(&d.v).ok())
                .unwrap_or(default)
        };
        Timing {
            timeout: duration(&check.timeout, DEFAULT_TIMEOUT),
            attempts: check
                .retries
                .as_ref()
                .map(|r| u32::try_from(r.v.max(1)).unwrap_or(u32::MAX))
                .unwrap_or(DEFAULT_RETRIES),
            interval: duration(&check.interval, DEFAULT_INTERVAL),
        }
    }
}

/// How one check went.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Outcome {
    /// Its name.
    pub name: String,
    /// `http`, `exec`, `metric` or `code`.
    pub kind: &'static str,
    /// Whether it passed.
    pub passed: bool,
    /// Attempts made.
    pub attempts: u32,
    /// What the last attempt saw.
    pub message: String,
    /// All attempts, in milliseconds.
    pub duration_ms: u64,
}

impl Outcome {
    /// The journal's form.
    pub fn record(&self) -> crate::journal::CheckRecord {
        crate::journal::CheckRecord {
            name: self.name.clone(),
            kind: self.kind.to_string(),
            passed: self.passed,
            attempts: self.attempts,
            message: self.message.clone(),
            duration_ms: self.duration_ms,
        }
    }
}

/// The kind's name.
pub fn kind_name(kind: &CheckKind) -> &'static str {
    match kind {
        CheckKind::Http { .. } => "http",
        CheckKind::Exec { .. } => "exec",
        CheckKind::Metric { .. } => "metric",
        CheckKind::Code { .. } => "code",
    }
}

/// Runs every check in order, calling `each` as each one ends.
pub async fn run_all(
    cx: &CheckContext,
    checks: &[Check],
    code: &[CodeCheck],
    mut each: impl FnMut(&Outcome),
) -> Vec<Outcome> {
    let mut out = Vec::with_capacity(checks.len());
    for check in checks {
        let outcome = run_one(cx, check, code).await;
        each(&outcome);
        out.push(outcome);
    }
    out
}

/// Runs one check with its retries.
pub async fn run_one(cx: &CheckContext, check: &Check, code: &[CodeCheck]) -> Outcome {
    let timing = Timing::of(check);
    let started = Instant::now();
    let (passed, attempts, message) = retry(timing, || attempt(cx, &check.kind, code)).await;
    Outcome {
        name: check.name.v.clone(),
        kind: kind_name(&check.kind),
        passed,
        attempts,
        message,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    }
}

/// Attempts `f` up to `timing.attempts` times, each bounded by `timing.timeout`, pausing
/// `timing.interval` between them: whether it passed, the attempts made, and the last message.
pub async fn retry<F, Fut>(timing: Timing, mut f: F) -> (bool, u32, String)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let attempts = timing.attempts.max(1);
    let mut last = String::new();
    for n in 1..=attempts {
        match tokio::time::timeout(timing.timeout, f()).await {
            Ok(Ok(message)) => return (true, n, message),
            Ok(Err(message)) => last = message,
            Err(_) => last = format!("no answer within {:?}", timing.timeout),
        }
        if n < attempts {
            tokio::time::sleep(timing.interval).await;
        }
    }
    (false, attempts, last)
}

/// One attempt of a check: its message when it passed, why when it did not.
async fn attempt(
    cx: &CheckContext,
    kind: &CheckKind,
    code: &[CodeCheck],
) -> Result<String, String> {
    match kind {
        CheckKind::Http {
            target,
            port,
            path,
            method,
            expect,
            body,
        } => {
            let method = method.as_ref().map(|m| m.v.as_str()).unwrap_or("GET");
            let response = http::fetch(cx, &target.v, port.as_ref(), method, &path.v).await?;
            let expect = u16::try_from(expect.v).unwrap_or(0);
            http::judge(&response, expect, body.as_ref().map(|b| b.v.as_str()))
        }
        CheckKind::Exec {
            workload,
            command,
            expect,
            output,
        } => {
            let command: Vec<String> = command.iter().map(|c| c.v.clone()).collect();
            let result = exec::run(cx, &workload.v, &command).await?;
            exec::judge(&result, expect.v, output.as_ref().map(|o| o.v.as_str()))
        }
        CheckKind::Metric {
            target,
            port,
            path,
            series,
            min,
            max,
        } => {
            let text = metric::scrape(cx, &target.v, port.as_ref(), &path.v).await?;
            metric::judge(
                &text,
                &series.v,
                min.as_ref().map(|m| m.v),
                max.as_ref().map(|m| m.v),
            )
        }
        CheckKind::Code { function } => {
            let registered = code.iter().find(|c| c.path == function.v).ok_or_else(|| {
                format!(
                    "{}: `{}` is not registered in this binary; run the `main()` that `app!` generates",
                    piceli_core::Code::CodeCheckMissing,
                    function.v
                )
            })?;
            registered
                .call(cx.clone())
                .await
                .map(|()| format!("`{}` returned Ok", function.v))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::spanned::Spanned;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn fast(attempts: u32) -> Timing {
        Timing {
            timeout: Duration::from_millis(200),
            attempts,
            interval: Duration::from_millis(1),
        }
    }

    #[test]
    fn defaults_and_declared_timing() {
        let mut check = Check::default();
        assert_eq!(
            Timing::of(&check),
            Timing {
                timeout: Duration::from_secs(10),
                attempts: 3,
                interval: Duration::from_secs(2)
            }
        );
        check.timeout = Some(Spanned::bare("500ms".into()));
        check.retries = Some(Spanned::bare(5));
        check.interval = Some(Spanned::bare("1m".into()));
        assert_eq!(
            Timing::of(&check),
            Timing {
                timeout: Duration::from_millis(500),
                attempts: 5,
                interval: Duration::from_secs(60)
            }
        );
        check.retries = Some(Spanned::bare(0));
        assert_eq!(Timing::of(&check).attempts, 1, "at least one attempt");
    }

    #[tokio::test]
    async fn retries_until_it_passes() {
        let calls = AtomicU32::new(0);
        let (passed, attempts, message) = retry(fast(3), || {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            async move {
                if n < 2 {
                    Err(format!("attempt {n} failed"))
                } else {
                    Ok("fine".to_string())
                }
            }
        })
        .await;
        assert_eq!((passed, attempts, message.as_str()), (true, 2, "fine"));
    }

    #[tokio::test]
    async fn gives_up_with_the_last_message_and_bounds_each_attempt() {
        let calls = AtomicU32::new(0);
        let (passed, attempts, message) = retry(fast(3), || {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            async move { Err::<String, _>(format!("attempt {n} failed")) }
        })
        .await;
        assert_eq!(
            (passed, attempts, message.as_str()),
            (false, 3, "attempt 3 failed")
        );
        let started = Instant::now();
        let (passed, attempts, message) = retry(fast(2), || async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok::<_, String>(String::new())
        })
        .await;
        assert!(!passed && attempts == 2, "{message}");
        assert!(message.starts_with("no answer within"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
