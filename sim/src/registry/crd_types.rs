//! The `type` check of a custom resource's structural schema, worded as kube-openapi's validator and
//! the apiextensions apiserver word it (`spec.size: Invalid value: "string": spec.size in body must be
//! of type integer: "string"`).

use serde_json::Value;

use crate::status::Cause;

/// The JSON type name kube-openapi gives a value.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A 422 cause when `obj` is not of the schema's `type` (null, int-or-string and integers where a
/// number is wanted are accepted, as by the real validator).
pub fn type_mismatch(obj: &Value, schema: &Value, path: &str) -> Option<Cause> {
    let want = schema.get("type").and_then(Value::as_str)?;
    let got = type_name(obj);
    let int_or_string = schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let ok = got == want
        || obj.is_null()
        || (want == "number" && got == "integer")
        || (int_or_string && matches!(got, "integer" | "string"));
    if ok {
        return None;
    }
    let name = if path.is_empty() { "body" } else { path };
    Some(Cause {
        reason: "FieldValueTypeInvalid".into(),
        message: format!(
            "Invalid value: \"{got}\": {name} in body must be of type {want}: \"{got}\""
        ),
        field: path.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mismatches_are_worded_as_the_apiserver_words_them() {
        let schema = json!({"type": "integer"});
        let cause = type_mismatch(&json!("big"), &schema, "spec.size").expect("mismatch");
        assert_eq!(cause.reason, "FieldValueTypeInvalid");
        assert_eq!(
            cause.message,
            "Invalid value: \"string\": spec.size in body must be of type integer: \"string\""
        );
        assert!(type_mismatch(&json!(3), &schema, "spec.size").is_none());
        assert!(type_mismatch(&json!(3), &json!({"type": "number"}), "x").is_none());
        assert!(type_mismatch(&json!(1.5), &schema, "x").is_some());
        let ios = json!({"x-kubernetes-int-or-string": true});
        assert!(type_mismatch(&json!("50%"), &ios, "x").is_none());
    }
}
