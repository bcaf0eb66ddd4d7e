//! PCL0057: a Service selecting a job's pods; PCL0031: an autoscaler on a cron_job.

piceli::app! {
    app demo;

    job migrate {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        ports: { pg: 5432 },
    }
    cron_job report {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        schedule: "0 3 * * *",
    }

    service migrate -> migrate { port: 5432 => pg }
    autoscaler report -> report { min: 1, max: 3, cpu: 70 }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
