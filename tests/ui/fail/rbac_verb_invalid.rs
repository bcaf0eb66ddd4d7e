//! PCL0041: an RBAC rule with a verb Kubernetes does not know.

piceli::app! {
    app demo;

    role reader {
        rules: [rule(groups: [""], resources: ["pods"], verbs: ["read"])],
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
