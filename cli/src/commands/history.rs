//! `history`: the target's releases from its journal, newest first, with their check outcomes and the
//! approval that started each (its kind and the command that gave it).

use crate::prelude::*;
use crate::session::state_dir;
use piceli_core::model::App;
use piceli_runtime::journal::Journal;

/// The arguments of `history` (none of its own).
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {}

impl Command for HistoryArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "none (reads the local journal)",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global)
    }
}

/// Run `history`.
pub fn run(app: App, global: &Global) -> Result<(), Failure> {
    let dir = state_dir(&app, global)?;
    let journal = Journal::open(&dir)?;
    let releases = journal.releases()?;
    let checks = journal.check_outcomes()?;
    let approvals = journal.approvals()?;
    let approval_of = |r| piceli_runtime::journal::approval_of(&approvals, r);
    let outcome = |n: u64| match checks.get(&n) {
        Some((passed, total)) if passed == total => format!("passed {passed}/{total}"),
        Some((passed, total)) => format!("FAILED {}/{total}", total - passed),
        None => "-".to_string(),
    };
    if global.output == Output::Json {
        let list: Vec<_> = releases
            .iter()
            .map(|r| {
                serde_json::json!({
                    "release": r.number,
                    "plan": r.plan_hash,
                    "kind": r.kind.as_str(),
                    "state": r.state.as_str(),
                    "started_at": r.started_at,
                    "finished_at": r.finished_at,
                    "checks": checks.get(&r.number).map(|(passed, total)| {
                        serde_json::json!({ "passed": passed, "total": total })
                    }),
                    "approval": approval_of(r).map(|a| {
                        serde_json::json!({
                            "kind": a.kind.as_str(),
                            "command": a.command,
                            "approved_at": a.approved_at,
                            "sealed": a.sealed(),
                        })
                    }),
                })
            })
            .collect();
        println!("{}", serde_json::json!({ "releases": list }));
        return Ok(());
    }
    if releases.is_empty() {
        println!("No releases yet.");
        return Ok(());
    }
    println!(
        "{:>7}  {:<10} {:<9} {:<24}  {:<16}  {:<14}  {:<9}  APPROVED BY",
        "RELEASE", "STATE", "KIND", "STARTED", "PLAN", "CHECKS", "APPROVAL"
    );
    for r in &releases {
        let (kind, command) = approval_of(r).map_or(("-", "-".to_string()), |a| {
            let unsealed = if a.sealed() {
                ""
            } else {
                " (not sealed by your approval key)"
            };
            (a.kind.as_str(), format!("{}{unsealed}", a.command))
        });
        println!(
            "{:>7}  {:<10} {:<9} {:<24}  {:<16}  {:<14}  {:<9}  {}",
            r.number,
            r.state.as_str(),
            r.kind.as_str(),
            r.started_at,
            &r.plan_hash[..r.plan_hash.len().min(16)],
            outcome(r.number),
            kind,
            command
        );
    }
    Ok(())
}
