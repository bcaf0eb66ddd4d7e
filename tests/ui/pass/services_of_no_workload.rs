//! Services of no workload, rendered as written: an ExternalName, one selecting pods by their own labels,
//! one without a selector (its Endpoints made by hand), a headless one without ports; an Ingress routes to
//! one by a port of its `spec: { ports }`, by name and by number.

piceli::app! {
    app demo;

    service payments { spec: { type: "ExternalName", externalName: "payments.example.net." } }
    service other-app {
        labels: { tier: "front" },
        spec: { selector: { "app.kubernetes.io/name": "other" }, ports: [{ name: "http", port: 80 }] },
    }
    service legacy { spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }, { port: 8443 }] } }
    service peers { spec: { clusterIP: "None", selector: { app: "peers" } } }

    ingress legacy {
        rules: {
            "legacy.example.com": { "/": legacy => http, "/tls": legacy => 8443 },
            "other.example.com": { "/": other-app },
        },
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
