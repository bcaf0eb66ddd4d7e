//! PCL0038: a role binding that grants an undeclared role.

piceli::app! {
    app demo;

    service_account api;

    role config-reader {
        rules: [rule(groups: [""], resources: ["configmaps"], verbs: ["get"])],
    }

    role_binding api-reads-config { role: config-readr, subjects: [api] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
