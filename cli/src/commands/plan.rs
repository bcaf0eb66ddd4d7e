//! `plan`: what applying would change, field by field; stores the plan and prints its hash.

use super::session::{block_on, options};
use crate::args::{Global, Output};
use crate::exit::Failure;
use clap::Args;
use piceli_core::model::App;
use piceli_runtime::engine::conflicts::TakeOwnership;
use piceli_runtime::engine::plan::{ActionKind, Plan};
use piceli_runtime::engine::session::Session;
use serde_json::json;
use std::io::IsTerminal;

/// The arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Take over an existing object that is not the app's (repeatable), e.g. `--adopt Deployment/web`.
    #[arg(long, value_name = "KIND/NAME")]
    pub adopt: Vec<String>,
    /// Take over every existing object the app declares.
    #[arg(long)]
    pub adopt_all: bool,
    /// Take over fields another field manager owns (`kubectl scale`, `kubectl set image`): alone, every
    /// conflicting field; with FIELD (repeatable), that one (`.spec.replicas`, or `Deployment/web:.spec.replicas`).
    #[arg(long, value_name = "FIELD", num_args = 0..=1, default_missing_value = "*", action = clap::ArgAction::Append)]
    pub take_ownership: Vec<String>,
    /// Remove Helm release NAME's claim on the app's objects (repeatable): their `meta.helm.sh/*`
    /// annotations (and a `managed-by: Helm` label) go with their write, its release Secrets are deleted
    /// after every other write succeeded. Without it, a release's bookkeeping is reported and left alone.
    #[arg(long, value_name = "NAME")]
    pub forget_helm_release: Vec<String>,
    /// Leave the unchanged objects out of the text (they are still counted, and in `-o json`).
    #[arg(long)]
    pub changes_only: bool,
}

/// What `plan` does to the cluster, for `help-json`.
pub const EFFECTS: super::Effects = super::Effects {
    touches_cluster: "reads and dry runs",
    requires_approval: false,
};

/// Run `plan`. Exit 3 when there are changes to approve.
pub fn run(app: App, global: &Global, args: &PlanArgs) -> Result<(), Failure> {
    let opts = options(global);
    let plan = block_on(async {
        // Images built from the workspace: their last delivered build (`deploy` builds and delivers).
        let (app, notes) = piceli_runtime::images::delivered(
            app,
            global.target.as_deref(),
            global.state_dir.as_deref(),
        );
        for note in notes {
            eprintln!("{note}");
        }
        let session = Session::open(app, &opts).await?;
        session
            .plan_forgetting(
                args.adopt.clone(),
                args.adopt_all,
                take_ownership(args),
                args.forget_helm_release.clone(),
            )
            .await
    })??;
    for warning in plan.requires.iter().filter_map(|r| r.warning()) {
        eprintln!("{warning}");
    }
    if global.output == Output::Json {
        println!("{}", to_json(&plan));
    } else {
        print_text(&plan, std::io::stdout().is_terminal(), args.changes_only);
    }
    if plan.has_changes() {
        return Err(Failure::approval_required());
    }
    Ok(())
}

/// What `--take-ownership` asked for.
fn take_ownership(args: &PlanArgs) -> TakeOwnership {
    if args.take_ownership.is_empty() {
        TakeOwnership::None
    } else if args.take_ownership.iter().any(|f| f == "*") {
        TakeOwnership::All
    } else {
        TakeOwnership::Fields(args.take_ownership.clone())
    }
}

/// The documented JSON form: `{"hash", "app", "target", "server", "namespace", "changes", "rollback_of",
/// "requires": [{"apiVersion", "kind", "namespace", "name", "found", "uid"}], "helm": [{"name", "objects",
/// "secrets", "forget"}], "actions": [{"kind", "namespace", "name", "action", "diff": [{"path", "before",
/// "after"}], "take": [{"field", "from"}], "reason", "helm": {"release", "forget"}, "rollout"}]}`.
pub fn to_json(plan: &Plan) -> serde_json::Value {
    json!({
        "hash": plan.hash,
        "app": plan.app,
        "target": plan.target,
        "server": plan.server,
        "namespace": plan.namespace,
        "changes": plan.has_changes(),
        "rollback_of": plan.rollback_of,
        "requires": plan.requires,
        "helm": plan.helm,
        "actions": plan.actions.iter().map(|a| json!({
            "apiVersion": a.api_version,
            "kind": a.kind,
            "namespace": a.namespace,
            "name": a.name,
            "action": a.action,
            "diff": a.diff,
            "take": a.take,
            "reason": a.reason,
            "helm": a.helm,
            "rollout": a.rollout,
        })).collect::<Vec<_>>(),
    })
}

/// Print a plan for people (colored on a TTY); `changes_only` leaves out the unchanged objects (they are
/// still counted).
pub fn print_text(plan: &Plan, color: bool, changes_only: bool) {
    let paint = |code: &str, text: String| {
        if color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text
        }
    };
    println!(
        "Plan for {} → target {} ({}, namespace {})",
        plan.app, plan.target, plan.server, plan.namespace
    );
    let mut counts = [0usize; 6];
    for a in &plan.actions {
        let (mark, code, slot) = match a.action {
            ActionKind::Create => ("+ create   ", "32", 0),
            ActionKind::Update => ("~ update   ", "33", 1),
            ActionKind::Adopt => ("~ adopt    ", "36", 2),
            ActionKind::Delete => ("- delete   ", "31", 3),
            ActionKind::Unchanged => ("  unchanged", "2", 4),
            ActionKind::Use => ("  use as is", "2", 4),
            ActionKind::Replace => ("± replace  ", "35", 5),
        };
        counts[slot] += 1;
        if changes_only && !a.changes() {
            continue;
        }
        println!("  {} {}", paint(code, mark.to_string()), a.key());
        if let Some(reason) = &a.reason {
            println!("      because {reason}");
        }
        if let Some(rollout) = &a.rollout {
            println!("      rolls out: {rollout}");
        }
        for t in &a.take {
            println!("      takes {} from {}", t.field, t.from);
        }
        for c in &a.diff {
            let show = |v: &Option<serde_json::Value>| {
                v.as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "(absent)".into())
            };
            println!(
                "      {}: {} → {}",
                c.path,
                paint("31", show(&c.before)),
                paint("32", show(&c.after))
            );
        }
    }
    let replaced = if counts[5] > 0 {
        format!("{} to replace, ", counts[5])
    } else {
        String::new()
    };
    println!(
        "{} to create, {} to update, {}{} to adopt, {} to delete, {} unchanged.",
        counts[0], counts[1], replaced, counts[2], counts[3], counts[4]
    );
    for r in &plan.requires {
        let seen = if r.found {
            "present".to_string()
        } else {
            format!(
                "MISSING (made by someone else; {} until it exists)",
                r.while_missing().trim_end_matches(',')
            )
        };
        println!("  requires   {} (external): {seen}", r.key());
    }
    for release in &plan.helm {
        println!("  {}", release.summary());
    }
    if let Some(n) = plan.rollback_of {
        println!("This plan restores release {n}.");
    }
    if plan.has_changes() {
        println!("hash: {}", plan.hash);
        println!("Approve with: apply --approve {}", plan.hash);
    } else {
        println!("Nothing to apply.");
    }
}
