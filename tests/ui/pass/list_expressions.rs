//! Maps and lists of text from Rust expressions: `labels:`, `annotations:`, `pod_labels:`,
//! `pod_annotations:`, `node_selector:`, and a container's `command:` and `args:` (one string or a list).

fn common() -> std::collections::BTreeMap<&'static str, &'static str> {
    std::collections::BTreeMap::from([("team", "shop")])
}

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        labels: (common()),
        annotations: (vec![("note", 1)]),
        pod_labels: (common()),
        pod_annotations: ([("prometheus.io/scrape", true)]),
        node_selector: ([("kubernetes.io/os", "linux")]),
        command: (String::from("/web")),
        args: (vec!["--port", "80"]),
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
