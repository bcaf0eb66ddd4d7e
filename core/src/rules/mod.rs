//! Pure, string-level validation rules for values that end up in Kubernetes
//! manifests: names, image references, resource quantities, labels, ports,
//! paths, cron schedules, durations, plus "did you mean" suggestions.
//!
//! Every rule takes plain values (no model types) and returns
//! `Result<_, RuleError>`; the error carries a message quoting the offending
//! value and a help line saying how to fix it. Callers attach codes and spans.

pub mod image;
pub mod labels;
pub mod misc;
pub mod names;
pub mod quantity;
pub mod suggest;

pub use image::{ImageRef, parse_image, require_digest};
pub use labels::{annotation_key, is_managed_label, label_key, label_value};
pub use misc::{
    IntOrPercent, absolute_path, cron_schedule, duration, http_path, node_port, percent_or_int,
    port_number,
};
pub use names::{
    config_key, dns1123_label, dns1123_subdomain, env_var_name, is_dns1123_label, name_with_suffix,
    port_name, rfc1035_label,
};
pub use quantity::{Quantity, cpu_quantity, memory_quantity, parse_quantity, storage_quantity};
pub use suggest::{did_you_mean, edit_distance};

use std::fmt;

/// A failed rule: what is wrong (quoting the value) and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// What is wrong, quoting the offending value.
    pub message: String,
    /// One line saying how to fix it.
    pub help: String,
}

impl RuleError {
    /// Builds an error from a message and a help line.
    pub fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        RuleError {
            message: message.into(),
            help: help.into(),
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (help: {})", self.message, self.help)
    }
}

impl std::error::Error for RuleError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_error_new_and_display() {
        let e = RuleError::new("bad `x`", "use `y`");
        assert_eq!(e.message, "bad `x`");
        assert_eq!(e.help, "use `y`");
        assert_eq!(e.to_string(), "bad `x` (help: use `y`)");
        assert_eq!(e.clone(), e);
    }

    #[test]
    fn reexports_are_usable() {
        assert!(dns1123_label("web").is_ok());
        assert!(parse_quantity("1Gi").is_ok());
        assert_eq!(did_you_mean("webb", ["web", "db"]), Some("web"));
    }
}
