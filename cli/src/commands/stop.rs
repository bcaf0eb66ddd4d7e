//! `stop`: ask a running apply against this target to halt between steps.

use crate::args::{Global, Output};
use crate::exit::Failure;
use piceli_core::model::App;
use piceli_runtime::journal::Journal;

/// Run `stop`. Needs no cluster: it writes the request into the target's journal.
pub fn run(app: App, global: &Global) -> Result<(), Failure> {
    let dir = super::history::state_dir(&app, global)?;
    let journal = Journal::open(&dir).map_err(super::history::journal_failure)?;
    journal
        .request_stop()
        .map_err(super::history::journal_failure)?;
    if global.output == Output::Json {
        println!("{}", serde_json::json!({ "stop_requested": true }));
    } else {
        println!(
            "Stop requested: a running apply halts before its next level; `resume` continues it."
        );
    }
    Ok(())
}
