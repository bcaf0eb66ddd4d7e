//! piceli-cli: the command tree every app binary embeds (`render`, `explain`, `help-json`, and the
//! commands later issues add), its output conventions and exit codes. The standalone `piceli` binary is the
//! piceli-bin package (`cli/bin/`), so app binaries and the workspace build compile this crate alike.
//!
//! Each subcommand is a thin file in [`commands`] that parses its arguments and calls one operation of
//! the runtime.

pub mod args;
pub mod commands;
pub mod exit;
pub mod progress;

use args::{AppCli, AppCommand};
use clap::Parser;
use piceli_core::model::App;
use piceli_runtime::checks::CodeCheck;
use piceli_runtime::controller::Controllers;
use piceli_runtime::webhook::Webhooks;
use std::process::ExitCode;

/// What the subcommand `name` does to the cluster (`help-json`), from its own file.
pub fn effects(name: &str) -> Option<commands::Effects> {
    use commands::*;
    Some(match name {
        "render" => render::EFFECTS,
        "plan" => plan::EFFECTS,
        "apply" => apply::EFFECTS,
        "resume" => resume::EFFECTS,
        "check" => check::EFFECTS,
        "deploy" => deploy::EFFECTS,
        "stop" => stop::EFFECTS,
        "rollback" => rollback::EFFECTS,
        "history" => history::EFFECTS,
        "diff" => diff::EFFECTS,
        "status" => status::EFFECTS,
        "access" => access::EFFECTS,
        "serve" => serve::EFFECTS,
        "explain" => explain::EFFECTS,
        "help-json" => help_json::EFFECTS,
        "completions" | "man" => shell::EFFECTS,
        _ => return None,
    })
}

/// What an app binary runs: the app model and the Rust code `app!` compiled in with it. The `main()`
/// that `app!` generates builds one with every part; there is no other entry point, so no binary can
/// leave its code checks or webhooks out by accident.
pub struct AppBinary {
    /// The app model, with the values written as Rust expressions filled in.
    pub app: App,
    /// The app's `check code(…)` functions.
    pub code_checks: Vec<CodeCheck>,
    /// The app's admission webhooks (called only by `serve`).
    pub webhooks: fn() -> Webhooks,
    /// The app's controllers (called only by `serve`).
    pub controllers: fn() -> Controllers,
}

impl AppBinary {
    /// An app with no code checks, webhooks or controllers.
    pub fn new(app: App) -> Self {
        AppBinary {
            app,
            code_checks: Vec::new(),
            webhooks: Webhooks::new,
            controllers: Controllers::default,
        }
    }

    /// Run the command line of the process's arguments.
    pub fn main(self) -> ExitCode {
        self.run(std::env::args_os())
    }

    /// Run the command line `args` (the first is the program name).
    pub fn run<I, T>(self, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let AppBinary {
            app,
            code_checks: code,
            webhooks,
            controllers,
        } = self;
        let cli = match AppCli::try_parse_from(args) {
            Ok(cli) => cli,
            Err(e) => return exit::clap_error(e),
        };
        let Some(command) = &cli.command else {
            let _ = <AppCli as clap::CommandFactory>::command().print_help();
            return std::process::ExitCode::SUCCESS;
        };
        let result = match command {
            AppCommand::Render(cmd) => {
                let result = commands::render::run(&app, &cli.global, cmd);
                // The process ends right after: skip freeing the model piece by piece.
                std::mem::forget(app);
                result
            }
            AppCommand::Plan(cmd) => commands::plan::run(app, &cli.global, cmd),
            AppCommand::Apply(cmd) => commands::apply::run(app, &cli.global, cmd),
            AppCommand::Resume(args) => commands::resume::run(app, &cli.global, args),
            AppCommand::Check => commands::check::run(app, &code, &cli.global),
            AppCommand::Deploy(cmd) => commands::deploy::run(app, &code, &cli.global, cmd),
            AppCommand::Stop => commands::stop::run(app, &cli.global),
            AppCommand::History => commands::history::run(app, &cli.global),
            AppCommand::Diff(cmd) => commands::diff::run(app, &cli.global, cmd),
            AppCommand::Rollback(cmd) => commands::rollback::run(app, &cli.global, cmd),
            AppCommand::Status => commands::status::run(app, &cli.global),
            AppCommand::Access(cmd) => commands::access::run(app, &cli.global, cmd),
            AppCommand::Serve(cmd) => {
                commands::serve::run(&app, webhooks(), controllers, &cli.global, cmd)
            }
            AppCommand::Explain(cmd) => commands::explain::run(cli.global.output, cmd),
            AppCommand::Completions(cmd) => {
                commands::shell::completions::<AppCli>(&app.name.v, cmd)
            }
            AppCommand::Man => commands::shell::man::<AppCli>(&app.name.v),
            AppCommand::HelpJson => commands::help_json::run(&app),
        };
        exit::finish(result, cli.global.output)
    }
}
