//! PCL0095: a generator's arguments are wrong — no hosts, a validity out of range, a host that is no DNS
//! name, a TLS key that would collide with another key, `random` without a length; PCL0020 for a length
//! out of range.

piceli::app! {
    app demo;

    secret a {
        cert: generate(tls_self_signed(days: 30)),
        long: generate(tls_self_signed(hosts: ["db"], days: 5000)),
        bad: generate(tls_self_signed(hosts: ["not a host"])),
    }
    secret b {
        tls: generate(tls_self_signed(hosts: ["b"])),
        "tls.crt": from_file("b.crt"),
    }
    secret c {
        token: generate(random()),
        short: generate(random(4)),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
