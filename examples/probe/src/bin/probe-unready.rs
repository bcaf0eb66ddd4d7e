//! Version 2 with a readiness probe on `/`: while the test maps the web port to a server answering
//! 500, its pods never become ready and the rollout stalls (the DSL has no pod-template annotations,
//! so the local cluster's `crash-loop` behavior cannot be asked for from `app!`).

piceli::app! {
    app probe;
    target local = local(namespace: "probe") { rollback_on_failed_checks: true };

    deployment web {
        image: (::probe::IMAGE_V2),
        ports: { http: 80 },
        ready: http_get("/", port: http),
    }
    service web -> web { port: 80 => http }

    check http(web, "/", expect: 200, retries: 1, timeout: "5s");
}

fn main() -> std::process::ExitCode {
    probe::main()
}
