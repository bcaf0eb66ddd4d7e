//! `deploy [--approve HASH] [--resume]`: inputs → build → plan → approve → deliver → apply → ready →
//! checks (→ rollback), with a readable progress, or JSON lines (`-o json`: a `stage` object as each stage
//! ends, the events within it, and a `result` object).

use crate::output::checks::{check_line, failure_for_checks};
use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::model::App;
use piceli_runtime::checks::CodeCheck;
use piceli_runtime::engine::deploy::{DeployEvent, DeployOptions, DeployReport};
use piceli_runtime::engine::session::Session;
use piceli_runtime::images;
use serde_json::json;

/// The arguments of `deploy`.
#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The hash a `deploy` without it printed (needed only when the plan has changes).
    #[arg(long, value_name = "HASH", conflicts_with = "resume")]
    pub approve: Option<String>,
    /// Continue the interrupted deploy run from the stage it reached (nothing to do: exit 0).
    #[arg(long)]
    pub resume: bool,
    /// Deliver images built from the workspace to this registry instead of the target's, for this run.
    #[arg(long, value_name = "HOST[:PORT]/PATH")]
    pub registry: Option<String>,
    /// The docker config file holding the registry's credentials (never ~/.docker/config.json).
    #[arg(long, value_name = "FILE")]
    pub registry_auth: Option<std::path::PathBuf>,
    /// Talk to the registry over HTTPS trusting exactly the CA certificates in this PEM file (a registry
    /// with its own CA, loopback included).
    #[arg(long, value_name = "FILE", conflicts_with = "oci_dir")]
    pub registry_ca: Option<std::path::PathBuf>,
    /// Write built images into this OCI layout directory instead of pushing them.
    #[arg(long, value_name = "DIR", conflicts_with = "registry")]
    pub oci_dir: Option<std::path::PathBuf>,
    /// The cargo workspace that builds the images (default: the working directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<std::path::PathBuf>,
}

impl Command for DeployArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "writes after approval: a plan with changes needs `--approve HASH` (exit 3 without); a plan with none needs no approval and only runs the checks; a failed check re-applies the previous release when the target sets rollback_on_failed_checks; `--resume` continues an approved run; images built from the workspace (`build(…)`) are built before the plan (which shows their digests) and pushed to the registry only after approval, unchanged ones neither rebuilt nor pushed; each stage (inputs, build, plan, approve, deliver, apply, ready, checks) is journaled and reported",
        requires_approval: true,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(
            invocation.app,
            &invocation.code_checks,
            &invocation.global,
            self,
        )
    }
}

/// Run `deploy`.
pub fn run(
    app: App,
    code: &[CodeCheck],
    global: &Global,
    args: &DeployArgs,
) -> Result<(), Failure> {
    let json = global.output == Output::Json;
    let opts = options(global);
    let deploy = DeployOptions {
        approve: args.approve.clone(),
        resume: args.resume,
        images: Some(images::BuildOptions {
            workspace: args.workspace.clone().unwrap_or_else(|| ".".into()),
            registry: args.registry.clone(),
            oci_dir: args.oci_dir.clone(),
            auth: args.registry_auth.clone(),
            // The session's state directory (the engine sets it).
            state_dir: std::path::PathBuf::new(),
            target_dir: None,
            ca: args.registry_ca.clone(),
        }),
    };
    let result = block_on(async {
        let mut session = Session::builder(app, opts)
            .progress(crate::progress::reporter(global.output, true))
            .open()
            .await?;
        session
            .deploy(&deploy, code, |event| {
                if json {
                    println!("{}", serde_json::to_string(event).unwrap_or_default());
                } else {
                    print_event(event);
                }
            })
            .await
    })?;
    let outcome = match result {
        Ok(report) => {
            if !json {
                print_summary(&report, args.resume);
            }
            let failure = if report.approval_required {
                Some(Failure::approval_required())
            } else {
                failure_for_checks(&report)
            };
            (Some(report), failure)
        }
        Err(e) => (None, Some(Failure::from(e))),
    };
    match outcome {
        (report, failure) if json => {
            let report = report.unwrap_or_default();
            let error = failure.as_ref().and_then(Failure::json);
            let exit = failure.as_ref().map_or(0, Failure::exit_code);
            println!(
                "{}",
                json!({
                    "event": "result",
                    "ok": exit == 0,
                    "exit": exit,
                    "run": report.run,
                    "hash": report.hash,
                    "approval_required": report.approval_required,
                    "release": report.release,
                    "failed": report.failed(),
                    "restored": report.restored,
                    "rollback_release": report.rollback_release,
                    "error": error,
                })
            );
            failure.map_or(Ok(()), |f| Err(f.quieted()))
        }
        (_, None) => Ok(()),
        (_, Some(f)) => Err(f),
    }
}

fn print_image_event(event: &images::ImageEvent) {
    use images::ImageEvent;
    match event {
        ImageEvent::Inputs {
            image,
            inputs,
            commit,
            dirty,
            unchanged,
        } => {
            let commit = commit
                .as_deref()
                .map_or("no git commit".to_string(), |c| format!("commit {c}"));
            let dirty = if *dirty { ", dirty tree" } else { "" };
            let state = if *unchanged { "unchanged" } else { "changed" };
            println!("Inputs of {image}: {inputs} ({commit}{dirty}): {state}.");
        }
        ImageEvent::Build {
            image,
            digest,
            skipped: true,
            cached,
            ..
        } => {
            let why = if *cached {
                "built before, from the build cache"
            } else {
                "unchanged"
            };
            println!("Build {image}: skipped, {why} ({digest}).")
        }
        ImageEvent::Build {
            image, digest, ms, ..
        } => println!("Built {image}: {digest} ({ms} ms)."),
        ImageEvent::Deliver {
            image,
            skipped: true,
            ..
        } => println!("Deliver {image}: skipped, already there."),
        ImageEvent::Deliver {
            reference,
            uploaded,
            present,
            bytes,
            ms,
            ..
        } => println!(
            "Delivered {reference}: {uploaded} blob(s) uploaded ({bytes} bytes), {present} already there ({ms} ms)."
        ),
        ImageEvent::Collect { removed: 0, .. } => {}
        ImageEvent::Collect {
            kept,
            removed,
            bytes,
        } => println!(
            "Build cache: {removed} blob(s) no release runs removed ({bytes} bytes); {kept} image(s) kept."
        ),
    }
}

fn print_event(event: &DeployEvent) {
    match event {
        DeployEvent::Stage {
            stage,
            outcome,
            detail,
            ms,
            ..
        } => {
            let detail = if detail.is_empty() {
                String::new()
            } else {
                format!(": {detail}")
            };
            println!("[{stage}] {outcome}{detail} ({ms} ms)");
        }
        DeployEvent::Image(e) => print_image_event(e),
        DeployEvent::Plan {
            hash,
            changes,
            create,
            update,
            delete,
            unchanged,
            warnings,
            fields,
        } => {
            for w in warnings {
                eprintln!("{w}");
            }
            println!(
                "Plan {hash}: {create} to create, {update} to update, {delete} to delete, {unchanged} unchanged."
            );
            for field in fields {
                println!("  changes {field}");
            }
            if !changes {
                println!("Nothing to apply: running the checks.");
            }
        }
        DeployEvent::Resume { run, stage } => {
            println!("Resuming deploy run {run} from stage `{stage}`.")
        }
        DeployEvent::Apply {
            release,
            written,
            unchanged,
            ..
        } => match release {
            Some(n) => println!("Applied release {n}: {written} written, {unchanged} unchanged."),
            None => println!("Applied nothing."),
        },
        DeployEvent::Ready { waited_ms, .. } => println!("Ready ({waited_ms} ms)."),
        DeployEvent::Check { .. } => println!("{}", check_line(event)),
        DeployEvent::Rollback {
            failed_release,
            restored,
            release,
            ..
        } => match (restored, release) {
            (Some(r), Some(n)) => println!(
                "Rolled back: release {failed_release} failed its checks; release {r}'s objects applied as release {n}."
            ),
            (Some(r), None) => println!("Rolled back to release {r} (nothing needed writing)."),
            (None, _) => println!(
                "Release {failed_release} is the first release: there is nothing to roll back to."
            ),
        },
    }
}

fn print_summary(report: &DeployReport, resume: bool) {
    if report.approval_required {
        let hash = report.hash.as_deref().unwrap_or_default();
        println!("hash: {hash}");
        println!("Approve with: deploy --approve {hash}  (field-level changes: `plan`)");
        return;
    }
    if resume && report.run.is_none() {
        println!("Nothing to resume.");
        return;
    }
    if report.failed().is_empty() {
        println!("All {} check(s) passed.", report.checks.len());
    }
}
