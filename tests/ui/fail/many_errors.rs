//! Several problems in one app are all reported in one build, each with its own code and span.

piceli::app! {
    app demo;

    deployment web {
        image: "docker.io/library/nginx:1.27",
        replica: 2,
        ports: { http: 80 },
        resources: { memory: "512m" },
    }

    service web -> web { port: 80 => htp }

    secret api { token: "hunter2" }

    cron_job report {
        schedule: "61 * * * *",
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
