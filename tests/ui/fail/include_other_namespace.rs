//! PCL0073: an included object that names another namespace than a target's (it would be deployed
//! there), and options only files take.
//!
//! Fixture paths are relative to the crate trybuild generates; tests/it/ui.rs copies `tests/ui/fixtures/` there.

piceli::app! {
    app demo;
    target local = local(namespace: "shop");

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    include yaml("fixtures/monitoring.yaml");
    include yaml("fixtures/objects.yaml") { namespace: elsewhere }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
