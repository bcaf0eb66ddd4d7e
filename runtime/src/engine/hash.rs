//! The plan hash: blake3 over a canonical form, and keyed digests for secret values.

use serde_json::Value;

/// Canonical JSON: object keys sorted at every level, no whitespace. The same value always gives the
/// same bytes, in any process.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The blake3 hash of a value's canonical form, as hex.
pub fn digest(value: &Value) -> String {
    blake3::hash(canonical(value).as_bytes())
        .to_hex()
        .to_string()
}

/// A keyed digest of a secret value: comparable across plans made with the same key, useless to
/// recover the value. Shown as `blake3-keyed:<16 hex>`.
pub fn secret_digest(key: &[u8; 32], value: &[u8]) -> String {
    let h = blake3::keyed_hash(key, value).to_hex();
    format!("blake3-keyed:{}", &h[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_is_order_independent() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(digest(&a), digest(&b));
        assert_ne!(digest(&a), digest(&json!({"b": 2})));
    }

    #[test]
    fn secret_digests_are_keyed() {
        let k1 = [1u8; 32];
        let k2 = [2u8; 32];
        assert_eq!(secret_digest(&k1, b"pw"), secret_digest(&k1, b"pw"));
        assert_ne!(secret_digest(&k1, b"pw"), secret_digest(&k2, b"pw"));
        assert!(!secret_digest(&k1, b"pw").contains("pw"));
    }
}
