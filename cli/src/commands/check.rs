//! `check`: run the declared checks against the live release now. Exit 0 all passed, 1 any failed.

use crate::output::checks::{check_line, failure_for_checks};
use crate::prelude::*;
use crate::session::{block_on, options};
use piceli_core::model::App;
use piceli_runtime::checks::CodeCheck;
use piceli_runtime::engine::deploy::DeployEvent;
use piceli_runtime::engine::session::Session;

/// The arguments of `check` (none of its own).
#[derive(Debug, clap::Args)]
pub struct CheckArgs {}

impl Command for CheckArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "reads (port forwards and exec into the app's pods; code checks do what they do)",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.code_checks, &invocation.global)
    }
}

/// Run `check`.
pub fn run(app: App, code: &[CodeCheck], global: &Global) -> Result<(), Failure> {
    let opts = options(global);
    let text = global.output != Output::Json;
    let report = block_on(async {
        let session = Session::open(app, &opts).await?;
        session
            .check(code, |event| {
                if let (true, DeployEvent::Check { .. }) = (text, event) {
                    println!("{}", check_line(event));
                }
            })
            .await
    })??;
    if text {
        if report.checks.is_empty() {
            println!("The app declares no checks.");
        }
    } else {
        let body = serde_json::json!({
            "release": report.release,
            "passed": report.failed().is_empty(),
            "checks": report.checks,
        });
        println!("{body}");
    }
    match failure_for_checks(&report) {
        None => Ok(()),
        Some(f) if text => Err(f),
        Some(f) => Err(f.quieted()),
    }
}
