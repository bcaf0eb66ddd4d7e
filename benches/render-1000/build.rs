//! Generates the benchmark apps: `piceli::app!` invocations with N Deployments and N Services each —
//! 1,000 + 1,000 for the render benchmark (also with `pod:`/`container:`/`spec:` blocks), 15 + 15, 50 + 50 and
//! 500 + 500 and 2,500 + 2,500 for the plan/apply benchmarks.

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

/// The same 1,000 Deployments and Services, each Deployment also with `pod:`, `container:` and `spec:`
/// blocks (security contexts, tolerations, a spread constraint, lifecycle, strategy).
fn app_with_blocks(name: &str, count: usize) -> String {
    let mut src = format!(
        "piceli::app! {{\n    app {name};\n    target local = local(namespace: \"{name}\");\n"
    );
    for i in 0..count {
        let _ = write!(
            src,
            "    deployment web-{i} {{\n        image: \"docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d\",\n        replicas: 2,\n        ports: {{ http: 80 }},\n        ready: http_get(\"/\", port: http),\n        env: {{ INDEX: \"{i}\" }},\n        resources: {{ cpu: \"100m\", memory: \"64Mi\" }},\n        spec: {{ minReadySeconds: 5, revisionHistoryLimit: 3, strategy: {{ type: \"RollingUpdate\", rollingUpdate: {{ maxSurge: 1, maxUnavailable: 0 }} }} }},\n        pod: {{ terminationGracePeriodSeconds: 30, securityContext: {{ runAsNonRoot: true, runAsUser: 1000, seccompProfile: {{ type: \"RuntimeDefault\" }} }}, tolerations: [{{ key: \"dedicated\", operator: \"Equal\", value: \"web\", effect: \"NoSchedule\" }}], topologySpreadConstraints: [{{ maxSkew: 1, topologyKey: \"topology.kubernetes.io/zone\", whenUnsatisfiable: \"ScheduleAnyway\", labelSelector: {{ matchLabels: {{ \"app.kubernetes.io/component\": \"web-{i}\" }} }} }}] }},\n        container: {{ securityContext: {{ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {{ drop: [\"ALL\"] }} }}, lifecycle: {{ preStop: {{ exec: {{ command: [\"sleep\", \"5\"] }} }} }} }},\n    }}\n    service web-{i} -> web-{i} {{ port: 80 => http }}\n"
        );
    }
    src.push_str("}\n");
    src
}

fn main() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    for (file, name, count) in [
        ("app.rs", "bench", 1000),
        ("app_30.rs", "bench-30", 15),
        ("app_100.rs", "bench-100", 50),
        ("app_1000.rs", "bench-1000", 500),
        ("app_5000.rs", "bench-5000", 2500),
    ] {
        std::fs::write(out.join(file), app(name, count)).expect("write the generated app");
    }
    std::fs::write(
        out.join("app_blocks.rs"),
        app_with_blocks("bench-blocks", 1000),
    )
    .expect("write the generated app");
    println!("cargo:rerun-if-changed=build.rs");
}
