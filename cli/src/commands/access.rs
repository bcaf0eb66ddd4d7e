//! `access`: serve the app's declared port forwards on 127.0.0.1 until SIGINT or SIGTERM (exit 0); a taken
//! local port or a bad `--only`/`--port` is refused (exit 2) before anything is served.

use crate::prelude::*;
use crate::session::{block_on, options};
use clap::Args;
use piceli_core::Code;
use piceli_core::model::App;
use piceli_runtime::access::{self, Context, Emit, Event};
use piceli_runtime::engine::session::Session;
use std::sync::Arc;

/// The arguments of `access`.
#[derive(Debug, Args)]
pub struct AccessArgs {
    /// Serve only this forward (a Service name; repeatable).
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,
    /// Listen on another local port for a forward (repeatable), e.g. `--port web=18081`; 0 picks a free one.
    #[arg(long, value_name = "NAME=LOCAL")]
    pub port: Vec<String>,
}

impl Command for AccessArgs {
    const EFFECTS: Effects = Effects {
        touches_cluster: "reads (port forwards to the app's pods)",
        requires_approval: false,
    };

    fn run(&self, invocation: Invocation) -> Result<(), Failure> {
        run(invocation.app, &invocation.global, self)
    }
}

fn printer(json: bool) -> Emit {
    Arc::new(move |e: Event| {
        let line = if json {
            e.to_json().to_string()
        } else {
            e.to_text()
        };
        match e {
            Event::ConnectFailed { .. } if !json => eprintln!("{line}"),
            _ => println!("{line}"),
        }
    })
}

/// Completes on the first SIGINT or SIGTERM (handlers are installed when this is called).
fn shutdown_signal() -> Result<impl std::future::Future<Output = ()>, Failure> {
    let failure = |e: std::io::Error| {
        Failure::new(
            Code::ClusterError,
            format!("cannot install the signal handlers: {e}"),
            "this is a system resource problem".into(),
        )
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt()).map_err(failure)?;
        let mut term = signal(SignalKind::terminate()).map_err(failure)?;
        Ok(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        let _ = failure;
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// Run `access`.
pub fn run(app: App, global: &Global, args: &AccessArgs) -> Result<(), Failure> {
    let specs = access::forwards(&app, &args.only, &args.port).map_err(Failure::from)?;
    let opts = options(global);
    let emit = printer(global.output == Output::Json);
    block_on(async move {
        let shutdown = shutdown_signal()?;
        let bound = access::bind(&specs).await.map_err(Failure::from)?;
        let session = Session::open(app, &opts).await?;
        let namespace = piceli_runtime::status::namespace(&session);
        let cx = Context {
            client: session.conn().client.clone(),
            app: Arc::new(session.into_app()),
            namespace,
        };
        access::serve(cx, bound, emit, shutdown).await;
        Ok(())
    })?
}
