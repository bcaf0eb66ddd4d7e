//! Every kind of check, one that passes and one that fails against what the test serves: http, exec
//! (the local cluster's built-in `true`, `false` and `echo`), metric (the test's scrape) and code.

use ::probe::checks;

piceli::app! {
    app probe;
    target local = local(namespace: "probe");

    deployment web {
        image: (::probe::IMAGE_V1),
        ports: { http: 80, metrics: 9090 },
    }
    service web -> web { ports: { http: 80 => http, metrics: 9090 => metrics } }

    check http-ok = http(web, "/", expect: 200, retries: 1);
    check http-bad = http(web, "/", expect: 204, retries: 1);
    check exec-ok = exec(web, ["true"], expect: 0, retries: 1);
    check exec-bad = exec(web, ["false"], expect: 0, retries: 2, interval: "100ms");
    check exec-output = exec(web, ["echo", "accepting connections"], expect: 0, output: "accepting", retries: 1);
    check exec-quiet = exec(web, ["echo", "rejecting"], expect: 0, output: "accepting", retries: 1);
    check metric-ok = metric(web, "/metrics", series: "up{job=\"web\"}", min: 1, port: metrics, retries: 1);
    check metric-bad = metric(web, "/metrics", series: "errors_total", max: 0, port: metrics, retries: 1);
    check code-ok = code(checks::web_answers, retries: 1);
    check code-bad = code(checks::welcome_page, retries: 1);
}

fn main() -> std::process::ExitCode {
    probe::main()
}
