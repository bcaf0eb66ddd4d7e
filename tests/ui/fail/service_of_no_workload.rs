//! PCL0088: Services of no workload that the API server would refuse or ignore; PCL0023: an Ingress to a
//! port their `spec: { ports }` lacks. Every problem is reported, each at its token.

piceli::app! {
    app demo;

    service no-name { spec: { type: "ExternalName" } }
    service bad-name { spec: { type: "ExternalName", externalName: "Not_A_Host" } }
    service with-ip { spec: { type: "ExternalName", externalName: "db.example.com", clusterIP: "10.0.0.9" } }
    service ignored { spec: { externalName: "db.example.com", ports: [{ port: 80 }] } }
    service no-ports { spec: { selector: { app: "x" } } }
    service bad-label { spec: { selector: { "-app": "x" }, ports: [{ name: "http", port: 80 }] } }

    ingress edge { paths: { "/": bad-label => metrics } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
