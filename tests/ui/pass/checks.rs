//! Checks of every kind: http, exec, metric and code, named and unnamed, with their options.

mod checks {
    use piceli::checks::{CheckContext, CheckError};

    pub async fn orders_flow(cx: CheckContext) -> Result<(), CheckError> {
        let page = cx.http_get("api", "/orders").await?;
        if page.status != 200 {
            return Err(CheckError::new(format!("status {}", page.status)));
        }
        Ok(())
    }
}

/// Any `Result<(), E: Display>` is a check result.
async fn smoke(cx: piceli::checks::CheckContext) -> Result<(), String> {
    match cx.release() {
        Some(_) => Ok(()),
        None => Err(format!("nothing is live in `{}`", cx.namespace())),
    }
}

piceli::app! {
    app demo;

    deployment api {
        image: "docker.io/library/nginx:1.27@sha256:6784fb0834aa7dbbe12e3d7471e69c290df3e6ba810dc38b34ae33d3c1c05f7d",
        ports: { http: 8000, metrics: 9090 },
    }
    service api -> api { ports: { http: 80 => http, metrics: 9090 => metrics } }

    stateful_set db {
        image: "docker.io/library/postgres:16.4@sha256:4ec37d2a07a0067f176fdcc9d4bb633a5724d2cc4f892c7a2046d054bb6939e5",
        service: db,
        ports: { pg: 5432 },
    }
    service db -> db { port: 5432 => pg, type: headless }

    check http(api, "/", expect: 200, timeout: "5s", retries: 3, interval: "2s");
    check http(api, "/ready", port: http);
    check api-post = http(api, "/orders", method: "POST", body: "{}", expect: 201, port: 80);
    check api-pod = http(api, "/healthz", port: http);
    check exec(db, ["pg_isready", "-U", "postgres"], expect: 0, output: "accepting");
    check metric(api, "/metrics", series: "orders_failed_total", max: 0, port: metrics);
    check metric(api, "/metrics", series: "up", min: 1, max: 1.5);
    check code(checks::orders_flow);
    check smoke-test = code(smoke, timeout: "30s");
}

fn main() -> std::process::ExitCode {
    demo::main()
}
