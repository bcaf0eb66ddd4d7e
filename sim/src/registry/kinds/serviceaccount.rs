//! ServiceAccount (v1): its columns, and a DELETE answers with the deleted object.

use serde_json::{Value, json};

use crate::registry::strategy::Strategy;
use crate::registry::table::cells::age;
use crate::registry::table::{AGE, Col, Printer};

pub struct ServiceAccount;

impl Strategy for ServiceAccount {
    fn printer(&self) -> Option<Printer> {
        Some(Printer {
            columns: &[Col("Name", "string", 0), Col("Secrets", "integer", 0), AGE],
            cells: |o| {
                let secrets = o
                    .get("secrets")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                vec![json!(secrets), json!(age(o))]
            },
        })
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }
}
