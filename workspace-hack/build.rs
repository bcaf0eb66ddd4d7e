//! Empty: it lets `[build-dependencies]` turn on features of build-side (proc-macro) dependencies.

fn main() {}
