//! Writes N objects of a realistic mix (Deployment + Service + ConfigMap per tier, every fourth with a
//! Secret) as multi-document YAML to stdout, for the import benchmark (docs/benchmarks.md):
//! `cargo run -p piceli-import --example bench_input -- 1000 > bench-1000.yaml`.

use std::fmt::Write;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let mut out = String::new();
    let mut made = 0;
    let mut i = 0;
    while made < n {
        let name = format!("tier-{i}");
        let _ = write!(
            out,
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  labels: {{team: t{t}}}\n\
             spec:\n  replicas: 2\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      \
             labels: {{app: {name}}}\n    spec:\n      containers:\n      - name: {name}\n        \
             image: ghcr.io/example/{name}:1.{i}.0\n        ports:\n        - {{name: http, containerPort: 8080}}\n        \
             env:\n        - {{name: MODE, value: prod}}\n        resources:\n          requests: {{cpu: 100m, memory: 128Mi}}\n        \
             readinessProbe:\n          httpGet: {{path: /ready, port: http}}\n---\n",
            t = i % 7
        );
        made += 1;
        if made < n {
            let _ = write!(
                out,
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  selector: {{app: {name}}}\n  \
                 ports:\n  - {{name: http, port: 80, targetPort: http}}\n---\n"
            );
            made += 1;
        }
        if made < n {
            let _ = write!(
                out,
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-settings\ndata:\n  LOG_LEVEL: info\n  \
                 app.conf: |\n    listen 8080\n    workers 4\n---\n"
            );
            made += 1;
        }
        if made < n && i % 4 == 0 {
            let _ = write!(
                out,
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}-db\ntype: Opaque\ndata:\n  password: c2VjcmV0\n---\n"
            );
            made += 1;
        }
        i += 1;
    }
    print!("{out}");
}
