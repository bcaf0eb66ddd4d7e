//! Exit codes and how failures are printed: every failure has a fixed code and a fix.
//!
//! Exit codes: 0 ok; 1 ran but failed; 2 rejected (bad input, refused, precondition); 3 approval required.

use crate::args::Output;
use piceli_core::{Code, Coded, ExitClass};
use std::process::ExitCode;

impl Failure {
    /// An outcome that is not an error but has its own exit code (approval required): nothing is printed.
    pub fn quiet(exit: u8) -> Self {
        Failure {
            code: Code::UnknownPlan,
            message: String::new(),
            help: String::new(),
            exit,
        }
    }
}

/// Success.
pub const OK: u8 = 0;
/// Ran but failed.
pub const FAILED: u8 = ExitClass::Failed.exit_code();
/// Rejected: bad input, refused, a precondition did not hold.
pub const REJECTED: u8 = ExitClass::Rejected.exit_code();
/// Approval required.
pub const APPROVAL_REQUIRED: u8 = ExitClass::ApprovalRequired.exit_code();

/// A failure of a command: its code, message, fix and exit code.
#[derive(Debug)]
pub struct Failure {
    /// The fixed code.
    pub code: Code,
    /// What went wrong.
    pub message: String,
    /// How to fix it.
    pub help: String,
    /// The exit code.
    pub exit: u8,
}

/// Every coded error of every crate becomes a failure the same way.
impl<E: Coded> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure {
            code: e.code(),
            message: e.to_string(),
            help: e.help(),
            exit: e.exit_class().exit_code(),
        }
    }
}

/// Print a failure (JSON on stdout with `--output json`, text on stderr otherwise) and exit.
pub fn finish(result: Result<(), Failure>, output: Output) -> ExitCode {
    match result {
        Ok(()) => ExitCode::from(OK),
        Err(f) if f.message.is_empty() => ExitCode::from(f.exit),
        Err(f) => {
            if output == Output::Json {
                let body = serde_json::json!({
                    "error": { "code": f.code.as_str(), "message": f.message, "help": f.help }
                });
                println!("{body}");
            } else {
                eprintln!("error[{}]: {}\n  help: {}", f.code, f.message, f.help);
            }
            ExitCode::from(f.exit)
        }
    }
}

/// Clap's own errors: help and version exit 0; usage errors exit 2.
pub fn clap_error(e: clap::Error) -> ExitCode {
    let code = if e.use_stderr() { REJECTED } else { OK };
    let _ = e.print();
    ExitCode::from(code)
}
