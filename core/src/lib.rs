//! piceli-core: the app model, the validation rules, and the error-code table.
//!
//! This is a plain library (no proc-macro, no Kubernetes client) so that the `app!` macro and the runtime
//! share one model and one set of rules: a problem found at compile time and the same problem found at run
//! time (in a value written as a Rust expression) get the same code and message.

pub mod coded;
pub mod codes;
pub mod crd;
pub mod cron;
pub mod diag;
pub mod include;
pub mod model;
pub mod overrides;
pub mod removed;
pub mod resources;
pub mod rules;
pub mod schema;
pub mod spanned;
pub mod validate;

pub use coded::{Coded, ExitClass};
pub use codes::Code;
pub use diag::Diagnostic;
pub use spanned::{Loc, Name, Spanned};
