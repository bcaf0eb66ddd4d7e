//! `apply --approve HASH`: execute exactly that stored plan.

use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::model::App;
use piceli_runtime::engine::session::Session;

/// The arguments of `apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// The hash `plan` printed (or a unique prefix of at least 12 hex digits).
    #[arg(long, value_name = "HASH")]
    pub approve: String,
}

impl Command for ApplyArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "writes",
        requires_approval: true,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global, self)
    }
}

/// Run `apply`.
pub fn run(app: App, global: &Global, args: &ApplyArgs) -> Result<(), Failure> {
    let opts = options(global);
    let applied = block_on(async {
        // Images built from the workspace: their last delivered build (`deploy` builds and delivers).
        let (app, notes) = piceli_runtime::images::delivered(
            app,
            global.target.as_deref(),
            global.state_dir.as_deref(),
        );
        for note in notes {
            eprintln!("{note}");
        }
        let session = Session::builder(app, opts)
            .progress(crate::progress::reporter(global.output, false))
            .open()
            .await?;
        session.apply(&args.approve).await
    })??;
    if global.output == Output::Json {
        let body = serde_json::json!({
            "hash": args.approve,
            "release": applied.release,
            "written": applied.written,
            "unchanged": applied.unchanged,
        });
        println!("{body}");
    } else {
        match applied.release {
            Some(n) => println!(
                "Release {n}: {} object(s) written, {} unchanged.",
                applied.written, applied.unchanged
            ),
            None => println!(
                "Nothing to apply: all {} object(s) unchanged.",
                applied.unchanged
            ),
        }
    }
    Ok(())
}
