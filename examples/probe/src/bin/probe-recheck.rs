//! Version 1 with other checks only: deploying it applies nothing and runs its checks.

use ::probe::checks;

piceli::app! {
    app probe;
    target local = local(namespace: "probe") { rollback_on_failed_checks: true };

    deployment web {
        image: (::probe::IMAGE_V1),
        ports: { http: 80 },
    }
    service web -> web { port: 80 => http }

    check front = http(web, "/", expect: 200, retries: 1, timeout: "5s");
    check answers = code(checks::web_answers, retries: 1);
}

fn main() -> std::process::ExitCode {
    probe::main()
}
