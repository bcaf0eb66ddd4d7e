//! One error model: every error enum of every Piceli crate says its fixed code, its fix and its exit class.
//!
//! Display of an error is the message alone (no code prefix); whoever prints it adds the code
//! (`error[PCL0140]: …`, or the `code` field of a JSON error). Causes are chained with `#[source]`.

use crate::Code;

/// How a failure ends the process. Every binary maps these to the same exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExitClass {
    /// The command ran and failed (a write failed, a cluster did not answer, an object never became ready):
    /// exit 1.
    Failed,
    /// The command refused to run: bad input, a refusal, a precondition that did not hold: exit 2.
    Rejected,
    /// Nothing is wrong, but the plan needs an approval first: exit 3.
    ApprovalRequired,
}

impl ExitClass {
    /// The process exit code of this class.
    pub const fn exit_code(self) -> u8 {
        match self {
            ExitClass::Failed => 1,
            ExitClass::Rejected => 2,
            ExitClass::ApprovalRequired => 3,
        }
    }
}

/// An error with a fixed code, a fix, and an exit class.
pub trait Coded: std::error::Error {
    /// The fixed code (`explain CODE` prints its entry).
    fn code(&self) -> Code;
    /// How to fix it, in one or two sentences.
    fn help(&self) -> String {
        self.code().info().explanation.to_string()
    }
    /// How the process ends when this error stops a command: its code's class (the `codes!` table says it
    /// beside the code, so one code always ends a process the same way).
    fn exit_class(&self) -> ExitClass {
        self.code().exit_class()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_classes_have_distinct_codes() {
        let codes = [
            ExitClass::Failed,
            ExitClass::Rejected,
            ExitClass::ApprovalRequired,
        ]
        .map(ExitClass::exit_code);
        assert_eq!(codes, [1, 2, 3]);
    }
}
