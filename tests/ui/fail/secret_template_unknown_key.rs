//! PCL0096: a template naming a key its Secret does not have, templates naming each other, and a template
//! that does not parse.

piceli::app! {
    app demo;

    secret db {
        password: generate(random(32)),
        url: generate(template("postgres://app:{pasword}@db/app")),
        a: generate(template("{b}")),
        b: generate(template("x{a}")),
        broken: generate(template("{password")),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
