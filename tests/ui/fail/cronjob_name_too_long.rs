//! PCL0002: a CronJob name that is a valid label (56 characters) but too long once Jobs add their 11-character suffix.

piceli::app! {
    app demo;

    cron_job nightly-report-for-the-accounting-department-in-europe {
        schedule: "30 2 * * *",
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
    }
}

fn main() -> std::process::ExitCode {
    demo::main()
}
