//! PCL0030: a CronJob schedule with a minute out of range.

piceli::app! {
    app demo;

    cron_job report {
        schedule: "61 * * * *",
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
