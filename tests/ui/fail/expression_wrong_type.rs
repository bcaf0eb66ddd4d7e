//! A Rust expression of the wrong type: the error points at the expression and names what the field takes.

fn replicas() -> f64 {
    2.5
}

piceli::app! {
    app demo;

    deployment web {
        image: (42),
        replicas: (replicas()),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
