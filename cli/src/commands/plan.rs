//! `plan`: what applying would change, field by field; stores the plan and prints its hash.

use crate::output::plan::{print_text, to_json};
use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::model::App;
use piceli_runtime::engine::conflicts::TakeOwnership;
use piceli_runtime::engine::session::Session;
use std::io::IsTerminal;

/// The arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Take over an existing object that is not the app's (repeatable), e.g. `--adopt Deployment/web`.
    #[arg(long, value_name = "KIND/NAME")]
    pub adopt: Vec<String>,
    /// Take over every existing object the app declares.
    #[arg(long)]
    pub adopt_all: bool,
    /// Take over fields another field manager owns (`kubectl scale`, `kubectl set image`): alone, every
    /// conflicting field; with FIELD (repeatable), that one (`.spec.replicas`, or `Deployment/web:.spec.replicas`).
    #[arg(long, value_name = "FIELD", num_args = 0..=1, default_missing_value = "*", action = clap::ArgAction::Append)]
    pub take_ownership: Vec<String>,
    /// Remove Helm release NAME's claim on the app's objects (repeatable): their `meta.helm.sh/*`
    /// annotations (and a `managed-by: Helm` label) go with their write, its release Secrets are deleted
    /// after every other write succeeded. Without it, a release's bookkeeping is reported and left alone.
    #[arg(long, value_name = "NAME")]
    pub forget_helm_release: Vec<String>,
    /// Make a generated secret value again (repeatable): `db` every generated key of Secret `db`,
    /// `db.password` that key (templates naming it, and certificates a rotated CA signs, with it). The
    /// plan shows each as `rotate`; like any change it needs `apply --approve HASH`.
    #[arg(long, value_name = "SECRET[.KEY]")]
    pub rotate: Vec<String>,
    /// Leave the unchanged objects out of the text (they are still counted, and in `-o json`).
    #[arg(long)]
    pub changes_only: bool,
}

impl Command for PlanArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "reads and dry runs",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global, self)
    }
}

/// Run `plan`. Exit 3 when there are changes to approve.
pub fn run(app: App, global: &Global, args: &PlanArgs) -> Result<(), Failure> {
    let opts = options(global);
    let plan = block_on(async {
        // Images built from the workspace: their last delivered build (`deploy` builds and delivers).
        let (app, notes) = piceli_runtime::images::delivered(
            app,
            global.target.as_deref(),
            global.state_dir.as_deref(),
        );
        for note in notes {
            eprintln!("{note}");
        }
        let session = Session::open(app, &opts).await?;
        session
            .plan_rotating(
                args.adopt.clone(),
                args.adopt_all,
                take_ownership(args),
                args.forget_helm_release.clone(),
                args.rotate.clone(),
            )
            .await
    })??;
    for warning in plan.requires.iter().filter_map(|r| r.warning()) {
        eprintln!("{warning}");
    }
    if global.output == Output::Json {
        println!("{}", to_json(&plan));
    } else {
        print_text(&plan, std::io::stdout().is_terminal(), args.changes_only);
    }
    if plan.has_changes() {
        return Err(Failure::approval_required());
    }
    Ok(())
}

/// What `--take-ownership` asked for.
fn take_ownership(args: &PlanArgs) -> TakeOwnership {
    if args.take_ownership.is_empty() {
        TakeOwnership::None
    } else if args.take_ownership.iter().any(|f| f == "*") {
        TakeOwnership::All
    } else {
        TakeOwnership::Fields(args.take_ownership.clone())
    }
}

#[cfg(test)]
mod tests {
    use crate::commands::{AppCli, AppCommand};
    use clap::Parser;

    #[test]
    fn rotate_is_repeatable_and_reaches_the_plan() {
        let cli =
            AppCli::try_parse_from(["app", "plan", "--rotate", "db.password", "--rotate", "ca"])
                .expect("parses");
        let Some(AppCommand::Plan(args)) = cli.command else {
            panic!("not plan: {:?}", cli.command);
        };
        assert_eq!(args.rotate, ["db.password", "ca"]);
        let none = AppCli::try_parse_from(["app", "plan"]).expect("parses");
        let Some(AppCommand::Plan(args)) = none.command else {
            panic!("not plan");
        };
        assert!(args.rotate.is_empty());
    }
}
