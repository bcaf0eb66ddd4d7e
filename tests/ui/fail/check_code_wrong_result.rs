//! A `code(...)` check whose function returns no `Result`: the check-result diagnostic names the fix.

async fn smoke(_cx: piceli::checks::CheckContext) -> bool {
    true
}

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }

    check code(smoke);
}

fn main() -> std::process::ExitCode {
    demo::main()
}
