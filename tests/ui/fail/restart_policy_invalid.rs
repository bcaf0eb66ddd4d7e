//! PCL0041: a Job restart policy that is not Never or OnFailure.

piceli::app! {
    app demo;

    job migrate {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        restart: "Always",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
