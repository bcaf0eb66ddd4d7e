//! A plan for people (`print_text`, colored on a terminal) and for programs (`to_json`, the documented JSON
//! form): what `plan`, `rollback` and `deploy` print.

use piceli_runtime::engine::plan::{ActionKind, Plan};
use serde_json::json;

/// The documented JSON form: `{"hash", "app", "target", "server", "namespace", "changes", "rollback_of",
/// "requires": [{"apiVersion", "kind", "namespace", "name", "found", "uid"}], "helm": [{"name", "objects",
/// "secrets", "forget"}], "actions": [{"kind", "namespace", "name", "action", "diff": [{"path", "before",
/// "after"}], "take": [{"field", "from"}], "reason", "propagation", "helm": {"release", "forget"}, "rollout", "rotate": [KEY],
/// "generated": [{"key", "state", "fingerprint"}]}]}` (a Secret's generated keys: `exists`, `generate`,
/// `rotate` or `update`, with the live value's keyed fingerprint — never a value).
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
            "apiVersion": a.object.api_version,
            "kind": a.object.kind,
            "namespace": a.object.namespace,
            "name": a.object.name,
            "action": a.action,
            "diff": a.diff,
            "take": a.take,
            "reason": a.reason,
            "propagation": a.propagation,
            "helm": a.helm,
            "rollout": a.rollout,
            "rotate": a.rotate,
            "generated": a.generated,
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
        for g in &a.generated {
            let fingerprint = g
                .fingerprint
                .as_deref()
                .map(|f| format!(" (fingerprint {f})"))
                .unwrap_or_default();
            let what = match g.state.as_str() {
                "exists" => format!("exists{fingerprint}, kept"),
                "generate" => "generated at apply".to_string(),
                "rotate" => format!("rotate: was{fingerprint}, made again at apply"),
                other => format!("{other}{fingerprint}"),
            };
            println!(
                "      {} {}: {what}",
                paint("36", "secret".to_string()),
                g.key
            );
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
