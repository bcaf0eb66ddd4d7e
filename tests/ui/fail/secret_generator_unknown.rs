//! PCL0095: an unknown generator, with the closest one suggested.

piceli::app! {
    app demo;

    secret db {
        password: generate(randm(32)),
        token: generate(uuid()),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
