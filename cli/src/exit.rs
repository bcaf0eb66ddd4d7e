//! Exit codes and how failures are printed: every failure has a fixed code and a fix.
//!
//! Exit codes: 0 ok; 1 ran but failed; 2 rejected (bad input, refused, precondition); 3 approval required.

use crate::prelude::Output;
use piceli_core::{Code, Coded, ExitClass};
use std::process::ExitCode;

/// Success.
pub const OK: u8 = 0;

/// How a command that did not succeed ends the process.
#[derive(Debug)]
pub enum Failure {
    /// An error, printed with its fixed code and its fix; the exit code is the code's class (the `codes!`
    /// table says it beside the code).
    Error {
        /// The fixed code.
        code: Code,
        /// What went wrong.
        message: String,
        /// How to fix it.
        help: String,
    },
    /// Not an error to print: the command's own output said it all (an approval is required, a check
    /// failed, differences were found, the app is unhealthy). Ends with this class's exit code.
    Quiet(ExitClass),
}

impl Failure {
    /// An error with its code, message and fix.
    pub fn new(code: Code, message: String, help: String) -> Self {
        Failure::Error {
            code,
            message,
            help,
        }
    }

    /// The plan needs an approval first (exit 3); the command printed how to give it.
    pub fn approval_required() -> Self {
        Failure::Quiet(ExitClass::ApprovalRequired)
    }

    /// How the process ends.
    pub fn exit_class(&self) -> ExitClass {
        match self {
            Failure::Error { code, .. } => code.exit_class(),
            Failure::Quiet(class) => *class,
        }
    }

    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        self.exit_class().exit_code()
    }

    /// The error as the `error` object of JSON output (`code`, `message`, `help`); none for a quiet one.
    pub fn json(&self) -> Option<serde_json::Value> {
        match self {
            Failure::Error {
                code,
                message,
                help,
            } => {
                Some(serde_json::json!({ "code": code.as_str(), "message": message, "help": help }))
            }
            Failure::Quiet(_) => None,
        }
    }

    /// The same ending with nothing more printed: the command already wrote the error (in its JSON).
    pub fn quieted(self) -> Self {
        Failure::Quiet(self.exit_class())
    }
}

/// Every coded error of every crate becomes a failure the same way.
impl<E: Coded> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::new(e.code(), e.to_string(), e.help())
    }
}

/// Print a failure (JSON on stdout with `--output json`, text on stderr otherwise) and exit.
pub fn finish(result: Result<(), Failure>, output: Output) -> ExitCode {
    let Err(failure) = result else {
        return ExitCode::from(OK);
    };
    if let Failure::Error {
        code,
        message,
        help,
    } = &failure
    {
        if output == Output::Json {
            println!("{}", serde_json::json!({ "error": failure.json() }));
        } else {
            eprintln!("error[{code}]: {message}\n  help: {help}");
        }
    }
    ExitCode::from(failure.exit_code())
}

/// Clap's own errors: help and version exit 0; usage errors exit 2.
pub fn clap_error(e: clap::Error) -> ExitCode {
    let code = if e.use_stderr() {
        ExitClass::Rejected.exit_code()
    } else {
        OK
    };
    let _ = e.print();
    ExitCode::from(code)
}
