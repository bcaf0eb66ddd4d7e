//! piceli-cli: the command tree every app binary embeds (`render`, `plan`, `apply`, `deploy`, … `serve`),
//! its output conventions and exit codes. The standalone `piceli` binary is the
//! piceli-bin package (`cli/bin/`), so app binaries and the workspace build compile this crate alike.
//!
//! Layers, each using only those below it: [`commands`] (the registry, and one thin file per subcommand
//! that parses its arguments and calls one operation of the runtime) → [`output`] (what several commands
//! print alike) and [`session`] (what the engine commands share) → [`prelude`], [`command`] and [`exit`].

pub mod command;
pub mod commands;
pub mod exit;
pub mod output;
pub mod prelude;
pub mod progress;
pub mod session;

use clap::{CommandFactory, Parser};
use command::Invocation;
pub use command::Operator;
use commands::AppCli;
use piceli_core::model::App;
use piceli_runtime::checks::CodeCheck;
use std::process::ExitCode;

/// What an app binary runs: the app model and the Rust code `app!` compiled in with it. The `main()`
/// that `app!` generates builds one with every part; there is no other entry point, so no binary can
/// leave its code checks or webhooks out by accident.
pub struct AppBinary {
    /// The app model, with the values written as Rust expressions filled in.
    pub app: App,
    /// The app's `check code(…)` functions.
    pub code_checks: Vec<CodeCheck>,
    /// The app's admission webhooks and controllers (called only by `serve`).
    pub operator: Operator,
}

impl AppBinary {
    /// An app with no code checks, webhooks or controllers.
    pub fn new(app: App) -> Self {
        AppBinary {
            app,
            code_checks: Vec::new(),
            operator: Operator::default(),
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
            operator,
        } = self;
        let cli = match AppCli::try_parse_from(args) {
            Ok(cli) => cli,
            Err(e) => return exit::clap_error(e),
        };
        let Some(command) = cli.command else {
            let _ = <AppCli as clap::CommandFactory>::command().print_help();
            return std::process::ExitCode::SUCCESS;
        };
        let output = cli.global.output;
        let invocation = Invocation {
            app,
            code_checks: code,
            operator,
            global: cli.global,
            tree: AppCli::command,
            effects: commands::effects,
        };
        let result = command.run(invocation);
        exit::finish(result, output)
    }
}
