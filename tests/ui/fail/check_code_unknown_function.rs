//! A `code(...)` check naming a function that does not exist: the path is resolved by rustc (E0425).

mod checks {
    pub async fn orders_flow() {}
}

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    check code(checks::order_flow);
}

fn main() -> std::process::ExitCode {
    demo::main()
}
