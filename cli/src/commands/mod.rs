//! One file per subcommand: parse arguments, call one operation, print.

pub mod explain;
pub mod help_json;
pub mod render;
