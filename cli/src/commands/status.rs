//! `status`: one state for the app (`up`, `degraded`, `down`, `unknown`), each workload's health, the live
//! release, the last checks and the URLs. Exit 0 only when up.

use super::session::{block_on, options};
use crate::args::{Global, Output};
use crate::exit::Failure;
use piceli_core::ExitClass;
use piceli_core::model::App;
use piceli_runtime::engine::session::Session;
use piceli_runtime::status::{State, status};

/// What `status` does to the cluster, for `help-json`.
pub const EFFECTS: super::Effects = super::Effects {
    touches_cluster: "reads",
    requires_approval: false,
};

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
