//! Query-string parameters, read as kube-apiserver's parameter codec reads them: the one place where
//! booleans (`watch`, `force`, `allowWatchBookmarks`, `sendInitialEvents`, `follow`, `stdin`, ...)
//! are parsed, so every handler agrees with the real server.

/// Query-string parameters, decoded; tolerant of `?&limit=500`.
#[derive(Debug, Default, Clone)]
pub struct Query(Vec<(String, String)>);

/// A boolean parameter value as the apiserver converts it (`Convert_Slice_string_To_bool`): `0` and
/// `false` in any case are false, every other value — `True`, `yes`, the empty string — is true.
pub fn parse_bool(value: &str) -> bool {
    value != "0" && !value.eq_ignore_ascii_case("false")
}

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: &str) -> Query {
        Query(
            form_urlencoded::parse(raw.as_bytes())
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The first value of a parameter.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a parameter.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A boolean parameter: absent is false, otherwise its first value read by [`parse_bool`].
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(parse_bool)
    }

    /// `dryRun=All`.
    pub fn dry_run(&self) -> bool {
        self.all("dryRun").contains(&"All")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_tolerates_leading_ampersand() {
        let q = Query::parse("&limit=500&labelSelector=app%3Dweb&dryRun=All&watch=1");
        assert_eq!(q.get("limit"), Some("500"));
        assert_eq!(q.get("labelSelector"), Some("app=web"));
        assert!(q.dry_run());
        assert!(q.flag("watch"));
        assert!(!q.flag("missing"));
    }

    #[test]
    fn booleans_are_false_only_for_0_and_false_in_any_case() {
        for v in ["true", "True", "TRUE", "1", "yes", "", "anything"] {
            assert!(Query::parse(&format!("watch={v}")).flag("watch"), "{v:?}");
        }
        for v in ["false", "False", "FALSE", "0"] {
            assert!(!Query::parse(&format!("watch={v}")).flag("watch"), "{v:?}");
        }
        assert!(Query::parse("watch").flag("watch"), "a bare key is true");
        assert!(
            Query::parse("force=True&force=false").flag("force"),
            "the first value counts"
        );
    }
}
