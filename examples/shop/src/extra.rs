//! Objects built in Rust with k8s-openapi types, included as they are (a gradual migration path).

use piceli::k8s_openapi::api::core::v1::ConfigMap;
use piceli::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// A ConfigMap built in Rust.
pub fn objects() -> Vec<ConfigMap> {
    vec![ConfigMap {
        metadata: ObjectMeta {
            name: Some("shop-build-info".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([(
            "version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        )])),
        ..ConfigMap::default()
    }]
}
