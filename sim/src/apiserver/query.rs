//! Query-string parameters, read as kube-apiserver's parameter codec reads them: the one place where
//! booleans (`watch`, `force`, `allowWatchBookmarks`, `sendInitialEvents`, `follow`, `stdin`, ...)
//! are parsed, so every handler agrees with the real server.

use crate::status::{ApiError, Cause};

/// Query-string parameters, decoded; tolerant of `?&limit=500`.
#[derive(Debug, Default, Clone)]
pub struct Query {
    params: Vec<(String, String)>,
    /// For a watch made one by its path (`/watch/…`, [`Query::force_watch`]): whether the client's
    /// own `watch` parameter asked for one.
    sent_watch: Option<bool>,
}

/// A boolean parameter value as the apiserver converts it (`Convert_Slice_string_To_bool`): `0` and
/// `false` in any case are false, every other value — `True`, `yes`, the empty string — is true.
pub fn parse_bool(value: &str) -> bool {
    value != "0" && !value.eq_ignore_ascii_case("false")
}

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: &str) -> Query {
        Query {
            params: form_urlencoded::parse(raw.as_bytes())
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            sent_watch: None,
        }
    }

    /// Makes the request a watch (a deprecated `/watch/` path), remembering whether the client's
    /// `watch` parameter asked for one: kube-apiserver validates the options as the client sent them.
    pub fn force_watch(&mut self) {
        if self.sent_watch.is_none() {
            self.sent_watch = Some(self.flag("watch"));
        }
        self.set("watch", "true");
    }

    /// Whether the client's own `watch` parameter asks for a watch (whatever the path).
    pub fn sent_watch(&self) -> bool {
        self.sent_watch.unwrap_or_else(|| self.flag("watch"))
    }

    /// Sets a parameter to one value (every earlier value of it goes).
    pub fn set(&mut self, key: &str, value: &str) {
        self.params.retain(|(k, _)| k != key);
        self.params.push((key.to_string(), value.to_string()));
    }

    /// The first value of a parameter.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a parameter.
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.params
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// A boolean parameter: absent is false, otherwise its first value read by [`parse_bool`].
    pub fn flag(&self, key: &str) -> bool {
        self.get(key).is_some_and(parse_bool)
    }

    /// `dryRun`: every value must be `All` (then the write is a dry run); anything else is the
    /// apiserver's 422 on the verb's options kind (`CreateOptions`, `UpdateOptions`, `PatchOptions`,
    /// `DeleteOptions`), before anything is written.
    pub fn dry_run(&self, options_kind: &str) -> Result<bool, ApiError> {
        dry_run_values(&self.all("dryRun"), options_kind)
    }

    /// An integer parameter (`limit`, `timeoutSeconds`, `gracePeriodSeconds`) parsed as Go's
    /// `strconv.ParseInt` does, with its error as the apiserver's 400 message.
    pub fn int64(&self, key: &str) -> Result<Option<i64>, ApiError> {
        let Some(raw) = self.get(key) else {
            return Ok(None);
        };
        let digits = raw.strip_prefix(['+', '-']).unwrap_or(raw);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {raw:?}: invalid syntax"
            )));
        }
        raw.parse::<i64>().map(Some).map_err(|_| {
            ApiError::bad_request(format!(
                "strconv.ParseInt: parsing {raw:?}: value out of range"
            ))
        })
    }
}

/// Validates `dryRun` values (from the query or a DeleteOptions body) as `ValidateDryRun` does.
pub fn dry_run_values(values: &[&str], options_kind: &str) -> Result<bool, ApiError> {
    match dry_run_cause(values) {
        None => Ok(!values.is_empty()),
        Some(cause) => Err(ApiError::invalid(
            "meta.k8s.io",
            options_kind,
            "",
            vec![cause],
        )),
    }
}

/// The cause `ValidateDryRun` gives for `dryRun` values other than `All`, if any.
pub fn dry_run_cause(values: &[&str]) -> Option<Cause> {
    if values.iter().all(|v| *v == "All") {
        return None;
    }
    Some(Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: \"All\"",
            crate::go_text::string_slice(values)
        ),
        field: "dryRun".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_tolerates_leading_ampersand() {
        let q = Query::parse("&limit=500&labelSelector=app%3Dweb&dryRun=All&watch=1");
        assert_eq!(q.get("limit"), Some("500"));
        assert_eq!(q.get("labelSelector"), Some("app=web"));
        assert_eq!(q.dry_run("CreateOptions"), Ok(true));
        assert!(q.flag("watch"));
        assert!(!q.flag("missing"));
    }

    #[test]
    fn dry_run_other_than_all_is_invalid() {
        assert_eq!(Query::parse("").dry_run("CreateOptions"), Ok(false));
        let e = Query::parse("dryRun=Bogus")
            .dry_run("CreateOptions")
            .expect_err("invalid");
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Bogus\"}: supported values: \"All\""
        );
    }

    #[test]
    fn integers_are_parsed_as_go_does() {
        let q = Query::parse("limit=abc&timeoutSeconds=-1&x=%2B5&big=99999999999999999999");
        assert_eq!(
            q.int64("limit").expect_err("abc").message,
            "strconv.ParseInt: parsing \"abc\": invalid syntax"
        );
        assert_eq!(q.int64("timeoutSeconds"), Ok(Some(-1)));
        assert_eq!(q.int64("x"), Ok(Some(5)));
        assert_eq!(q.int64("missing"), Ok(None));
        assert!(
            q.int64("big")
                .expect_err("big")
                .message
                .ends_with("value out of range")
        );
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
