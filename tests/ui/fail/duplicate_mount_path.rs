//! PCL0014 (intended): the same path mounted twice in one container. The mounts map is a DSL map, so the
//! repeated key is reported as PCL0043 before PCL0014 can run.
//!
//! By design: in the DSL the repeated key is caught first (PCL0043); PCL0014 guards models built otherwise (run time, tests).

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        volumes: { data: empty_dir(), cache: empty_dir() },
        mounts: { "/data": data, "/data": cache },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
