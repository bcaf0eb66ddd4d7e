//! PCL0001: an RBAC object's name is a path segment: no '/' or '%', not '.' or '..'.

piceli::app! {
    app demo;

    service_account api;

    cluster_role "team/reader" { rules: [rule(groups: [""], resources: ["pods"], verbs: ["get"])] }
    role ".." { rules: [rule(groups: [""], resources: ["pods"], verbs: ["get"])] }
    role_binding "50%" { role: "..", subjects: [api] }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
