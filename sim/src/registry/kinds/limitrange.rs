//! LimitRange (v1): a create without a name is named by a new UUID (`limitrangeStrategy`'s
//! `PrepareForCreate`), so it is never refused for a missing name.

use crate::registry::strategy::Strategy;

pub struct LimitRange;

impl Strategy for LimitRange {
    fn names_itself(&self) -> bool {
        true
    }
}
