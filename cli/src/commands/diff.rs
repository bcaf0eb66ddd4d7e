//! `diff [FROM] [TO|live]`: field-level differences between two releases, or a release and the cluster.

use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::model::App;
use piceli_core::{Code, ExitClass};
use piceli_runtime::engine::plan::ActionKind;
use piceli_runtime::engine::session::Session;
use serde_json::json;

/// The arguments of `diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A release number (default: the live release).
    pub from: Option<u64>,
    /// Another release number, or `live` (the default).
    #[arg(default_value = "live")]
    pub to: String,
}

impl Command for DiffArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "reads and dry runs",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global, self)
    }
}

/// Run `diff`. Exit 0 when there is no difference, 1 when there is.
pub fn run(app: App, global: &Global, args: &DiffArgs) -> Result<(), Failure> {
    let opts = options(global);
    let to_release = match args.to.as_str() {
        "live" => None,
        n => Some(n.parse::<u64>().map_err(|_| {
            Failure::new(
                Code::WrongType,
                format!("`{n}` is neither a release number nor `live`"),
                "pass release numbers from `history`, or `live`".into(),
            )
        })?),
    };
    let differs = block_on(async {
        let session = Session::open(app, &opts).await?;
        let from = match args.from {
            Some(n) => n,
            None => session.live_release()?.ok_or_else(|| {
                piceli_runtime::engine::EngineError::UnknownRelease(
                    "there is no release yet (see `history`)".into(),
                )
            })?,
        };
        match to_release {
            Some(to) => {
                let diffs = session.diff_releases(from, to)?;
                if global.output == Output::Json {
                    println!("{}", json!({ "from": from, "to": to, "objects": diffs }));
                } else {
                    for d in &diffs {
                        println!("{} {}", d.change, d.object);
                        for c in &d.diff {
                            println!("    {}: {} → {}", c.path, show(&c.before), show(&c.after));
                        }
                    }
                    if diffs.is_empty() {
                        println!("Releases {from} and {to} are the same.");
                    }
                }
                Ok::<bool, piceli_runtime::engine::EngineError>(!diffs.is_empty())
            }
            None => {
                let plan = session.diff_live(from).await?;
                let drifted: Vec<_> = plan.actions.iter().filter(|a| a.changes()).collect();
                if global.output == Output::Json {
                    let objects: Vec<_> = drifted
                        .iter()
                        .map(|a| json!({ "object": a.key(), "action": a.action, "diff": a.diff }))
                        .collect();
                    println!(
                        "{}",
                        json!({ "from": from, "to": "live", "objects": objects })
                    );
                } else {
                    for a in &drifted {
                        let what = match a.action {
                            ActionKind::Create => "missing from the cluster",
                            _ => "differs in the cluster",
                        };
                        println!("{} ({what})", a.key());
                        for c in &a.diff {
                            println!("    {}: {} → {}", c.path, show(&c.after), show(&c.before));
                        }
                    }
                    if drifted.is_empty() {
                        println!("The cluster matches release {from}.");
                    }
                }
                Ok(!drifted.is_empty())
            }
        }
    })??;
    if differs {
        return Err(Failure::Quiet(ExitClass::Failed));
    }
    Ok(())
}

fn show(v: &Option<serde_json::Value>) -> String {
    v.as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "(absent)".into())
}
