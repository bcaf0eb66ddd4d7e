//! Custom resources from Rust types: the CustomResourceDefinition of a `#[derive(CustomResource,
//! JsonSchema)]` type, as an object the app renders (the engine applies CRDs before objects of them and
//! waits until they are Established).

use kube::core::CustomResourceExt;

use crate::load::Object;

/// The CRD of `K`, with its OpenAPI v3 schema from the type's `JsonSchema`.
pub fn custom_resource_definition<K: CustomResourceExt>() -> Object {
    Object::new(&K::crd())
}
