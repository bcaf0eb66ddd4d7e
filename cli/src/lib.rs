//! piceli-cli: the command tree every app binary embeds (`render`, `explain`, `help-json`, and the
//! commands later issues add), its output conventions and exit codes, and the standalone `piceli` binary.
//!
//! Each subcommand is a thin file in [`commands`] that parses its arguments and calls one operation of
//! the runtime.

pub mod args;
pub mod commands;
pub mod exit;

use args::{AppCli, AppCommand};
use clap::Parser;
use piceli_core::model::App;
use std::process::ExitCode;

/// Run an app binary's command line with the process arguments.
pub fn app_main(app: App) -> ExitCode {
    run_app(app, std::env::args_os())
}

/// Run an app binary's command line with the given arguments (the first is the program name).
pub fn run_app<I, T>(app: App, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
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
        AppCommand::Resume => commands::resume::run(app, &cli.global),
        AppCommand::Stop => commands::stop::run(app, &cli.global),
        AppCommand::History => commands::history::run(app, &cli.global),
        AppCommand::Diff(cmd) => commands::diff::run(app, &cli.global, cmd),
        AppCommand::Rollback(cmd) => commands::rollback::run(app, &cli.global, cmd),
        AppCommand::Status => commands::status::run(app, &cli.global),
        AppCommand::Access(cmd) => commands::access::run(app, &cli.global, cmd),
        AppCommand::Explain(cmd) => commands::explain::run(&cli.global, cmd),
        AppCommand::HelpJson => commands::help_json::run(&app),
    };
    exit::finish(result, &cli.global)
}
