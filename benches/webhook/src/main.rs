//! The webhook benchmark's server: piceli's `serve` with one validating webhook, `/validate/no-latest-tag`,
//! which reads the AdmissionReview into a typed `Request<Deployment>` and denies images tagged `:latest` or
//! untagged — the same check as the harness's static responder.
//!
//! Usage: `webhook-bench CERT KEY [ADDR]` (ADDR defaults to 127.0.0.1:9444; loopback only). Stops on
//! SIGTERM or Ctrl-C, finishing in-flight requests.

use std::net::SocketAddr;
use std::process::ExitCode;

use k8s_openapi::api::apps::v1::Deployment;
use piceli_runtime::Coded;
use piceli_runtime::webhook::{Request, ServeOptions, Verdict, Webhooks, serve};

/// Denies the first image tagged `:latest` or without a tag.
async fn no_latest_tag(req: Request<Deployment>) -> Verdict {
    let pod = req
        .object()
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref());
    let images = pod.map(|p| p.containers.iter().filter_map(|c| c.image.as_deref()));
    for image in images.into_iter().flatten() {
        let last = image.rsplit('/').next().unwrap_or(image);
        if image.ends_with(":latest") || !last.contains(':') {
            return Verdict::deny(format!("image {image:?} uses :latest tag"));
        }
    }
    Verdict::allow()
}

// One worker thread, as `serve` runs by default (`--workers`).
#[tokio::main(worker_threads = 1)]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(cert), Some(key)) = (args.first(), args.get(1)) else {
        eprintln!("usage: webhook-bench CERT KEY [ADDR]");
        return ExitCode::from(2);
    };
    let listen: SocketAddr = match args
        .get(2)
        .map_or(Ok(([127, 0, 0, 1], 9444).into()), |a| a.parse())
    {
        Ok(addr) => addr,
        Err(e) => {
            eprintln!("ADDR: {e}");
            return ExitCode::from(2);
        }
    };
    if !listen.ip().is_loopback() {
        eprintln!("ADDR must be a loopback address");
        return ExitCode::from(2);
    }
    let options = ServeOptions {
        listen,
        tls_cert: cert.into(),
        tls_key: key.into(),
        ..ServeOptions::default()
    };
    let hooks = Webhooks::new().validate("no-latest-tag", no_latest_tag);
    match serve(hooks, options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}\n  help: {}", e.help());
            ExitCode::FAILURE
        }
    }
}
