//! PCL0022: a StatefulSet's governing Service declared without `-> WORKLOAD` (it selects no workload).

piceli::app! {
    app demo;

    stateful_set db {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        service: db,
        ports: { pg: 5432 },
    }

    service db { spec: { clusterIP: "None", ports: [{ port: 5432 }], selector: { app: "db" } } }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
