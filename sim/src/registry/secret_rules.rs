//! Secret validation kube-apiserver does beyond key names: the data may not exceed 1 MiB in total
//! (`MaxSecretSize`), and `type` cannot change on update.

use base64::Engine;
use serde_json::Value;

use crate::status::Cause;

/// `core.MaxSecretSize`.
pub const MAX_SECRET_SIZE: usize = 1024 * 1024;

/// Causes for a Secret whose decoded `data` is larger than [`MAX_SECRET_SIZE`].
pub fn check(obj: &Value) -> Vec<Cause> {
    let total: usize = obj
        .get("data")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_str())
        .map(|v| {
            base64::engine::general_purpose::STANDARD
                .decode(v)
                .map_or(v.len(), |b| b.len())
        })
        .sum();
    if total <= MAX_SECRET_SIZE {
        return Vec::new();
    }
    vec![Cause {
        reason: "FieldValueTooLong".into(),
        message: format!("Too long: may not be more than {MAX_SECRET_SIZE} bytes"),
        field: "data".into(),
    }]
}

/// Causes for an update that changes a Secret's `type`.
pub fn check_update(old: &Value, new: &Value) -> Vec<Cause> {
    if old.get("type") == new.get("type") {
        return Vec::new();
    }
    let shown = new.get("type").cloned().unwrap_or(Value::from(""));
    vec![Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {shown}: field is immutable"),
        field: "type".into(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn size_and_type_rules() {
        let small = json!({"data": {"k": "aGVsbG8="}});
        assert!(check(&small).is_empty());
        let big = base64::engine::general_purpose::STANDARD.encode(vec![0u8; MAX_SECRET_SIZE + 1]);
        let causes = check(&json!({"data": {"k": big}}));
        assert_eq!(causes[0].field, "data");
        assert_eq!(
            causes[0].message,
            "Too long: may not be more than 1048576 bytes"
        );
        let opaque = json!({"type": "Opaque"});
        let tls = json!({"type": "kubernetes.io/tls"});
        assert!(check_update(&opaque, &opaque).is_empty());
        assert_eq!(
            check_update(&opaque, &tls)[0].message,
            "Invalid value: \"kubernetes.io/tls\": field is immutable"
        );
    }
}
