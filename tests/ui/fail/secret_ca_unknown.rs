//! PCL0097: `tls_signed_by` naming no secret of the app, a secret without a CA, and its own secret.

piceli::app! {
    app demo;

    secret ca { tls: generate(tls_self_signed(hosts: ["demo-ca"], days: 3650, ca: true)) }
    secret plain { tls: generate(tls_self_signed(hosts: ["plain"])) }
    secret a { tls: generate(tls_signed_by(cca, hosts: ["a"])) }
    secret b { tls: generate(tls_signed_by(plain, hosts: ["b"])) }
    secret c { tls: generate(tls_signed_by(c, hosts: ["c"])) }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
