//! PCL0016: an image referenced by tag only, without a digest or `unpinned(...)`.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
