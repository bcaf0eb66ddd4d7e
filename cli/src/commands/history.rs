//! `history`: the target's releases from its journal, newest first, with their check outcomes and the
//! approval that started each (its kind and the command that gave it).

use crate::args::{Global, Output};
use crate::exit::Failure;
use piceli_core::Code;
use piceli_core::model::App;
use piceli_runtime::journal::Journal;
use std::path::PathBuf;

/// What `history` does to the cluster, for `help-json`.
pub const EFFECTS: super::Effects = super::Effects {
    touches_cluster: "none (reads the local journal)",
    requires_approval: false,
};

/// The state directory for the chosen target (no cluster needed).
pub fn state_dir(app: &App, global: &Global) -> Result<PathBuf, Failure> {
    if let Some(dir) = &global.state_dir {
        return Ok(dir.clone());
    }
    let target = match &global.target {
        Some(t) => app.target(t),
        None => app.targets.first(),
    }
    .ok_or_else(|| {
        Failure::new(
            Code::UnknownTargetFlag,
            format!(
                "no target named `{}`",
                global.target.clone().unwrap_or_default()
            ),
            format!(
                "pass one of: {}",
                app.targets
                    .iter()
                    .map(|t| t.name.v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    Ok(piceli_runtime::engine::state::StateDir::default_path(
        &app.name.v,
        &target.name.v,
    ))
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
