//! The workspace-hack: no code. Its `Cargo.toml` turns on, for every member that depends on it, the
//! union of the features the workspace's members turn on for shared dependencies, so `cargo build -p APP`
//! and `cargo build --workspace` compile those dependencies alike and do not rebuild each other.
