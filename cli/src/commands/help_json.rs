//! `help-json`: the whole command tree as JSON — arguments, side effects, approval rules, exit codes —
//! for CI systems and coding agents.

use crate::args::AppCli;
use crate::exit::Failure;
use clap::CommandFactory;
use piceli_core::model::App;
use serde_json::{Value, json};

/// What each subcommand does to the cluster, and whether it needs approval.
fn effects(name: &str) -> (&'static str, bool) {
    match name {
        "render" | "explain" | "help-json" | "completions" | "man" => ("none", false),
        "plan" => ("reads and dry runs", false),
        "apply" => ("writes", true),
        "check" => (
            "reads (port forwards and exec into the app's pods; code checks do what they do)",
            false,
        ),
        "deploy" => (
            "writes after approval: a plan with changes needs `--approve HASH` (exit 3 without); a plan with none needs no approval and only runs the checks; a failed check re-applies the previous release when the target sets rollback_on_failed_checks; `--resume` continues an approved run; images built from the workspace (`build(…)`) are built before the plan (which shows their digests) and pushed to the registry only after approval, unchanged ones neither rebuilt nor pushed",
            true,
        ),
        "resume" => (
            "writes (only what an approved, interrupted release still has to do)",
            false,
        ),
        "stop" => ("none (signals a running apply)", false),
        "history" => ("none (reads the local journal)", false),
        "status" => ("reads", false),
        "access" => ("reads (port forwards to the app's pods)", false),
        "serve" => (
            "none (serves the app's admission webhooks; the cluster calls it)",
            false,
        ),
        "diff" => ("reads and dry runs", false),
        "rollback" => (
            "reads and dry runs (plans a rollback; apply writes it)",
            false,
        ),
        _ => ("unknown", false),
    }
}

/// Run `help-json`.
pub fn run(app: &App) -> Result<(), Failure> {
    let cmd = AppCli::command();
    let global: Vec<Value> = cmd.get_arguments().map(arg).collect();
    let commands: Vec<Value> = cmd
        .get_subcommands()
        .map(|c| {
            let (side_effects, approval) = effects(c.get_name());
            json!({
                "name": c.get_name(),
                "about": c.get_about().map(|a| a.to_string()),
                "touches_cluster": side_effects,
                "requires_approval": approval,
                "arguments": c.get_arguments().filter(|a| !a.is_global_set()).map(arg).collect::<Vec<_>>(),
            })
        })
        .collect();
    let body = json!({
        "app": app.name.v,
        "targets": app.targets.iter().map(|t| json!({ "name": t.name.v, "namespace": t.namespace.v })).collect::<Vec<_>>(),
        "global_arguments": global,
        "commands": commands,
        "exit_codes": { "0": "ok", "1": "ran but failed", "2": "rejected (bad input, refused, precondition)", "3": "approval required" },
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&body).unwrap_or_default()
    );
    Ok(())
}

fn arg(a: &clap::Arg) -> Value {
    json!({
        "name": a.get_id().as_str(),
        "long": a.get_long(),
        "help": a.get_help().map(|h| h.to_string()),
        "values": a.get_possible_values().iter().map(|v| v.get_name().to_string()).collect::<Vec<_>>(),
    })
}
