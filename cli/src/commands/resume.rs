//! `resume`: finish the release an interrupted apply left running, or (`--abandon`) end it.

use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::model::App;
use piceli_runtime::engine::session::Session;

/// The arguments of `resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// End the running release as `superseded` instead of finishing it (journaled; nothing is written to
    /// the cluster), e.g. when its secret sources changed and it can no longer be finished as approved.
    #[arg(long)]
    pub abandon: bool,
}

impl Command for ResumeArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "writes (only what an approved, interrupted release still has to do)",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global, self)
    }
}

/// Run `resume`.
pub fn run(app: App, global: &Global, args: &ResumeArgs) -> Result<(), Failure> {
    let opts = options(global);
    if args.abandon {
        let ended = block_on(async {
            let session = Session::open(app, &opts).await?;
            session.abandon().await
        })??;
        if global.output == Output::Json {
            println!("{}", serde_json::json!({ "abandoned": ended }));
        } else {
            match ended {
                Some(n) => println!(
                    "Release {n} abandoned (journaled as superseded; nothing was written to the cluster). Plan again to replace it."
                ),
                None => println!("Nothing to abandon: no release is running."),
            }
        }
        return Ok(());
    }
    let applied = block_on(async {
        let session = Session::builder(app, opts.clone())
            .progress(crate::progress::reporter(global.output, false))
            .open()
            .await?;
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
