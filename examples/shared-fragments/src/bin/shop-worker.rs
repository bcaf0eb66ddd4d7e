//! The shop's nightly worker: a CronJob with the same team labels and log shipper as the API.

piceli::app! {
    app shop-worker;
    target local = local(namespace: "shop");
    use shared_fragments::team;

    cron_job report {
        schedule: "0 3 * * *",
        containers: {
            report: {
                image: "docker.io/library/busybox:1.36@sha256:768e5c6f5cb6db0794eec98dc7a967f40631746c32232b78a3105fb946f3ab83",
                command: ["sh", "-c", "echo report >> /logs/app.log"],
                mounts: { "/logs": logs },
            },
            use shared_fragments::log_shipper,
        },
        volumes: { logs: empty_dir() },
    }
}

fn main() -> std::process::ExitCode {
    shop_worker::main()
}
