//! Generates the benchmark apps: `piceli::app!` invocations with N Deployments and N Services each —
//! 1,000 + 1,000 for the render benchmark, 50 + 50 and 500 + 500 for the plan/apply benchmarks.

use std::fmt::Write;

fn app(name: &str, count: usize) -> String {
    let mut src = format!(
        "piceli::app! {{\n    app {name};\n    target local = local(namespace: \"{name}\");\n"
    );
    for i in 0..count {
        let _ = write!(
            src,
            "    deployment web-{i} {{\n        image: \"docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d\",\n        replicas: 2,\n        ports: {{ http: 80 }},\n        ready: http_get(\"/\", port: http),\n        env: {{ INDEX: \"{i}\" }},\n        resources: {{ cpu: \"100m\", memory: \"64Mi\" }},\n    }}\n    service web-{i} -> web-{i} {{ port: 80 => http }}\n"
        );
    }
    src.push_str("}\n");
    src
}

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    for (file, name, count) in [
        ("app.rs", "bench", 1000),
        ("app_100.rs", "bench-100", 50),
        ("app_1000.rs", "bench-1000", 500),
    ] {
        std::fs::write(out.join(file), app(name, count)).expect("write the generated app");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
