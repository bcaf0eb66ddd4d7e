//! Version 2 whose containers crash: the local cluster's sim-only `sim.piceli.dev/behavior`
//! annotation on the Deployment is inherited by its pods, which crash-loop, so the rollout never
//! gets ready.

piceli::app! {
    app probe;
    target local = local(namespace: "probe") { rollback_on_failed_checks: true };

    deployment web {
        image: (::probe::IMAGE_V2),
        ports: { http: 80 },
        annotations: { "sim.piceli.dev/behavior": "crash-loop" },
    }
    service web -> web { port: 80 => http }

    check http(web, "/", expect: 200, retries: 1, timeout: "5s");
}

fn main() -> std::process::ExitCode {
    probe::main()
}
