//! `serve`: run the app's admission webhooks over HTTPS (what the operator's Deployment runs) until SIGTERM
//! or Ctrl-C, finishing the requests in flight. A port that cannot be bound or a certificate that cannot
//! be read is refused (exit 2) before anything is served.

use super::session::block_on;
use crate::exit::{Failure, REJECTED};
use clap::Args;
use piceli_core::Code;
use piceli_runtime::webhook::{self, ServeOptions, Webhooks};

/// The arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on (default 0.0.0.0:8443).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The PEM certificate chain (default /etc/piceli/tls/tls.crt, the mounted TLS Secret); reloaded
    /// when it changes.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key (default /etc/piceli/tls/tls.key).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<std::path::PathBuf>,
}

/// What `serve` does to the cluster, for `help-json`.
pub const EFFECTS: super::Effects = super::Effects {
    touches_cluster: "none (serves the app's admission webhooks; the cluster calls it)",
    requires_approval: false,
};

/// Run `serve` with the app's webhooks.
pub fn run(webhooks: Webhooks, args: &ServeArgs) -> Result<(), Failure> {
    let defaults = ServeOptions::default();
    let options = ServeOptions {
        listen: args.listen.unwrap_or(defaults.listen),
        tls_cert: args.tls_cert.clone().unwrap_or(defaults.tls_cert.clone()),
        tls_key: args.tls_key.clone().unwrap_or(defaults.tls_key.clone()),
        ..defaults
    };
    if webhooks.paths().is_empty() {
        return Err(Failure {
            code: Code::ServeFailed,
            message: "this app declares no webhooks to serve".into(),
            help: "declare `validate`/`mutate` items and an `operator` in `app!` (see docs/webhooks.md)"
                .into(),
            exit: REJECTED,
        });
    }
    block_on(async move {
        let server = webhook::Server::bind(webhooks, options)
            .await
            .map_err(Failure::from)?;
        eprintln!("serving webhooks on https://{}", server.local_addr());
        server
            .run(webhook::shutdown_signal())
            .await
            .map_err(Failure::from)
    })?
}
