//! NetworkPolicies written with plain label selectors (the selector form): the team's own labels, pods in
//! other namespaces, namespaces, CIDR blocks, port ranges, egress, a default deny, and
//! rules kept as written in the `spec:` block.

piceli::app! {
    app demo;

    deployment db {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        pod_labels: { role: "db" },
        ports: { redis: 6379 },
    }

    network_policy test-network-policy {
        pods: { role: "db" },
        types: ["Ingress", "Egress"],
        ingress: [{
            from: [
                cidr("172.17.0.0/16", except: ["172.17.1.0/24"]),
                namespaces({ project: "myproject" }),
                pods({ role: "frontend" }),
                pods({ "app.kubernetes.io/name": "prometheus" }, namespaces: { team: "ops" }),
            ],
            ports: [port(6379, protocol: "TCP"), "redis"],
        }],
        egress: [{ to: [cidr("10.0.0.0/24")], ports: [port(32000, end: 32768), port(53, protocol: "UDP")] }],
    }
    network_policy default-deny-ingress { pods: {}, types: ["Ingress"] }
    network_policy allow-all-egress { pods: {}, egress: [{}], labels: { tier: "base" } }
    network_policy fd00 {
        pods: { role: "db" },
        ingress: [{ from: [cidr("fd00::/8", except: ["fd00:1::/32"])] }],
        spec: { podSelector: { matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] } },
    }
    // What `piceli import` writes for rules with no first-class form: as written, in `spec:`.
    network_policy expressions {
        pods: { role: "db" },
        types: ["Ingress"],
        spec: {
            ingress: [{
                from: [{ podSelector: { matchExpressions: [{ key: "team", operator: "Exists" }] } }],
                ports: [{ port: 6379 }],
            }],
        },
    }
    network_policy ignored-egress {
        pods: { role: "db" },
        spec: { policyTypes: ["Ingress"], ingress: [], egress: [{}] },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
