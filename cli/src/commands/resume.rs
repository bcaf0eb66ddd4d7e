//! `resume`: finish the release an interrupted apply left running.

use super::session::{block_on, options};
use crate::args::{Global, Output};
use crate::exit::Failure;
use piceli_core::model::App;
use piceli_runtime::engine::session::Session;

/// Run `resume`.
pub fn run(app: App, global: &Global) -> Result<(), Failure> {
    let opts = options(global);
    let applied = block_on(async {
        let session = Session::open(app, &opts).await?;
        session.resume().await
    })??;
    if global.output == Output::Json {
        println!(
            "{}",
            serde_json::json!({ "release": applied.release, "written": applied.written })
        );
    } else {
        match applied.release {
            Some(n) => println!("Release {n} finished: {} step(s) run.", applied.written),
            None => println!("Nothing to resume."),
        }
    }
    Ok(())
}
