//! PCL0058 and PCL0059: included objects a 1.33 API server refuses — API versions it no longer serves
//! (with the replacement, or "remove it" for a kind that is gone) and names their kind does not allow —
//! and fields their kind's 1.33 schema does not have or types it does not take — every problem of every
//! object; RBAC names with ':' and custom resources pass.
//!
//! Fixture paths are relative to the crate trybuild generates; tests/it/ui.rs copies `tests/ui/fixtures/` there.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    include yaml("fixtures/refused.yaml");
}

fn main() -> std::process::ExitCode {
    demo::main()
}
