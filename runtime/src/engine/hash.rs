//! The plan hash: blake3 over a canonical form, and keyed digests for secret values.

use serde_json::Value;

/// Canonical JSON: object keys sorted at every level, no whitespace. The same value always gives the
/// same bytes, in any process.
pub fn canonical(value: &Value) -> String {
    let mut out = Vec::new();
    write(value, &mut out, &|_, _| false);
    // Only JSON text was written: valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Where canonical bytes go: a buffer, or straight into a hasher (no copy of the text is kept).
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A hasher fed in blocks: canonical JSON comes in tokens of a few bytes, and blake3 costs far more per
/// `update` call than per byte, so tokens are gathered into a small buffer first.
struct Hashing {
    hasher: blake3::Hasher,
    pending: Vec<u8>,
}

impl Hashing {
    /// Gather this much before hashing (a few of blake3's 1 KiB chunks).
    const BLOCK: usize = 4096;

    fn new() -> Hashing {
        Hashing {
            hasher: blake3::Hasher::new(),
            pending: Vec::with_capacity(Self::BLOCK),
        }
    }

    fn finish(mut self) -> String {
        self.hasher.update(&self.pending);
        self.hasher.finalize().to_hex().to_string()
    }
}

impl Sink for Hashing {
    fn put(&mut self, bytes: &[u8]) {
        if self.pending.len() + bytes.len() > Self::BLOCK {
            self.hasher.update(&self.pending);
            self.pending.clear();
            if bytes.len() >= Self::BLOCK {
                self.hasher.update(bytes);
                return;
            }
        }
        self.pending.extend_from_slice(bytes);
    }
}

/// Adapts a sink for serde_json's string escaping (which writes through `io::Write`).
struct Escaped<'a, S: Sink>(&'a mut S);

impl<S: Sink> std::io::Write for Escaped<'_, S> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.put(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Which keys to leave out: called with the path of the map (its keys from the root) and the key.
type Skip<'a> = &'a dyn Fn(&[&str], &str) -> bool;

fn write<S: Sink>(value: &Value, out: &mut S, skip: Skip<'_>) {
    let mut path = Vec::new();
    write_at(value, out, skip, &mut path);
}

fn write_at<'v, S: Sink>(value: &'v Value, out: &mut S, skip: Skip<'_>, path: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().filter(|k| !skip(path, k)).collect();
            keys.sort_unstable();
            out.put(b"{");
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                json(k, out);
                out.put(b":");
                path.push(k);
                write_at(&map[k], out, skip, path);
                path.pop();
            }
            out.put(b"}");
        }
        Value::Array(items) => {
            out.put(b"[");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                // List elements are not keyed by a name: nothing below them is skipped by path.
                path.push("[]");
                write_at(v, out, skip, path);
                path.pop();
            }
            out.put(b"]");
        }
        other => json(other, out),
    }
}

/// A key or a scalar as serde_json writes it (strings escaped, numbers in their shortest form).
fn json<S: Sink, T: serde::Serialize + ?Sized>(value: &T, out: &mut S) {
    // The sink takes every byte: writing cannot fail.
    let _ = serde_json::to_writer(Escaped(out), value);
}

/// The blake3 hash of a value's canonical form, as hex.
pub fn digest(value: &Value) -> String {
    digest_skipping(value, &|_, _| false)
}

/// The blake3 hash of a value's canonical form without the keys `skip` names, as hex: the same bytes
/// as the digest of a copy with those keys removed, without making the copy.
pub fn digest_skipping(value: &Value, skip: Skip<'_>) -> String {
    let mut hasher = Hashing::new();
    write(value, &mut hasher, skip);
    hasher.finish()
}

/// The blake3 hash, as hex, of the canonical form of `head` with `key` added as the list `items`: the
/// same bytes as the digest of that object built as one value, without copying the items into it.
pub fn digest_with(head: &serde_json::Map<String, Value>, key: &str, items: &[Value]) -> String {
    let mut out = Hashing::new();
    let mut keys: Vec<&str> = head
        .keys()
        .map(String::as_str)
        .filter(|k| *k != key)
        .collect();
    keys.push(key);
    keys.sort_unstable();
    let no_skip: Skip<'_> = &|_, _| false;
    let mut path = Vec::new();
    out.put(b"{");
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.put(b",");
        }
        json(k, &mut out);
        out.put(b":");
        if k == key {
            out.put(b"[");
            for (j, item) in items.iter().enumerate() {
                if j > 0 {
                    out.put(b",");
                }
                write_at(item, &mut out, no_skip, &mut path);
            }
            out.put(b"]");
        } else {
            write_at(&head[k], &mut out, no_skip, &mut path);
        }
    }
    out.put(b"}");
    out.finish()
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

    /// The canonical form as it was first written (a String per key and scalar): plans stored by
    /// earlier builds keep their hashes only while the bytes stay the same.
    fn first_canonical(value: &Value) -> String {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let parts: Vec<String> = keys
                    .into_iter()
                    .map(|k| format!("{}:{}", Value::String(k.clone()), first_canonical(&map[k])))
                    .collect();
                format!("{{{}}}", parts.join(","))
            }
            Value::Array(items) => {
                let parts: Vec<String> = items.iter().map(first_canonical).collect();
                format!("[{}]", parts.join(","))
            }
            other => other.to_string(),
        }
    }

    #[test]
    fn the_canonical_bytes_are_those_of_earlier_builds() {
        let v = json!({
            "z": [1, -2, 2.5, 1e300, true, null, "a\"b\\c\n\u{1}é☃"],
            "a": {"": {}, "\t": [], "b": {"y": "Y", "x": "X"}},
            "n": u64::MAX, "m": i64::MIN
        });
        assert_eq!(canonical(&v), first_canonical(&v));
    }

    #[test]
    fn the_digest_is_blake3_of_the_canonical_bytes_whatever_their_size() {
        // Around and across the hashing block: small tokens, a string longer than a block, many blocks.
        let long = "x".repeat(Hashing::BLOCK * 2 + 7);
        let many: Vec<Value> = (0..3000).map(|i| json!({"i": i, "s": "ab"})).collect();
        for v in [
            json!({}),
            json!({"a": long}),
            json!({"many": many, "tail": long}),
        ] {
            let expected = blake3::hash(canonical(&v).as_bytes()).to_hex().to_string();
            assert_eq!(digest(&v), expected);
        }
    }

    #[test]
    fn a_list_written_in_place_hashes_as_the_whole_value() {
        let items = vec![json!({"b": [1, "x\"y"], "a": null}), json!(2.5)];
        let head = json!({"z": 1, "a": {"k": true}, "objects": "replaced"});
        let mut whole = head.clone();
        whole["objects"] = Value::Array(items.clone());
        let head = head.as_object().expect("an object");
        assert_eq!(digest_with(head, "objects", &items), digest(&whole));
        let mut without = head.clone();
        without.remove("objects");
        assert_eq!(digest_with(&without, "objects", &items), digest(&whole));
    }

    #[test]
    fn skipped_keys_hash_as_a_copy_without_them() {
        let v = json!({"status": 1, "spec": {"status": 2, "x": [{"status": 3}]}});
        let skip: Skip<'_> = &|path, key| path.is_empty() && key == "status";
        let copy = json!({"spec": {"status": 2, "x": [{"status": 3}]}});
        assert_eq!(digest_skipping(&v, skip), digest(&copy));
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
