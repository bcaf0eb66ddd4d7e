//! StorageClass (storage.k8s.io/v1): a DELETE answers with the deleted object.

use crate::registry::strategy::Strategy;

pub struct StorageClass;

impl Strategy for StorageClass {
    fn returns_deleted_object(&self) -> bool {
        true
    }
}
