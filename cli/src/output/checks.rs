//! Checks' results as text: one line per check, and the failure a release with failed checks ends in
//! (what `deploy` and `check` print).

use crate::exit::Failure;
use piceli_core::Code;
use piceli_runtime::engine::deploy::{DeployEvent, DeployReport};

/// The failure a report with failed checks ends in (`None`: all passed).
pub fn failure_for_checks(report: &DeployReport) -> Option<Failure> {
    let failed = report.failed();
    if failed.is_empty() {
        return None;
    }
    let details: Vec<String> = report
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("`{}`: {}", c.name, c.message))
        .collect();
    let mut message = format!("{} check(s) failed: {}", failed.len(), details.join("; "));
    match (
        report.restored,
        report.rollback_release,
        &report.no_rollback,
    ) {
        (Some(restored), Some(n), _) => message.push_str(&format!(
            ". Rolled back: release {restored}'s objects are live again as release {n}"
        )),
        (Some(restored), None, _) => message.push_str(&format!(
            ". Rolled back to release {restored} (its objects were already live)"
        )),
        (None, _, Some(why)) => message.push_str(&format!(". Not rolled back: {why}")),
        (None, _, None) => {}
    }
    Some(Failure::new(
        Code::CheckFailed,
        message,
        "see what the check saw above; `status` shows the app's health. Fix and deploy again"
            .into(),
    ))
}

/// One check's line of text.
pub fn check_line(event: &DeployEvent) -> String {
    match event {
        DeployEvent::Check {
            name,
            kind,
            passed,
            attempts,
            message,
            duration_ms,
            ..
        } => {
            let mark = if *passed { "ok  " } else { "FAIL" };
            format!("  {mark} {name} ({kind}, {attempts} attempt(s), {duration_ms} ms): {message}")
        }
        _ => String::new(),
    }
}
