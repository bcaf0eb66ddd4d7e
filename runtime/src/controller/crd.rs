//! Custom resources from Rust types: the CustomResourceDefinition of a `#[derive(CustomResource,
//! JsonSchema)]` type, as an object the app renders (the engine applies CRDs before objects of them and
//! waits until they are Established).

use kube::core::CustomResourceExt;

use crate::load::Object;

/// The CRD of `K`, with its OpenAPI v3 schema from the type's `JsonSchema`.
pub fn custom_resource_definition<K: CustomResourceExt>() -> Object {
    Object::new(&K::crd())
}

/// A type `custom_resource path::Type;` may name.
#[diagnostic::on_unimplemented(
    message = "PCL0072: `{Self}` is not a custom resource type",
    label = "`custom_resource` needs the type `#[derive(CustomResource)]` generates",
    note = "put `#[piceli::custom_resource(group = \"example.com\", version = \"v1\", kind = \"Lamp\", namespaced)]` (or kube's `#[derive(CustomResource, JsonSchema)]` with `#[kube(…)]`) on the spec `struct LampSpec`, and name the kind it generates, not the spec: `custom_resource crate::Lamp;`"
)]
pub trait CustomResourceType: CustomResourceExt {}
impl<K: CustomResourceExt> CustomResourceType for K {}

/// The CRD of a `custom_resource` type, as an included object.
pub fn custom_resource<K: CustomResourceType>() -> Object {
    custom_resource_definition::<K>()
}

/// What a type says of its CRD name at compile time: nothing, unless `#[piceli::custom_resource]`
/// generated it (an inherent `__PICELI_CRD_NAME`, which path resolution prefers to this trait's).
#[doc(hidden)]
pub trait UnknownCrdName {
    /// Unknown: `render` and `serve` compare the name instead (PCL0175).
    const __PICELI_CRD_NAME: &'static str = "";
}
impl<T: ?Sized> UnknownCrdName for T {}

/// The longest message [`crd_name_mismatch`] writes.
const MESSAGE: usize = 1024;

/// When `actual` (a CRD name known at compile time; empty: unknown) is not `written`: `before`,
/// `actual`, `after` as UTF-8 in a buffer, and its length (0 when they match). `app!` panics with it in a
/// constant, so a wrong name fails the build.
#[doc(hidden)]
pub const fn crd_name_mismatch(
    actual: &str,
    written: &str,
    before: &str,
    after: &str,
) -> ([u8; MESSAGE], usize) {
    let mut buf = [0u8; MESSAGE];
    if actual.is_empty() || equal(actual.as_bytes(), written.as_bytes()) {
        return (buf, 0);
    }
    let mut n = push(&mut buf, 0, before);
    n = push(&mut buf, n, actual);
    n = push(&mut buf, n, after);
    (buf, n)
}

const fn equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Appends `s` whole, or not at all when it does not fit (the text stays UTF-8).
const fn push(buf: &mut [u8; MESSAGE], n: usize, s: &str) -> usize {
    let s = s.as_bytes();
    if n + s.len() > MESSAGE {
        return n;
    }
    let mut i = 0;
    while i < s.len() {
        buf[n + i] = s[i];
        i += 1;
    }
    n + s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Typed;
    impl Typed {
        const __PICELI_CRD_NAME: &'static str = "lamps.example.com";
    }
    struct Plain;

    #[test]
    fn a_known_name_is_compared_and_an_unknown_one_passes() {
        assert_eq!(<Plain>::__PICELI_CRD_NAME, "");
        assert_eq!(<Typed>::__PICELI_CRD_NAME, "lamps.example.com");
        assert_eq!(crd_name_mismatch("", "x.y", "a", "b").1, 0);
        assert_eq!(
            crd_name_mismatch("lamps.example.com", "lamps.example.com", "a", "b").1,
            0
        );
        let (buf, n) = crd_name_mismatch("lamps.example.com", "lamp.example.com", "write `", "`");
        assert_eq!(&buf[..n], b"write `lamps.example.com`");
    }
}
