//! Names given on the command line, checked before anything else happens: `--namespace` becomes a path
//! segment of every API call (`/api/v1/namespaces/NAME/…`), so a value like `../../etc` must never reach
//! the server. Checked with the same DNS-1123 rule the `app!` macro applies to namespaces at compile time,
//! before the state directory is created or any cluster is contacted.

use super::error::EngineError;
use super::session::SessionOptions;

/// Refuses a session whose command-line names are not valid Kubernetes names.
pub fn validate(opts: &SessionOptions) -> Result<(), EngineError> {
    if let Some(namespace) = &opts.namespace {
        namespace_flag(namespace)?;
    }
    Ok(())
}

/// `--namespace NAME`: a DNS-1123 label.
pub fn namespace_flag(namespace: &str) -> Result<(), EngineError> {
    piceli_core::rules::dns1123_label(namespace).map_err(|e| EngineError::InvalidName {
        flag: "namespace",
        message: e.message.replacen("name", "namespace", 1),
        help: format!("a namespace is a DNS-1123 label: {}", e.help),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use piceli_core::{Coded, ExitClass};

    #[test]
    fn a_path_is_not_a_namespace() {
        let err = namespace_flag("../../etc").expect_err("refused");
        assert_eq!(err.code().as_str(), "PCL0151");
        assert!(err.to_string().contains("`../../etc`"), "{err}");
        assert!(err.help().contains("DNS-1123"), "{}", err.help());
        assert_eq!(err.exit_class(), ExitClass::Rejected);
        for bad in ["", "Web", "a/b", "-a", &"a".repeat(64)] {
            assert!(namespace_flag(bad).is_err(), "{bad:?}");
        }
        for good in ["hello", "g-one", "a1"] {
            namespace_flag(good).expect(good);
        }
    }
}
