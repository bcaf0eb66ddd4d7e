//! Version 2: version 1 with another image.

piceli::app! {
    app probe;
    target local = local(namespace: "probe") { rollback_on_failed_checks: true };

    deployment web {
        image: (::probe::IMAGE_V2),
        ports: { http: 80 },
    }
    service web -> web { port: 80 => http }

    check http(web, "/", expect: 200, retries: 1, timeout: "5s");
}

fn main() -> std::process::ExitCode {
    probe::main()
}
