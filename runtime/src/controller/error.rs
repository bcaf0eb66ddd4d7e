//! Why the controllers cannot run, each with its code and a fix.

use piceli_core::{Code, Coded};

/// The controllers could not start.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The registrations do not make a runnable set.
    #[error("the controllers cannot run as registered: {}", .0.join("; "))]
    Invalid(Vec<String>),
}

impl Coded for ControllerError {
    fn code(&self) -> Code {
        match self {
            ControllerError::Invalid(_) => Code::ControllersInvalid,
        }
    }

    fn help(&self) -> String {
        match self {
            ControllerError::Invalid(_) => "give every controller a distinct DNS-label name (lowercase \
                letters, digits, '-') and write label selectors as kubectl takes them (app=web,tier!=cache)"
                .into(),
        }
    }
}
