//! A `code(...)` check whose function does not take a `CheckContext`: a readable type error at the path.

mod checks {
    pub async fn orders_flow(retries: u32) -> Result<(), String> {
        let _ = retries;
        Ok(())
    }
}

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    check code(checks::orders_flow);
}

fn main() -> std::process::ExitCode {
    demo::main()
}
