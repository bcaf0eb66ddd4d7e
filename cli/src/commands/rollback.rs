//! `rollback [RELEASE|previous]`: plan a return to an earlier release; `apply --approve HASH` runs it.

use crate::output::plan::{print_text, to_json};
use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::Code;
use piceli_core::model::App;
use piceli_runtime::engine::session::Session;
use std::io::IsTerminal;

/// The arguments of `rollback`.
#[derive(Debug, Args)]
pub struct RollbackArgs {
    /// The release number to return to, or `previous` (the default).
    #[arg(default_value = "previous")]
    pub release: String,
}

impl Command for RollbackArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "reads and dry runs (plans a rollback; apply writes it)",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global, self)
    }
}

/// Run `rollback`. Exit 3 when the rollback has changes to approve.
pub fn run(app: App, global: &Global, args: &RollbackArgs) -> Result<(), Failure> {
    let to = match args.release.as_str() {
        "previous" => None,
        n => Some(n.parse::<u64>().map_err(|_| {
            Failure::new(
                Code::WrongType,
                format!("`{n}` is not a release number"),
                "pass a number from `history`, or `previous`".into(),
            )
        })?),
    };
    let opts = options(global);
    let plan = block_on(async {
        let session = Session::open(app, &opts).await?;
        session.plan_rollback(to).await
    })??;
    if global.output == Output::Json {
        println!("{}", to_json(&plan));
    } else {
        print_text(&plan, std::io::stdout().is_terminal(), false);
    }
    if plan.has_changes() {
        return Err(Failure::approval_required());
    }
    Ok(())
}
