//! One file per subcommand: parse arguments, call one operation, print.

pub mod access;
pub mod apply;
pub mod check;
pub mod deploy;
pub mod diff;
pub mod explain;
pub mod help_json;
pub mod history;
pub mod import;
pub mod import_live;
pub mod new;
pub mod plan;
pub mod render;
pub mod resume;
pub mod rollback;
pub mod serve;
pub mod session;
pub mod shell;
pub mod status;
pub mod stop;
