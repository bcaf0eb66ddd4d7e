//! Generates the benchmark app: one `piceli::app!` with 1,000 Deployments and 1,000 Services.

use std::fmt::Write;

const COUNT: usize = 1000;

fn main() {
    let mut src = String::from(
        "piceli::app! {\n    app bench;\n    target local = local(namespace: \"bench\");\n",
    );
    for i in 0..COUNT {
        let _ = write!(
            src,
            "    deployment web-{i} {{\n        image: \"docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d\",\n        replicas: 2,\n        ports: {{ http: 80 }},\n        ready: http_get(\"/\", port: http),\n        env: {{ INDEX: \"{i}\" }},\n        resources: {{ cpu: \"100m\", memory: \"64Mi\" }},\n    }}\n    service web-{i} -> web-{i} {{ port: 80 => http }}\n"
        );
    }
    src.push_str("}\n");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("app.rs");
    std::fs::write(out, src).expect("write the generated app");
    println!("cargo:rerun-if-changed=build.rs");
}
