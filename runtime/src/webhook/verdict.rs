//! `Verdict`: what a validating handler answers.

use std::fmt::Display;

/// A validating handler's answer: allow or deny, with warnings for the client either way.
///
/// ```
/// use piceli_runtime::webhook::Verdict;
/// let v = Verdict::deny("image uses :latest").warn("pin images by digest");
/// assert!(!v.is_allowed());
/// assert_eq!(v.message(), Some("image uses :latest"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct Verdict {
    pub(crate) allowed: bool,
    pub(crate) message: Option<String>,
    pub(crate) warnings: Vec<String>,
}

impl Verdict {
    /// Admit the request.
    pub fn allow() -> Verdict {
        Verdict {
            allowed: true,
            message: None,
            warnings: Vec::new(),
        }
    }

    /// Refuse the request; `message` is what the client sees (`admission webhook "…" denied the request:
    /// MESSAGE`).
    pub fn deny(message: impl Display) -> Verdict {
        Verdict {
            allowed: false,
            message: Some(message.to_string()),
            warnings: Vec::new(),
        }
    }

    /// Adds a warning the client prints (`Warning: …`), allowed or not.
    pub fn warn(mut self, warning: impl Display) -> Verdict {
        self.warnings.push(warning.to_string());
        self
    }

    /// True when the request is admitted.
    pub fn is_allowed(&self) -> bool {
        self.allowed
    }

    /// The denial message.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// The warnings, in the order they were added.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// What a validating handler may return: a [`Verdict`], or a `Result` whose error counts as a failure of
/// the handler (answered per the webhook's failure policy, as a panic is).
pub trait IntoVerdict: Send + 'static {
    /// The verdict, or the handler's failure.
    fn into_verdict(self) -> Result<Verdict, String>;
}

impl IntoVerdict for Verdict {
    fn into_verdict(self) -> Result<Verdict, String> {
        Ok(self)
    }
}

impl<E: Display + Send + 'static> IntoVerdict for Result<Verdict, E> {
    fn into_verdict(self) -> Result<Verdict, String> {
        self.map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_carry_message_and_warnings() {
        let v = Verdict::allow().warn("a").warn("b");
        assert!(v.is_allowed());
        assert_eq!(v.message(), None);
        assert_eq!(v.warnings(), ["a", "b"]);
        let d = Verdict::deny(format_args!("image {} uses :latest", "nginx"));
        assert_eq!(d.message(), Some("image nginx uses :latest"));
        let failed: Result<Verdict, &str> = Err("database down");
        assert_eq!(failed.into_verdict(), Err("database down".to_string()));
    }
}
