//! `unpinned(...)` opts an image out of digest pinning explicitly.

piceli::app! {
    app demo;

    deployment web {
        image: unpinned("docker.io/library/nginx:1.27"),
    }

    daemon_set agent {
        containers: {
            agent: { image: unpinned("docker.io/fluent/fluent-bit:3.1") },
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
