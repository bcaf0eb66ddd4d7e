//! `CreateOptions`, `UpdateOptions` and `PatchOptions` as kube-apiserver's write handlers validate them
//! from the query, before the object is looked up (`ValidateCreateOptions`, `ValidateUpdateOptions`,
//! `ValidatePatchOptions`): a 422 on the options kind naming every field at fault.

use crate::apiserver::query::{Query, dry_run_cause};
use crate::go_text::{is_print, quote, rune_u};
use crate::status::{ApiError, Cause};

/// The longest `fieldManager` kube-apiserver takes (bytes).
const FIELD_MANAGER_MAX: usize = 128;

/// Validates a write's options; `patch_type` is the content type of a PATCH (`None` for a create or
/// an update). `options_kind` is `CreateOptions`, `UpdateOptions` or `PatchOptions`.
pub fn check(query: &Query, options_kind: &str, patch_type: Option<&str>) -> Result<(), ApiError> {
    let manager = query.get("fieldManager").unwrap_or("");
    let mut causes = Vec::new();
    let apply = matches!(
        patch_type,
        Some("application/apply-patch+yaml" | "application/apply-patch+cbor")
    );
    if apply && manager.is_empty() {
        causes.push(Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value: is required for apply patch".into(),
            field: "fieldManager".into(),
        });
    }
    // `force` is a *bool: any value, `false` too, sets it.
    if patch_type.is_some() && !apply && query.get("force").is_some() {
        causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: may not be specified for non-apply patch".into(),
            field: "force".into(),
        });
    }
    if manager.len() > FIELD_MANAGER_MAX {
        causes.push(Cause {
            reason: "FieldValueTooLong".into(),
            message: format!("Too long: may not be more than {FIELD_MANAGER_MAX} bytes"),
            field: "fieldManager".into(),
        });
    }
    for (at, c) in manager.char_indices() {
        if !is_print(c) {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: invalid character {} (at position {at})",
                    quote(manager),
                    rune_u(c)
                ),
                field: "fieldManager".into(),
            });
        }
    }
    causes.extend(dry_run_cause(&query.all("dryRun")));
    let validation = query.get("fieldValidation").unwrap_or("");
    if !matches!(validation, "" | "Ignore" | "Strict" | "Warn") {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                quote(validation)
            ),
            field: "fieldValidation".into(),
        });
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", options_kind, "", causes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(raw: &str, ct: &str) -> String {
        check(&Query::parse(raw), "PatchOptions", Some(ct))
            .expect_err(raw)
            .message
    }

    #[test]
    fn patch_options_as_kube_apiserver_validates_them() {
        let merge = "application/merge-patch+json";
        let apply = "application/apply-patch+yaml";
        assert!(
            check(
                &Query::parse("fieldManager=me&force=true"),
                "PatchOptions",
                Some(apply)
            )
            .is_ok()
        );
        assert!(check(&Query::parse(""), "PatchOptions", Some(merge)).is_ok());
        assert_eq!(
            patch("force=false", merge),
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
        assert_eq!(
            patch("", apply),
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        assert_eq!(
            patch("force=1&fieldManager=a%C2%8Bb&fieldValidation=x", merge),
            "PatchOptions.meta.k8s.io \"\" is invalid: [force: Forbidden: may not be specified for non-apply patch, fieldManager: Invalid value: \"a\\u008bb\": invalid character U+008B (at position 1), fieldValidation: Unsupported value: \"x\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]"
        );
    }

    #[test]
    fn create_and_update_options() {
        let long = "m".repeat(129);
        let e = check(
            &Query::parse(&format!("fieldManager={long}&dryRun=x")),
            "CreateOptions",
            None,
        )
        .expect_err("too long");
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            "CreateOptions.meta.k8s.io \"\" is invalid: [fieldManager: Too long: may not be more than 128 bytes, dryRun: Unsupported value: []string{\"x\"}: supported values: \"All\"]"
        );
        assert!(
            check(
                &Query::parse("fieldManager=kubectl&dryRun=All&fieldValidation=Strict"),
                "UpdateOptions",
                None
            )
            .is_ok()
        );
    }
}
