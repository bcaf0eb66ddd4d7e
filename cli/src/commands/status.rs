//! `status`: one state for the app (`up`, `degraded`, `down`, `unknown`), each workload's health, the live
//! release, the last checks and the URLs. Exit 0 only when up.

use crate::prelude::*;
use crate::session::{block_on, options};
use piceli_core::ExitClass;
use piceli_core::model::App;
use piceli_runtime::engine::session::Session;
use piceli_runtime::status::{State, status};

/// The arguments of `status` (none of its own).
#[derive(Debug, clap::Args)]
pub struct StatusArgs {}

impl Command for StatusArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "reads",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global)
    }
}

/// Run `status`.
pub fn run(app: App, global: &Global) -> Result<(), Failure> {
    let opts = options(global);
    let report = block_on(async {
        let session = Session::open(app, &opts).await?;
        Ok::<_, piceli_runtime::engine::EngineError>(status(&session).await)
    })??;
    if global.output == Output::Json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
    }
    if report.state == State::Up {
        Ok(())
    } else {
        Err(Failure::Quiet(ExitClass::Failed))
    }
}
