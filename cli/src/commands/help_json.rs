//! `help-json`: the whole command tree as JSON — arguments, side effects, approval rules, exit codes —
//! for CI systems and coding agents.

use crate::prelude::*;
use piceli_core::model::App;
use serde_json::{Value, json};

/// The arguments of `help-json` (none of its own).
#[derive(Debug, clap::Args)]
pub struct HelpJsonArgs {}

impl Command for HelpJsonArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "none",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(&invocation.app, (invocation.tree)(), invocation.effects)
    }
}

/// Run `help-json`.
pub fn run(
    app: &App,
    cmd: clap::Command,
    effects: fn(&str) -> Option<Effects>,
) -> Result<(), Failure> {
    let global: Vec<Value> = cmd.get_arguments().map(arg).collect();
    let commands: Vec<Value> = cmd
        .get_subcommands()
        .map(|c| {
            let effects = effects(c.get_name());
            json!({
                "name": c.get_name(),
                "about": c.get_about().map(|a| a.to_string()),
                "touches_cluster": effects.map_or("unknown", |e| e.touches_cluster),
                "requires_approval": effects.is_some_and(|e| e.requires_approval),
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
