//! What several commands print alike: plans, and checks' results. A command prints through these, never
//! through another command's file.

pub mod checks;
pub mod plan;
