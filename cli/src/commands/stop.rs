//! `stop`: ask a running apply against this target to halt between steps.

use crate::prelude::*;
use piceli_core::model::App;
use piceli_runtime::journal::Journal;

/// The arguments of `stop` (none of its own).
#[derive(Debug, clap::Args)]
pub struct StopArgs {}

impl Command for StopArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "none (signals a running apply)",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global)
    }
}

/// Run `stop`. Needs no cluster: it writes the request into the target's journal — only when a release
/// is running, so a stop asked for while nothing runs never halts the next apply.
pub fn run(app: App, global: &Global) -> Result<(), Failure> {
    let dir = crate::session::state_dir(&app, global)?;
    let journal = Journal::open(&dir)?;
    let running = journal.unfinished()?;
    if running.is_some() {
        journal.request_stop()?;
    }
    let number = running.map(|r| r.number);
    if global.output == Output::Json {
        println!(
            "{}",
            serde_json::json!({ "stop_requested": number.is_some(), "release": number })
        );
    } else {
        match number {
            Some(n) => println!(
                "Stop requested: release {n} halts before its next level; `resume` continues it, `resume --abandon` ends it."
            ),
            None => println!("Nothing is running: no stop requested."),
        }
    }
    Ok(())
}
